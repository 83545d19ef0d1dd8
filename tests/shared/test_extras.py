"""The optional dependencies' table: each one's extra is declared in setup.py with its package, and the one line."""
import ast
import pathlib
import re

import pytest

from kopf._shared import extras

ROOT = pathlib.Path(__file__).parent.parent.parent


def _declared_extras() -> dict[str, list[str]]:
    tree = ast.parse((ROOT / 'setup.py').read_text())
    call = next(node for node in ast.walk(tree)
                if isinstance(node, ast.Call) and getattr(node.func, 'id', '') == 'setup')
    found: dict[str, list[str]] = ast.literal_eval(next(k.value for k in call.keywords if k.arg == 'extras_require'))
    return found


@pytest.mark.parametrize('dependency', [d for d in extras.ALL if d.extra], ids=lambda d: f'{d.extra}:{d.package}')
def test_each_extra_installs_its_package(dependency: extras.Dependency) -> None:
    requirements = _declared_extras()[dependency.extra]
    assert dependency.package in {re.split(r'[<>=\[]', requirement)[0] for requirement in requirements}


def test_the_install_page_says_what_needs_each() -> None:
    text = (ROOT / 'docs' / 'install.md').read_text()
    for dependency in extras.ALL:
        assert f'`{dependency.package}`' in text, dependency


@pytest.mark.parametrize('args, kwargs, line', [
    ((extras.METRICS,), {},
     'Prometheus metrics (--metrics, settings.metrics) needs prometheus-client: pip install "kopf[metrics]" '
     '(or pip install prometheus-client).'),
    ((extras.UVLOOP,), {'otherwise': 'run with --no-uvloop'},
     '--uvloop needs uvloop: pip install "kopf[uvloop]" (or run with --no-uvloop).'),
    ((extras.KUBERNETES_ASYNCIO,), {},
     'kopf.login_via_async_client() needs kubernetes_asyncio: pip install kubernetes_asyncio.'),
    ((extras.NGROK,), {'what': 'kopf.WebhookNgrokTunnel'},
     'kopf.WebhookNgrokTunnel needs pyngrok: pip install "kopf[dev]" (or pip install pyngrok).'),
    ((extras.WEBHOOK_CERTIFICATES, extras.NGROK), {'what': 'X'},
     'X needs cryptography or pyngrok: pip install "kopf[webhooks]" or pip install "kopf[dev]" '
     '(or pip install cryptography or pip install pyngrok).'),
])
def test_the_line(args: tuple[extras.Dependency, ...], kwargs: dict[str, str], line: str) -> None:
    assert extras.needs(*args, **kwargs) == line
