"""`kopf rbac`: the command of docs/rbac.md prints what the page shows; bad input is a clear error."""
import pathlib
import re

import pytest
import yaml
from click.testing import CliRunner

from kopf import cli

ROOT = pathlib.Path(__file__).parent.parent.parent
PAGE = ROOT / 'docs' / 'rbac.md'


def rbac(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli.main, ['rbac', *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def test_the_documented_command_prints_the_documented_yaml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = PAGE.read_text()
    command = re.search(r'```sh\n(kopf rbac examples/01-minimal/[^\n]+)\n```', text)
    shown = re.search(r'```yaml\n(# RBAC for.*?)```', text, re.DOTALL)
    assert command and shown
    code, out, err = rbac(*command.group(1).split()[2:])
    assert (code, err) == (0, '')
    assert out == shown.group(1)


def test_a_namespaced_operator_with_extra_rules(tmp_path: pathlib.Path) -> None:
    extra = tmp_path / 'children.yaml'
    extra.write_text("- apiGroups: ['']\n  resources: [pods]\n  verbs: [create]\n")
    code, out, _ = rbac(str(ROOT / 'examples/02-children/example.py'), '--crd', str(ROOT / 'examples/crd.yaml'),
                        '-n', 'ns1', '--extra', str(extra), '--user', 'me', '--name', 'op')
    assert code == 0
    docs = [doc for doc in yaml.safe_load_all(out) if doc]
    assert [(d['kind'], d['metadata']) for d in docs] == [
        ('ClusterRole', {'name': 'op'}), ('ClusterRoleBinding', {'name': 'op'}),
        ('Role', {'name': 'op', 'namespace': 'ns1'}), ('RoleBinding', {'name': 'op', 'namespace': 'ns1'})]
    assert {'apiGroups': [''], 'resources': ['pods'], 'verbs': ['create']} in docs[2]['rules']
    assert docs[3]['subjects'] == [{'kind': 'User', 'apiGroup': 'rbac.authorization.k8s.io', 'name': 'me'}]


def test_an_unknown_resource_is_granted_as_written_with_a_warning(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'handlers.py'
    path.write_text("import kopf\n\n@kopf.on.create('widgets')\ndef fn(**_): pass\n")
    code, out, err = rbac(str(path), '-A')
    assert code == 0
    assert 'Warning: The resource widgets is not among the known resources' in err
    assert "- apiGroups: ['*']\n  resources: [widgets]\n" in out


@pytest.mark.parametrize('args, message', [
    (['nonexistent.py'], 'Error: No such file: nonexistent.py'),
    (['-A', '--extra', 'nonexistent.yaml'], 'Error: Cannot read nonexistent.yaml'),
    (['-A', '--crd', 'nonexistent.yaml'], 'Error: Cannot read nonexistent.yaml'),
    (['-A', '--service-account', 'kopf'], "Error: A service account is NAMESPACE/NAME, not 'kopf'."),
])
def test_bad_input_is_a_clear_error(args: list[str], message: str) -> None:
    code, out, err = rbac(*args)
    assert code == 1 and not out
    assert err.startswith(message), err


def test_bad_extra_rules_name_the_file(tmp_path: pathlib.Path) -> None:
    extra = tmp_path / 'bad.yaml'
    extra.write_text('kind: Pod\n')
    code, _, err = rbac('-A', '--extra', str(extra))
    assert code == 1 and f'{extra}: expected a list of RBAC rules' in err


def test_namespaces_and_all_namespaces_exclude_each_other() -> None:
    code, _, err = rbac('-A', '-n', 'ns1')
    assert code == 2 and 'Either --namespace or --all-namespaces, not both.' in err


def rules_of(out: str) -> dict[tuple[str, str, str | None], set[str]]:
    """(group, resource, namespace or None for the ClusterRole) → verbs, from the printed manifests."""
    found: dict[tuple[str, str, str | None], set[str]] = {}
    for doc in yaml.safe_load_all(out):
        for rule in (doc or {}).get('rules', []):
            for group in rule['apiGroups']:
                for resource in rule['resources']:
                    key = (group, resource, doc['metadata'].get('namespace'))
                    found.setdefault(key, set()).update(rule['verbs'])
    return found


def test_a_module_with_a_peering_a_lease_with_shards_and_globs(tmp_path: pathlib.Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / 'rbac_handlers_module.py').write_text(
        "import kopf\n\n@kopf.on.create('kopfexamples')\ndef fn(**_): pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, err = rbac('-m', 'rbac_handlers_module', '--crd', str(ROOT / 'examples/crd.yaml'), '-n', 'team-*',
                          '--peering', 'mine', '--lease', 'ops/leader', '--shards', '3')
    assert (code, err) == (0, '')
    found = rules_of(out)
    assert found[('kopf.dev', 'kopfexamples', None)] == {'get', 'list', 'patch', 'watch'}  # globs: cluster-wide
    assert found[('', 'namespaces', None)] == {'list', 'watch'}                          # the globs' namespaces
    assert found[('kopf.dev', 'kopfpeerings', None)] == {'get', 'list', 'patch', 'watch'}  # -n: namespaced peering
    assert found[('zalando.org', 'kopfpeerings', None)] == {'get', 'list', 'patch', 'watch'}
    assert found[('coordination.k8s.io', 'leases', 'ops')] == {'create', 'get', 'list', 'update', 'watch'}
    assert "the peering 'mine'" in out and "the shards of 'leader' and their members" in out


def test_standalone_needs_no_peering_and_a_lease_goes_where_the_resources_go() -> None:
    code, out, _ = rbac(str(ROOT / 'examples/01-minimal/example.py'), '--crd', str(ROOT / 'examples/crd.yaml'),
                        '-n', 'ns1', '-n', 'ns2', '--standalone', '--lease', 'leader')
    assert code == 0
    found = rules_of(out)
    assert not [key for key in found if 'peerings' in key[1]]
    assert found[('coordination.k8s.io', 'leases', 'ns1')] == found[('coordination.k8s.io', 'leases', 'ns2')] \
        == {'create', 'get', 'update', 'watch'}
    assert found[('kopf.dev', 'kopfexamples', 'ns2')] == {'get', 'list', 'patch', 'watch'}
    assert found[('apiextensions.k8s.io', 'customresourcedefinitions', None)] == {'get', 'list', 'watch'}


TYPED = '''
import kopf
from pydantic import BaseModel


class Spec(BaseModel):
    size: int = 1


@kopf.custom_resource('example.com', 'v1', kind='Gadget', scope='Cluster')
class Gadget(BaseModel):
    spec: Spec
    status: dict = {}


@kopf.on.create('gadgets')
def fn(**_): pass
'''


def test_typed_resources_resolve_without_their_crd_and_install_crds_adds_its_rules(tmp_path: pathlib.Path) -> None:
    path = tmp_path / 'typed_operator.py'
    path.write_text(TYPED)
    code, out, err = rbac(str(path), '-A', '--standalone', '--install-crds')
    assert (code, err) == (0, '')   # no warning: the selector resolves to the declared resource
    rules = yaml.safe_load_all(out).__next__()['rules']
    assert {'apiGroups': ['apiextensions.k8s.io'], 'resources': ['customresourcedefinitions'],
            'verbs': ['create', 'get', 'list', 'update', 'watch']} in rules
    assert {'apiGroups': ['example.com'], 'resources': ['gadgets/status'], 'verbs': ['patch']} in rules
    assert '#   create,get,update customresourcedefinitions.apiextensions.k8s.io cluster-wide: ' \
           '--install-crds: gadgets.example.com\n' in out

    code, out, _ = rbac(str(path), '-A', '--standalone')   # without the flag: no rules to write CRDs
    assert code == 0 and 'create,get,update customresourcedefinitions' not in out


def test_install_crds_without_resource_classes_is_an_error() -> None:
    code, _, err = rbac(str(ROOT / 'examples/01-minimal/example.py'), '-A', '--install-crds')
    assert code == 1
    assert 'Error: --install-crds: the loaded code declares no resource classes.' in err
