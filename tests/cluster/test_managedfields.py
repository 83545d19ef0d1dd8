"""managedFields: field sets by the schema, and the entries after updates and applies (table-driven, no I/O)."""
import random
from typing import Any

import pytest

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


def _random_value(rng: random.Random, depth: int) -> Any:
    choice = rng.random()
    if depth > 2 or choice < 0.4:
        return rng.choice(['a', 'b', 1, 2, True, None])
    if choice < 0.8:
        return {rng.choice('pqrs'): _random_value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 2))]


def _random_cm(rng: random.Random, entries: Any) -> dict[str, Any]:
    labels = {rng.choice('lmn'): rng.choice('xy') for _ in range(rng.randint(0, 2))}
    obj = cm({k: rng.choice('12') for k in rng.sample('abcd', rng.randint(0, 3))}, labels or None, entries)
    if rng.random() < 0.5:
        obj['metadata']['annotations'] = {rng.choice('uv'): rng.choice('12')}
    if rng.random() < 0.5:
        obj['extra'] = _random_value(rng, 0)   # no schema below: deduced (maps separable, lists atomic)
    return obj


def _both_ways(live: Any, new: Any, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> Any:
    """The entries after an update, lazily (as served) and the general way (all decoded): the same, also in order."""
    lazily = managedfields.updated(live, new, **kwargs)
    with monkeypatch.context() as patched:
        patched.setattr(managedfields, '_identified', lambda entries: None)
        generally = managedfields.updated(live, new, **kwargs)
    assert lazily == generally
    assert [list(entry) for entry in lazily or []] == [list(entry) for entry in generally or []]
    return lazily


@pytest.mark.parametrize('seed', range(60))
def test_an_update_decodes_only_the_entries_it_changes_with_the_same_outcome(seed: int,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    live = _random_cm(rng, None)
    managers = ['kubectl', 'kopf', 'helm', 'unknown', *(f'm{i}' for i in range(10))]
    for step in range(rng.randint(1, 30)):   # entries as writes leave them: updates, applies, with subresources
        new = _random_cm(rng, live['metadata'].get('managedFields'))
        manager, now = rng.choice(managers), f'2026-01-01T00:{step % 3:02}:00Z'
        if rng.random() < 0.2:
            entries = managedfields.applied(live, new, {'data': new['data']}, manager=manager, api_version='v1',
                                            subresource='', schema=CM, ignored=[], now=now)
        else:
            entries = _both_ways(live, new, monkeypatch, manager=manager, api_version=rng.choice(['v1', 'v2']),
                                 subresource=rng.choice(['', '', 'status', 'scale']), schema=CM,
                                 ignored=rng.choice([[], [('f:data',)]]), now=now, creating=step == 0)
        live = {**new, 'metadata': {**new['metadata'], 'managedFields': entries}}


def test_an_update_beyond_ten_updaters_folds_the_oldest_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    live = cm({}, entries=update({'metadata': {}}, cm({'k': '0'}), 'm0', creating=True))
    live['data'] = {'k': '0'}
    for i in range(1, 12):
        new = cm({**live['data'], f'k{i}': '1'}, entries=live['metadata']['managedFields'])
        entries = _both_ways(live, new, monkeypatch, manager=f'm{i}', api_version='v1', subresource='', schema=CM,
                             ignored=[], now=f'2026-01-01T00:00:{i:02}Z', creating=False)
        live = cm(new['data'], entries=entries)
    assert len(entries) == 10 and entries[0]['manager'] == managedfields.ANCIENT


@pytest.mark.parametrize('seed', range(20))
def test_owning_a_path_is_being_in_the_decoded_set(seed: int) -> None:
    rng = random.Random(seed)
    elements = ['f:a', 'f:b', 'k:{"name":"x"}', 'v:"y"', '.']

    def tree(depth: int) -> dict[str, Any]:
        return {rng.choice(elements): tree(depth + 1) if depth < 3 and rng.random() < 0.6 else rng.choice([{}, None])
                for _ in range(rng.randint(0, 3))}

    fields = tree(0)
    members = fieldsets.decode(fields)
    candidates = {tuple(rng.choice(elements[:4]) for _ in range(rng.randint(0, 4))) for _ in range(60)}
    for path in members | candidates:
        assert fieldsets.owns(fields, [path]) == (path in members), (fields, path)
    assert fieldsets.owns(fields, candidates) == bool(members & candidates)


@pytest.mark.parametrize('seed', range(40))
def test_owning_a_stripped_path_is_owning_it_by_the_walk(seed: int) -> None:
    rng = random.Random(seed)
    top = ['f:apiVersion', 'f:kind', 'f:metadata', 'f:spec', '.']
    meta = ['f:uid', 'f:name', 'f:resourceVersion', 'f:labels', 'f:annotations', 'f:managedFields', '.']

    def tree(elements: list[str], depth: int) -> Any:
        if depth > 2 or rng.random() < 0.3:
            return rng.choice([{}, None, {'.': {}}])
        return {rng.choice(elements): tree(meta if depth == 0 else ['f:a', '.'], depth + 1)
                for _ in range(rng.randint(0, 4))}

    fields = tree(top, 0)
    if isinstance(fields, dict):
        assert managedfields._owns_stripped(fields) == fieldsets.owns(fields, managedfields.STRIPPED), fields


@pytest.mark.parametrize('seed', range(20))
def test_without_prefixes_is_the_recursive_difference(seed: int) -> None:
    rng = random.Random(seed)
    names = ['f:a', 'f:b', 'f:status', 'f:spec', 'k:{"x":1}', 'v:1']
    paths = {tuple(rng.choice(names) for _ in range(rng.randrange(0, 4))) for _ in range(30)}
    prefixes = [tuple(rng.choice(names) for _ in range(rng.randrange(1, 3))) for _ in range(rng.randrange(0, 3))]
    expected = {path for path in paths if not any(path[:len(prefix)] == prefix for prefix in prefixes)}
    assert fieldsets.without_prefixes(paths, prefixes) == expected
    assert fieldsets.without_prefixes(paths, [*prefixes, ()]) == set()


@pytest.mark.parametrize('value, expected', [
    ({}, {('f:x',)}),
    ('s', {('f:x',)}),
    ([1, {'a': 1}], {('f:x',)}),
    ({'a': {}, 'b': {'c': 1, 'd': [1]}}, {('f:x',), ('f:x', 'f:a'), ('f:x', 'f:b'), ('f:x', 'f:b', 'f:c'),
                                        ('f:x', 'f:b', 'f:d')}),
])
def test_the_paths_of_a_free_value_added_or_removed(value: Any, expected: set[Any]) -> None:
    assert fieldsets.compare({'x': 1} | {}, {'x': 1, 'y': 0}, None) == ({('f:y',)}, set(), set())
    added, modified, removed = fieldsets.compare({}, {'x': value}, None)
    assert (added, modified, removed) == (expected, set(), set())
    added, modified, removed = fieldsets.compare({'x': value}, {}, None)
    assert (added, modified, removed) == (set(), set(), expected)


def test_a_fields_only_fieldsv1_is_shared_and_sorted_either_way() -> None:
    paths = {('f:status', 'f:z'), ('f:status',), ('f:status', 'f:a', 'f:b')}
    shared = fieldsets.encode_shared(paths)
    assert shared == fieldsets.encode(paths)
    assert fieldsets.encode_shared(set(paths)) is shared
    assert list(shared['f:status']) == ['.', 'f:a', 'f:z'] == sorted(shared['f:status'])
    keyed = {('f:spec', 'f:items', 'k:{"name":"b"}'), ('f:spec', 'f:items', 'v:"a"')}
    assert fieldsets.encode_shared(keyed) is not fieldsets.encode_shared(keyed)   # not fields only: made anew


@pytest.mark.parametrize('subresource', ['', 'status'])
def test_a_new_entry_in_its_kinds_field_order(subresource: str) -> None:
    from kopf._cluster.openapi import fieldorder
    identity = ('kopf', 'Update', 'kopf.dev/v1', subresource)
    paths = {('f:status', 'f:x')}
    custom = managedfields._entry(identity, 'kopf.dev/v1', '2026-12-07T22:00:00Z', paths, custom=True)
    assert list(custom) == sorted(custom)
    obj = {'apiVersion': 'kopf.dev/v1', 'kind': 'K', 'metadata': {'managedFields': [dict(reversed(custom.items()))]}}
    fieldorder.arrange(obj)
    assert obj['metadata']['managedFields'] == [custom] and list(obj['metadata']['managedFields'][0]) == list(custom)
    builtin = managedfields._entry(identity, 'v1', '2026-12-07T22:00:00Z', paths)
    pod = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'managedFields': [dict(reversed(builtin.items()))]}}
    fieldorder.arrange(pod)
    assert list(pod['metadata']['managedFields'][0]) == list(builtin)
