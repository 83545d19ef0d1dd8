"""`kopf.testing.KopfRunner`: the CLI in a thread against a LocalCluster (no environment variables)."""
import json
import os
import pathlib
from typing import Any

import pytest

import kopf
from kopf._engine import loading
from kopf.testing import KopfRunner

from .. import backends
from ..backends import Cluster
from ..waiting import wait_for
from .conftest import CRD

kopf_local_cluster = backends.kopf_local_cluster  # kopf.testing's fixture (as a user's conftest imports it) or envtest

HANDLERS = '''
import kopf

@kopf.on.create('kopfexamples')
def create_fn(spec, logger, **_):
    logger.info('Something was logged here.')
    return {'message': f"created with {spec['field']}"}
'''



def example(name: str = 'kopf-example-1') -> dict[str, Any]:
    return {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
            'metadata': {'name': name, 'namespace': 'default'}, 'spec': {'field': 'value'}}


def status_of(cluster: Cluster, name: str = 'kopf-example-1') -> Any:
    return (cluster.get('kopf.dev/v1', 'KopfExample', name, 'default') or {}).get('status')


def test_runner_against_a_local_cluster_without_environ(kopf_local_cluster: Cluster, tmp_path: pathlib.Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBECONFIG', str(tmp_path / 'must-not-be-used'))
    environ = dict(os.environ)
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    registry = kopf.OperatorRegistry()
    kopf_local_cluster.apply(str(CRD))
    with KopfRunner(['run', '-A', '--verbose', str(path)], cluster=kopf_local_cluster, registry=registry,
                    timeout=20) as runner:
        assert runner.wait_ready(timeout=20)
        kopf_local_cluster.apply(example())
        assert wait_for(lambda: status_of(kopf_local_cluster)) == {'create_fn': {'message': 'created with value'}}
    assert dict(os.environ) == environ
    assert runner.exit_code == 0, runner.output
    assert runner.exception is None
    assert 'Something was logged here.' in runner.output
    assert 'Something was logged here.' in runner.stderr
    assert runner.future.done()
    assert [h.id for h in registry.handlers] == ['create_fn']  # the file's handlers went into the given registry


def test_runner_reraises_an_import_error_within_its_timeout(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'broken.py'
    path.write_text('import kopf\nimport no_such_module_at_all\n')
    with pytest.raises(loading.LoadingError) as err:  # not TimeoutError: the runner did not hang
        with KopfRunner(['run', '-A', str(path)], timeout=10) as runner:
            assert not runner.wait_ready(timeout=10)
    assert isinstance(err.value.__cause__, ImportError)
    assert runner.exit_code == 1
    assert 'no_such_module_at_all' in runner.stderr


def test_runner_without_reraise_exposes_the_error(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'broken.py'
    path.write_text('raise ImportError("boom")\n')
    with KopfRunner(['run', '-A', str(path)], reraise=False, timeout=10) as runner:
        pass
    assert runner.exit_code == 1
    assert isinstance(runner.exception, SystemExit)
    assert 'Error: Cannot load' in runner.output and 'boom' in runner.output
    assert runner.exc_info is not None


def test_runner_raises_when_the_operator_does_not_stop_in_time(kopf_local_cluster: Cluster,
                                                              tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'stuck.py'
    path.write_text('import kopf, time\n\n@kopf.on.cleanup()\ndef stuck(**_):\n    time.sleep(1.5)\n')
    with pytest.raises(TimeoutError, match=r'did not stop within 0\.2 seconds'):
        with KopfRunner(['run', '-A', str(path)], cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(),
                        timeout=0.2) as runner:
            assert runner.wait_ready(timeout=20)
    runner._thread.join(timeout=10)  # type: ignore[union-attr]  # let it finish, not to leak into other tests


def test_json_logs_parse_line_by_line_and_carry_the_object(kopf_local_cluster: Cluster,
                                                                       tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text(HANDLERS)
    kopf_local_cluster.apply(str(CRD))
    with KopfRunner(['run', '-A', '--log-format', 'json', '--log-refkey', 'k8s', str(path)],
                    cluster=kopf_local_cluster, registry=kopf.OperatorRegistry(), timeout=20) as runner:
        assert runner.wait_ready(timeout=20)
        kopf_local_cluster.apply(example())
        wait_for(lambda: status_of(kopf_local_cluster))
    lines = [line for line in runner.stderr.splitlines() if line.strip()]
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    logged = next(r for r in records if r['message'] == 'Something was logged here.')
    assert logged['k8s']['namespace'] == 'default'
    assert logged['k8s']['name'] == 'kopf-example-1'
    assert logged['severity'] == 'info'
    assert 'handler' not in logged and 'logger' not in logged  # field for field as upstream 1.45.2
    assert not logged['message'].startswith('[')  # no prefix in JSON by default
    succeeded = next(r for r in records if r['message'] == "Handler 'create_fn' succeeded.")
    assert succeeded['k8s']['name'] == 'kopf-example-1'
