"""Server-side apply internals: field paths of owned leaves, the schema-driven merge, removal of unapplied fields."""
from typing import Any

from kopf._cluster.apis.catalog import Catalog
from kopf._cluster.openapi import kindschemas
from kopf._cluster.patchtypes import fieldowners
from kopf._cluster.pipeline import serverside

POD = Catalog().lookup('', 'v1', 'pods')
assert POD is not None


def _paths(obj: Any) -> set[str]:
    assert POD is not None
    return {fieldowners.render(path) for path in fieldowners.flatten(obj, POD)}


def test_flatten_uses_upstream_field_paths() -> None:
    pod = {'apiVersion': 'v1', 'kind': 'Pod',
           'metadata': {'name': 'p', 'uid': 'u', 'labels': {'a': 'b'}, 'finalizers': ['x/y']},
           'spec': {'containers': [{'name': 'c', 'image': 'i', 'args': ['1', '2']}]}}
    assert _paths(pod) == {
        '.metadata.labels.a', '.metadata.finalizers[="x/y"]',
        '.spec.containers[name="c"]', '.spec.containers[name="c"].name', '.spec.containers[name="c"].image',
        '.spec.containers[name="c"].args',   # an atomic list is one field
    }


def test_managers_attribute_changes_to_the_last_writer() -> None:
    assert POD is not None
    managers = fieldowners.Managers()
    first = {'metadata': {'labels': {'a': '1', 'b': '1'}}}
    second = {'metadata': {'labels': {'a': '2'}}}
    managers.record(('one', 'Update', 'v1'), None, first, POD)
    managers.record(('two', 'Update', 'v1'), first, second, POD)
    managers.settle()
    assert managers.owned == {('two', 'Update', 'v1'): {('.metadata', '.labels', '.a')}}


def test_merge_by_list_types_and_removal() -> None:
    schema = kindschemas.schema_for('', 'v1', 'Pod')
    live = {'metadata': {'finalizers': ['a']},
            'spec': {'containers': [{'name': 'c', 'image': 'i'}, {'name': 'd', 'image': 'j'}]}}
    config = {'metadata': {'finalizers': ['b']}, 'spec': {'containers': [{'name': 'd', 'image': 'k'}]}}
    merged = serverside.merge_object(live, config, schema)
    assert merged['metadata']['finalizers'] == ['a', 'b']
    assert merged['spec']['containers'] == [{'name': 'c', 'image': 'i'}, {'name': 'd', 'image': 'k'}]
    serverside._remove(merged, ('.spec', '.containers', '[name="c"]', '.'))
    serverside._remove(merged, ('.metadata', '.finalizers', '[="a"]'))
    assert merged['spec']['containers'] == [{'name': 'd', 'image': 'k'}] and merged['metadata']['finalizers'] == ['b']


def test_conflict_messages_as_upstream() -> None:
    one = serverside.conflict_error([(('kubectl', 'Apply'), ('.data', '.a'))])
    assert one.code == 409 and one.message == 'Apply failed with 1 conflict: conflict with "kubectl": .data.a'
    many = serverside.conflict_error([(('x', 'Update', 'apps/v1'), ('.spec', '.replicas')),
                                      (('x', 'Update', 'apps/v1', 'status'), ('.status', '.a'))])
    assert many.message == ('Apply failed with 2 conflicts: '     # sorted by the managers' JSON, as upstream
                            'conflicts with "x" with subresource "status" using apps/v1:\n- .status.a\n'
                            'conflicts with "x" using apps/v1:\n- .spec.replicas')


def test_an_empty_map_applied_then_filled_stays() -> None:
    from kopf._cluster.control.emulator import Emulator
    from kopf._cluster.pipeline import writing
    emulator = Emulator()
    target = emulator.target('v1', 'ConfigMap', 'cm', 'default')
    options = writing.Options(manager='me')
    serverside.apply(emulator.state, target, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {}}, options)
    serverside.apply(emulator.state, target, {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {'a': 'b'}}, options)
    stored = emulator.get('v1', 'ConfigMap', 'cm', 'default')
    assert stored is not None and stored['data'] == {'a': 'b'}
    serverside.apply(emulator.state, target, {'apiVersion': 'v1', 'kind': 'ConfigMap'}, options)
    stored = emulator.get('v1', 'ConfigMap', 'cm', 'default')
    assert stored is not None and 'a' not in (stored.get('data') or {})


def test_ownership_survives_a_state_file(tmp_path: Any) -> None:
    import asyncio

    from kopf._cluster import statuses
    from kopf._cluster.control.emulator import Emulator
    from kopf._cluster.pipeline import writing

    async def run(emulator: Emulator, manager: str, value: str) -> None:
        await emulator.start()
        try:
            target = emulator.target('v1', 'ConfigMap', 'kept', 'default')
            body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {'a': value}}
            serverside.apply(emulator.state, target, body, writing.Options(manager=manager))
        finally:
            await emulator.stop()

    asyncio.run(run(Emulator(state_file=tmp_path / 'state.json'), 'first', '1'))
    try:
        asyncio.run(run(Emulator(state_file=tmp_path / 'state.json'), 'second', '2'))
    except statuses.ApiError as exc:
        assert exc.code == 409 and 'conflict with "first": .data.a' in exc.message
    else:
        raise AssertionError('the ownership of "first" was lost in the restart')


def _ports(*ports: dict[str, Any]) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
            'spec': {'containers': [{'name': 'c', 'ports': list(ports)}]}}


def test_a_defaulted_list_map_key_names_the_same_item() -> None:
    assert POD is not None
    applied = fieldowners.flatten(_ports({'containerPort': 80}), POD)
    live = fieldowners.flatten(_ports({'containerPort': 80, 'protocol': 'TCP'}), POD)
    item = ('.spec', '.containers', '[name="c"]', '.ports', '[containerPort=80,protocol="TCP"]')
    assert applied[item + ('.',)] == live[item + ('.',)]   # the item itself: no conflict over it
    assert item + ('.protocol',) in live and item + ('.protocol',) not in applied
    assert ('.metadata',) not in applied   # an empty metadata (the server's fields left out) is no field
    schema = kindschemas.schema_for('', 'v1', 'Pod')
    merged = serverside.merge_object(_ports({'containerPort': 80, 'protocol': 'TCP', 'name': 'a'}),
                                     _ports({'containerPort': 80, 'name': 'b'},
                                            {'containerPort': 80, 'protocol': 'UDP'}),
                                     schema)
    assert merged['spec']['containers'][0]['ports'] == [{'containerPort': 80, 'protocol': 'TCP', 'name': 'b'},
                                                        {'containerPort': 80, 'protocol': 'UDP'}]


def test_a_custom_resource_key_defaulted_by_its_schema() -> None:
    items = {'type': 'object', 'properties': {'port': {'type': 'integer'}, 'proto': {'type': 'string', 'default': 'X'}}}
    assert fieldowners.element_key({'port': 1}, ['port', 'proto'], items) == '[port=1,proto="X"]'
    assert fieldowners.element_key({'port': 1}, ['port', 'proto']) == '[port=1]'   # no default: left out
