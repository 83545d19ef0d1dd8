"""`kopf cluster --tls` without the optional `cryptography` package: one clear error, no traceback."""
import asyncio
import pathlib
import sys

import pytest

from kopf._cluster.control import command


def test_tls_without_cryptography_is_a_clear_startup_error(tmp_path: pathlib.Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [name for name in sys.modules if name == 'cryptography' or name.startswith('cryptography.')]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, 'cryptography', None)  # an import of it raises ImportError
    expected = (r'HTTPS mode \(--tls, --tls-san, LocalCluster\(tls=True\)\) needs cryptography: '
                r'pip install "kopf\[cluster\]"')
    with pytest.raises(command.StartupError, match=expected):
        asyncio.run(command.serve('127.0.0.1', 0, str(tmp_path / 'kubeconfig'), [], tls=True))
    assert not (tmp_path / 'kubeconfig').exists()
