"""Malformed JSON-patches over HTTP: a real API server's 422 (or 400) with a Status body, never a 500."""
from typing import Any

import aiohttp
import pytest

from kopf.testing import LocalCluster

URL = '/api/v1/namespaces/default/configmaps/cm'


@pytest.mark.parametrize('payload, code', [
    ([{'op': ['add'], 'path': '/data/x', 'value': '1'}], 422),   # an unhashable op: was a 500 (TypeError)
    ([{'op': {'add': 1}, 'path': '/data/x', 'value': '1'}], 422),
    ([{'op': 'add', 'path': 5, 'value': '1'}], 422),
    ([{'op': 'add', 'path': ['data', 'x'], 'value': '1'}], 422),
    ([{'op': 'add', 'path': '/data/x'}], 422),   # no value
    ([{'op': 'replace', 'path': '/data/a'}], 422),
    ([{'path': '/data/x', 'value': '1'}], 422),   # no op
    ([{'op': 'add', 'path': 'data/x', 'value': '1'}], 422),   # not a pointer
    ([{'op': 'replace', 'path': '/data/zz', 'value': '1'}], 422),   # a missing target
    ([5], 422),
    ({'op': 'add'}, 400),   # not a list
])
async def test_malformed_json_patch_answers_a_status(local_cluster: LocalCluster, payload: Any, code: int) -> None:
    local_cluster.apply({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'cm', 'namespace': 'default'},
                         'data': {'a': 'b'}})
    async with aiohttp.ClientSession() as session:
        async with session.patch(local_cluster.url + URL, json=payload,
                                 headers={'Content-Type': 'application/json-patch+json'}) as response:
            status = await response.json(content_type=None)
    assert response.status == code
    assert status['kind'] == 'Status' and status['code'] == code and status['status'] == 'Failure'
    assert (local_cluster.get('v1', 'ConfigMap', 'cm', 'default') or {})['data'] == {'a': 'b'}  # nothing applied
