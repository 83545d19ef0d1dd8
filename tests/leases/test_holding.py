"""The Lease's namespace: `--lease-namespace`, else `$POD_NAMESPACE`, else the context's, else `default`; its expiry."""
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


class Pausing:
    def pause(self, *_: Any, **__: Any) -> None:
        pass


def elector(monkeypatch: pytest.MonkeyPatch, *, pauses: bool) -> tuple[holding.Elector, list[int]]:
    """An Elector that is not leading while a sync handler runs; the signals it would send, recorded."""
    settings = kopf.OperatorSettings()
    ctx = types.SimpleNamespace(settings=settings, pausing=Pausing())
    killed: list[int] = []
    monkeypatch.setattr(holding.os, 'kill', lambda pid, sig: killed.append(sig))
    monkeypatch.setattr(holding.invoking, 'threads_busy', lambda: 1)
    return holding.Elector(ctx, 'name', 'ns', 'me', pauses=pauses), killed  # type: ignore[arg-type]


def test_a_lease_that_pauses_expires_with_a_sync_handler_running_kills(monkeypatch: pytest.MonkeyPatch) -> None:
    lease, killed = elector(monkeypatch, pauses=True)
    lease.expire()
    assert killed == [holding.signal.SIGKILL]


def test_a_membership_lease_expiring_kills_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A shard member's Lease pauses nothing (the shards' own Leases do): its expiry lets nobody overlap us."""
    lease, killed = elector(monkeypatch, pauses=False)
    lease.expire()
    assert killed == []
