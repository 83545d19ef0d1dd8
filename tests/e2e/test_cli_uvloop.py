"""`kopf run --uvloop/--no-uvloop`: the operator's loop is uvloop's (when installed) or asyncio's own."""
import importlib.util
import pathlib
from collections.abc import Iterator

import pytest

import kopf
from kopf.testing import KopfRunner

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from .conftest import CRD, example, fast_settings

HANDLERS = '''
import asyncio
import kopf

@kopf.on.create('kopfexamples')
async def create_fn(**_):
    return {'loop': type(asyncio.get_running_loop()).__module__}
'''


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:  # in its own thread: the operator runs in another
    with backends.cluster(request) as running:
        running.apply(str(CRD))
        yield running


UVLOOP = pytest.mark.skipif(importlib.util.find_spec('uvloop') is None, reason='uvloop is not installed')


@pytest.mark.parametrize('flags, module', [
    (('--no-uvloop',), 'asyncio.unix_events'),
    pytest.param(('--uvloop',), 'uvloop', marks=UVLOOP),
    pytest.param((), 'uvloop', marks=UVLOOP),  # the default: uvloop when it is installed
], ids=['off', 'on', 'default'])
def test_the_loop_of_kopf_run(cluster: Cluster, tmp_path: pathlib.Path, flags: tuple[str, ...], module: str) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    with KopfRunner(['run', '-A', *flags, str(path)], cluster=cluster, registry=kopf.OperatorRegistry(),
                    settings=fast_settings(), timeout=30) as runner:
        assert runner.wait_ready(20)
        cluster.apply(example())
        found = wait_for(lambda: ((cluster.get('kopf.dev/v1', 'KopfExample', 'kopf-example-1', 'default') or {})
                                  .get('status') or {}).get('create_fn'))
    assert found == {'loop': module}
    assert runner.exit_code == 0
