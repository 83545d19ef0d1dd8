"""The emulator's side of auth: bearer tokens rotated or revoked through the control API (Python and HTTP)."""
import asyncio
import json
import pathlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
import yaml

from kopf.testing import LocalCluster

NAMESPACES = '/api/v1/namespaces'
SECRETS = '/api/v1/namespaces/default/secrets'


@pytest.fixture
async def cluster() -> AsyncIterator[LocalCluster]:
    async with LocalCluster(tokens={'t1': 'alice', 'other': 'bob'}) as local:
        yield local


async def _get(cluster: LocalCluster, path: str, token: str | None) -> tuple[int, Any]:
    headers = {'Authorization': f'Bearer {token}'} if token else {}
    async with aiohttp.ClientSession() as session, session.get(cluster.url + path, headers=headers) as response:
        return response.status, await response.json(content_type=None)


async def _control(cluster: LocalCluster, body: Any) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as session, \
            session.post(f'{cluster.url}/_emulator/tokens', data=json.dumps(body)) as response:
        return response.status, await response.json()


def _kubeconfig_token(cluster: LocalCluster) -> str | None:
    config = yaml.safe_load(pathlib.Path(cluster.kubeconfig).read_text())
    token = config['users'][0]['user'].get('token')
    return str(token) if token is not None else None


async def test_rotation_refuses_the_old_token_and_keeps_the_user(cluster: LocalCluster) -> None:
    cluster.forbid('list', 'secrets', user='alice')
    assert (await _get(cluster, NAMESPACES, 't1'))[0] == 200
    cluster.rotate_token('t1', 't2')
    status, body = await _get(cluster, NAMESPACES, 't1')
    assert (status, body['reason']) == (401, 'Unauthorized')
    assert (await _get(cluster, NAMESPACES, 't2'))[0] == 200
    status, body = await _get(cluster, SECRETS, 't2')   # still alice: her denial applies
    assert status == 403 and 'User "alice" cannot list' in body['message']
    assert (await _get(cluster, NAMESPACES, 'other'))[0] == 200   # other tokens are untouched


async def test_rotation_rewrites_the_kubeconfig(cluster: LocalCluster) -> None:
    assert _kubeconfig_token(cluster) == 't1'
    cluster.rotate_token('t1', 't2')
    assert _kubeconfig_token(cluster) == 't2'
    cluster.rotate_token('other', 'b2')   # not the kubeconfig's token: it stays first
    assert _kubeconfig_token(cluster) == 't2'


async def test_revocation(cluster: LocalCluster) -> None:
    cluster.rotate_token('t1', None)
    assert (await _get(cluster, NAMESPACES, 't1'))[0] == 401
    assert _kubeconfig_token(cluster) == 'other'
    cluster.rotate_token('other', None)
    assert (await _get(cluster, NAMESPACES, 'other'))[0] == 401   # no tokens left: nobody gets in
    assert (await _get(cluster, NAMESPACES, None))[0] == 401
    assert _kubeconfig_token(cluster) is None


async def test_unknown_and_clashing_tokens_are_refused(cluster: LocalCluster) -> None:
    with pytest.raises(ValueError, match='no such token'):
        cluster.rotate_token('nope', 'x')
    with pytest.raises(ValueError, match='already in use'):
        cluster.rotate_token('t1', 'other')
    with pytest.raises(ValueError, match='empty'):
        cluster.rotate_token('t1', '')
    assert (await _get(cluster, NAMESPACES, 't1'))[0] == 200


async def test_rotation_over_http(cluster: LocalCluster) -> None:
    assert await _control(cluster, {'old': 't1', 'new': 't2'}) == (200, {'ok': True})   # no token needed
    assert (await _get(cluster, NAMESPACES, 't1'))[0] == 401
    assert (await _get(cluster, NAMESPACES, 't2'))[0] == 200
    assert await _control(cluster, {'old': 't2', 'new': None}) == (200, {'ok': True})
    assert (await _get(cluster, NAMESPACES, 't2'))[0] == 401
    assert (await _control(cluster, {'old': 't2', 'new': 't3'}))[0] == 400   # gone
    assert (await _control(cluster, {'new': 't3'}))[0] == 400
    assert (await _control(cluster, {'old': 'other', 'new': 5}))[0] == 400


async def test_open_watches_survive_a_rotation(cluster: LocalCluster) -> None:
    """As on a real server: authentication happens when a request starts, not for every event."""
    headers = {'Authorization': 'Bearer t1'}
    async with aiohttp.ClientSession() as session, \
            session.get(f'{cluster.url}/api/v1/namespaces/default/configmaps?watch=true'
                        '&fieldSelector=metadata.name%3Dafter', headers=headers) as response:
        assert response.status == 200
        cluster.rotate_token('t1', 't2')
        cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'after'}})
        async with asyncio.timeout(10):
            line = await response.content.readline()
        event = json.loads(line)
        assert (event['type'], event['object']['metadata']['name']) == ('ADDED', 'after')
