"""Auth through a whole operator: a real `@kopf.on.login()` handler, the emulator's token rotated mid-run,
and a login that keeps returning tokens the server rejects."""
import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

import kopf
from kopf._engine.running import OperatorError
from kopf.testing import LocalCluster

from ..waiting import eventually
from .conftest import CRD


def settings() -> kopf.OperatorSettings:
    fast = kopf.OperatorSettings()
    # No request timeout: looptime fast-forwards to the nearest timer when nothing is ready in the loop,
    # and it would do so even while bytes are still in flight on loopback (slow under CPU load): a
    # 300-s timer of a request would then fire at once, and the request would be retried or failed.
    fast.networking.request_timeout = None
    fast.networking.error_backoffs = (0.1, 0.2)
    fast.watching.reconnect_backoff = 0.05
    return fast


@pytest.fixture
async def rotating(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[LocalCluster]:
    async with LocalCluster(tls=True, tokens={'token-1': 'operator'}) as local:
        local.apply(str(CRD))
        monkeypatch.setenv('KUBECONFIG', str(local.kubeconfig))
        yield local


def kex(name: str) -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': name, 'namespace': 'default'},
            'spec': {}}


@pytest.mark.looptime
async def test_operator_survives_a_token_rotation(rotating: LocalCluster) -> None:
    registry = kopf.OperatorRegistry()
    logins: list[str | None] = []
    seen: list[tuple[str, str]] = []

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo | None:
        info = kopf.login_with_kubeconfig()
        logins.append(info.token if info is not None else None)
        return info

    @kopf.on.event('kopfexamples', registry=registry)
    def spy(body: kopf.Body, **_: Any) -> None:
        seen.append((body.metadata.uid or '', str(body.metadata['resourceVersion'])))

    rotating.apply(kex('before'))
    stop, ready = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(kopf.operator(registry=registry, settings=settings(), clusterwide=True,
                                             stop_flag=stop, ready_flag=ready))
    try:
        await eventually(lambda: len(seen) == 1 or task.done())
        assert logins == ['token-1']

        rotating.rotate_token('token-1', 'token-2')   # the control API: token-1 is refused from now on
        rotating.apply(kex('during'))
        rotating.close_watches()   # as the server's watch timeout would: the watches re-open with token-1
        await eventually(lambda: len(seen) == 2 or task.done())
        rotating.apply(kex('after'))
        await eventually(lambda: len(seen) == 3 or task.done())
        rotating.apply(kex('sentinel'))   # seen after anything duplicated of the earlier ones would be
        await eventually(lambda: len(seen) >= 4 or task.done())
        assert not task.done()
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, timeout=10)

    assert logins == ['token-1', 'token-2']   # the login handler ran once for the rotation
    kexes = {obj['metadata']['uid'] for obj in rotating.list('kopf.dev/v1', 'kopfexamples', 'default')}
    assert seen == [(uid, version) for uid, version, _ in rotating.event_log() if uid in kexes]
    refused = [entry for entry in rotating.request_log() if entry['code'] == 401]
    assert refused   # the rotation was noticed by a 401, not side-stepped


@pytest.mark.looptime
async def test_operator_gives_up_on_tokens_that_are_always_rejected(rotating: LocalCluster) -> None:
    registry = kopf.OperatorRegistry()
    calls = 0
    assert rotating.emulator.certificates is not None
    ca_data = rotating.emulator.certificates.ca_pem

    @kopf.on.login(registry=registry)
    def login(**_: Any) -> kopf.ConnectionInfo:
        nonlocal calls
        calls += 1
        return kopf.ConnectionInfo(server=rotating.url, ca_data=ca_data, token=f'fresh-but-wrong-{calls}')

    # Not `asyncio.wait_for(..., timeout=60)`: under load, looptime would fast-forward to that timer while
    # a TLS handshake with the emulator (in this same loop) is still in flight on loopback.
    task = asyncio.create_task(kopf.operator(registry=registry, settings=settings(), clusterwide=True))
    try:
        await eventually(task.done)
    finally:
        task.cancel()
    with pytest.raises(OperatorError, match=r'Cannot log in to the cluster: .* rejected \(401\)'):
        await task
    assert calls == 5   # the first login and four more after the vault's grace delays, then no more
    assert [entry['code'] for entry in rotating.request_log()] == [401] * 5
