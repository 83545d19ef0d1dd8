"""managedFields: field sets by the schema, and the entries after updates and applies (table-driven, no I/O)."""
from typing import Any

from kopf._cluster.openapi import kindschemas
from kopf._cluster.patchtypes import fieldsets, managedfields

CM = kindschemas.schema_for('', 'v1', 'ConfigMap')
DEPLOYMENT = kindschemas.schema_for('apps', 'v1', 'Deployment')
NOW, LATER = '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'


def cm(data: dict[str, str], labels: dict[str, str] | None = None, entries: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {'name': 'x', 'namespace': 'ns', 'uid': 'u', 'resourceVersion': '1',
                            'creationTimestamp': NOW, **({'labels': labels} if labels else {})}
    if entries is not None:
        meta['managedFields'] = entries
    return {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': meta, 'data': data}


def update(live: Any, new: Any, manager: str, *, creating: bool = False, now: str = NOW) -> Any:
    return managedfields.updated(live, new, manager=manager, api_version='v1', subresource='', schema=CM,
                                 ignored=[], now=now, creating=creating)


def test_encoding_round_trips_in_upstream_order() -> None:
    paths = {('f:spec',), ('f:spec', 'f:b'), ('f:spec', 'f:a'), ('f:list', 'k:{"name":"z"}'),
             ('f:list', 'k:{"name":"z"}', 'f:v'), ('f:list', 'k:{"name":"a","port":80}'), ('f:set', 'v:"x"'),
             ('f:set', 'v:1')}
    encoded = fieldsets.encode(paths)
    assert list(encoded) == ['f:list', 'f:set', 'f:spec']
    assert list(encoded['f:list']) == ['k:{"name":"a","port":80}', 'k:{"name":"z"}']
    assert encoded['f:list']['k:{"name":"z"}'] == {'.': {}, 'f:v': {}}
    assert list(encoded['f:set']) == ['v:1', 'v:"x"'] and list(encoded['f:spec']) == ['.', 'f:a', 'f:b']
    assert fieldsets.decode(encoded) == paths


def test_a_create_owns_what_it_sent_maps_it_made_too() -> None:
    empty = managedfields.empty_object('v1', 'ConfigMap', False) or {'metadata': {'creationTimestamp': None}}
    entries = update(empty, cm({'a': '1'}, {'x': 'y'}), 'kubectl-create', creating=True)
    assert entries == [{'manager': 'kubectl-create', 'operation': 'Update', 'apiVersion': 'v1', 'time': NOW,
                        'fieldsType': 'FieldsV1', 'fieldsV1': {'f:data': {'.': {}, 'f:a': {}},
                                                               'f:metadata': {'f:labels': {'.': {}, 'f:x': {}}}}}]


def test_a_patch_takes_the_changed_fields_and_no_change_changes_nothing() -> None:
    created = cm({'a': '1'}, entries=update({'metadata': {}}, cm({'a': '1'}), 'kubectl-create', creating=True))
    patched = cm({'a': '2', 'b': '3'}, entries=created['metadata']['managedFields'])
    entries = update(created, patched, 'kubectl-patch', now=LATER)
    assert [(e['manager'], e['fieldsV1'], e['time']) for e in entries] == [
        ('kubectl-create', {'f:data': {}}, NOW),
        ('kubectl-patch', {'f:data': {'f:a': {}, 'f:b': {}}}, LATER)]
    again = update(cm({'a': '2', 'b': '3'}, entries=entries), cm({'a': '2', 'b': '3'}, entries=entries), 'other')
    assert again == entries   # no change: no new entry, no new time


def test_updates_are_not_tracked_once_cleared() -> None:
    created = cm({'a': '1'}, entries=update({'metadata': {}}, cm({'a': '1'}), 'm', creating=True))
    assert update(created, cm({'a': '1'}, entries=[{}]), 'm') is None
    assert update(cm({'a': '1'}), cm({'a': '2'}), 'm') is None


def test_an_apply_owns_its_configuration_and_takes_forced_fields() -> None:
    created = cm({'a': '1'}, entries=update({'metadata': {}}, cm({'a': '1'}), 'kubectl-create', creating=True))
    config = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x', 'labels': {'l': 'v'}},
              'data': {'a': '9'}}
    new = cm({'a': '9'}, {'l': 'v'})
    entries = managedfields.applied(created, new, config, manager='kubectl', api_version='v1', subresource='',
                                    schema=CM, ignored=[], now=LATER)
    assert [(e['manager'], e['operation'], e['fieldsV1']) for e in entries] == [
        ('kubectl', 'Apply', {'f:data': {'f:a': {}}, 'f:metadata': {'f:labels': {'f:l': {}}}}),
        ('kubectl-create', 'Update', {'f:data': {}})]


def test_typed_empty_objects_leave_structs_unowned() -> None:
    empty = managedfields.empty_object('apps/v1', 'Deployment', False)
    new = {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': {'name': 'd'}, 'spec': {
        'replicas': 1, 'selector': {'matchLabels': {'a': 'b'}}, 'strategy': {
            'type': 'RollingUpdate', 'rollingUpdate': {'maxSurge': '25%', 'maxUnavailable': '25%'}},
        'template': {'metadata': {'labels': {'a': 'b'}}, 'spec': {'containers': [{'name': 'c', 'image': 'i'}]}}}}
    added, modified, _ = fieldsets.compare(empty, new, DEPLOYMENT)
    owned = fieldsets.encode((added | modified) - managedfields.STRIPPED)['f:spec']
    assert '.' not in owned and '.' not in owned['f:strategy'] and '.' in owned['f:strategy']['f:rollingUpdate']
    assert owned['f:selector'] == {} and owned['f:template']['f:spec']['f:containers']['k:{"name":"c"}'] == {
        '.': {}, 'f:image': {}, 'f:name': {}}
