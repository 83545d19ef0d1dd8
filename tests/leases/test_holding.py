"""The Lease's namespace: `--lease-namespace`, else `$POD_NAMESPACE`, else the context's, else `default`."""
import types
from typing import Any

import pytest

import kopf
from kopf._leases import holding


class Client:
    def __init__(self, namespace: str | None = None, error: Exception | None = None) -> None:
        self.namespace, self.error = namespace, error

    async def default_namespace(self) -> str | None:
        if self.error is not None:
            raise self.error
        return self.namespace


def ctx(client: Client, namespace: str | None = None) -> Any:
    settings = kopf.OperatorSettings()
    settings.peering.lease.namespace = namespace
    return types.SimpleNamespace(settings=settings, client=client)


@pytest.mark.parametrize('configured, pod_namespace, context, error, expected', [
    ('flag-ns', 'pod-ns', 'ctx-ns', None, 'flag-ns'),               # --lease-namespace first
    (None, 'pod-ns', 'ctx-ns', None, 'pod-ns'),                     # then $POD_NAMESPACE
    (None, None, 'ctx-ns', None, 'ctx-ns'),                         # then the kubeconfig context's
    (None, None, None, None, 'default'),                            # then `default`
    (None, None, None, RuntimeError('no credentials yet'), 'default'),
])
async def test_the_lease_namespace(monkeypatch: pytest.MonkeyPatch, configured: str | None,
                                   pod_namespace: str | None, context: str | None, error: Exception | None,
                                   expected: str) -> None:
    if pod_namespace is None:
        monkeypatch.delenv('POD_NAMESPACE', raising=False)
    else:
        monkeypatch.setenv('POD_NAMESPACE', pod_namespace)
    assert await holding.resolve_namespace(ctx(Client(context, error), configured)) == expected
