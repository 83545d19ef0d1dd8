"""`kopf run --install-crds`: the CRDs of the loaded resource classes are created, updated, or kept, each with a
log line; a version that the cluster still stores is never dropped; the operator's resource is then served."""
import pathlib
import textwrap
from collections.abc import Iterator

import pytest

import kopf
from kopf.testing import KopfRunner

from .. import backends
from ..backends import Cluster
from .conftest import fast_settings

CRD = ('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.install.kopf.dev')
MODELS = '''
import kopf
from pydantic import BaseModel


class WidgetSpec(BaseModel):
    size: int = 1
{more}

@kopf.custom_resource('install.kopf.dev', '{version}', kind='Widget', storage=True)
class Widget(BaseModel):
    spec: WidgetSpec = WidgetSpec()


@kopf.on.create('install.kopf.dev', '{version}', 'widgets')
def create_fn(**_):
    pass
'''


@pytest.fixture
def cluster(request: pytest.FixtureRequest) -> Iterator[Cluster]:
    with backends.cluster(request) as running:
        yield running


def operator(tmp_path: pathlib.Path, cluster: Cluster, *, more: str = '', version: str = 'v1',
             name: str = 'operator.py', reraise: bool = True) -> KopfRunner:
    path = tmp_path / name
    path.write_text(MODELS.format(more=textwrap.indent(more, '    '), version=version))
    return KopfRunner(['run', '-A', '--standalone', '--install-crds', str(path)], cluster=cluster,
                      registry=kopf.OperatorRegistry(), settings=fast_settings(), timeout=30, reraise=reraise)


def test_the_crds_are_created_then_updated_then_kept(tmp_path: pathlib.Path, cluster: Cluster) -> None:
    with operator(tmp_path, cluster) as first:
        assert first.wait_ready(20)
    assert 'Created the CRD widgets.install.kopf.dev (versions: v1).' in first.output
    crd = cluster.get(*CRD)
    assert crd is not None
    assert list(crd['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['spec']['properties']) == ['size']

    with operator(tmp_path, cluster, more='colour: str = "red"', name='second.py') as second:
        assert second.wait_ready(20)
    assert 'Updated the CRD widgets.install.kopf.dev (versions: v1).' in second.output
    crd = cluster.get(*CRD)
    assert crd is not None
    schema = crd['spec']['versions'][0]['schema']['openAPIV3Schema']['properties']['spec']
    assert sorted(schema['properties']) == ['colour', 'size']   # kube-apiserver sorts them

    with operator(tmp_path, cluster, more='colour: str = "red"', name='third.py') as third:
        assert third.wait_ready(20)
        cluster.apply({'apiVersion': 'install.kopf.dev/v1', 'kind': 'Widget', 'metadata': {'name': 'w1'}})
    assert 'The CRD widgets.install.kopf.dev is up to date (versions: v1).' in third.output
    assert cluster.get('install.kopf.dev/v1', 'Widget', 'w1', 'default')['spec'] == {'size': 1, 'colour': 'red'}


def test_a_stored_version_is_never_dropped(tmp_path: pathlib.Path, cluster: Cluster) -> None:
    with operator(tmp_path, cluster) as first:
        assert first.wait_ready(20)
    cluster.apply({'apiVersion': 'install.kopf.dev/v1', 'kind': 'Widget', 'metadata': {'name': 'w1'}})

    with operator(tmp_path, cluster, version='v2', name='second.py', reraise=False) as second:
        second.future.result(timeout=30)   # it stops at once: nothing is dropped
    assert second.exit_code == 1
    assert ('The CRD widgets.install.kopf.dev still stores objects in v1 (status.storedVersions), which the models '
            'no longer declare') in second.output
    crd = cluster.get(*CRD)
    assert crd is not None and [v['name'] for v in crd['spec']['versions']] == ['v1']


def test_no_resource_classes_is_an_error(tmp_path: pathlib.Path, cluster: Cluster) -> None:
    path = tmp_path / 'operator.py'
    path.write_text('import kopf\n\n@kopf.on.create("pods")\ndef fn(**_): pass\n')
    runner = KopfRunner(['run', '-A', '--standalone', '--install-crds', str(path)], cluster=cluster,
                        registry=kopf.OperatorRegistry(), timeout=30, reraise=False)
    with runner:
        runner.future.result(timeout=30)
    assert runner.exit_code == 1
    assert '--install-crds: the loaded code declares no resource classes' in runner.output


def test_a_resource_class_named_by_a_handler_is_installed_too(tmp_path: pathlib.Path, cluster: Cluster) -> None:
    """A resource class imported from a module loaded before (not declared anew, not in the file's namespace)."""
    (tmp_path / 'gizmomodels.py').write_text(
        'import kopf\nfrom pydantic import BaseModel\n\n'
        '@kopf.custom_resource("install.kopf.dev", "v1", kind="Gizmo")\n'
        'class Gizmo(BaseModel):\n    spec: dict = {}\n')
    path = tmp_path / 'gizmos.py'
    path.write_text('import kopf\nimport gizmomodels\n\n'
                    '@kopf.on.create(gizmomodels.Gizmo)\ndef fn(**_): pass\n')
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        import gizmomodels  # noqa: F401  # imported before: `kopf run` loading the file declares nothing anew
        runner = KopfRunner(['run', '-A', '--standalone', '--install-crds', str(path)], cluster=cluster,
                            registry=kopf.OperatorRegistry(), settings=fast_settings(), timeout=30)
        with runner:
            assert runner.wait_ready(20)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop('gizmomodels', None)
    assert 'Created the CRD gizmos.install.kopf.dev (versions: v1).' in runner.output
