"""ClusterRole aggregation: selected roles' rules, by name, each once; selectors as LabelSelectors."""
from kopf._cluster.rbac import aggregation, bootstrap, resolver


def role(name: str, labels: dict[str, str], *verbs: str) -> dict[str, object]:
    return {'metadata': {'name': name, 'labels': labels},
            'rules': [{'verbs': [verb], 'apiGroups': [''], 'resources': ['pods']} for verb in verbs]}


def test_rules_of_the_selected_roles_each_once() -> None:
    parent = {'metadata': {'name': 'p'}, 'aggregationRule': {'clusterRoleSelectors': [{'matchLabels': {'a': 'y'}}]}}
    roles = [parent, role('z', {'a': 'y'}, 'get', 'list'), role('b', {'a': 'y'}, 'get', 'watch'), role('c', {}, 'x')]
    assert aggregation.aggregated(parent, roles) == [
        {'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods']},
        {'verbs': ['watch'], 'apiGroups': [''], 'resources': ['pods']},
        {'verbs': ['list'], 'apiGroups': [''], 'resources': ['pods']}]
    assert aggregation.aggregated(roles[1], roles) is None


def test_selectors() -> None:
    assert aggregation.matches({}, {'x': '1'})
    assert aggregation.matches({'matchExpressions': [{'key': 'x', 'operator': 'In', 'values': ['1']}]}, {'x': '1'})
    assert not aggregation.matches({'matchExpressions': [{'key': 'x', 'operator': 'NotIn', 'values': ['1']}]},
                                   {'x': '1'})
    assert aggregation.matches({'matchExpressions': [{'key': 'x', 'operator': 'DoesNotExist'}]}, {})
    assert not aggregation.matches({'matchExpressions': [{'key': 'x', 'operator': 'Exists'}]}, {})


def test_the_bootstrap_roles_are_aggregated_to_the_fixed_point() -> None:
    roles = {obj['metadata']['name']: obj for key, obj in bootstrap.objects() if key == resolver.CLUSTER_ROLES}
    def verbs(name: str, resource: str) -> set[str]:
        return {verb for rule in roles[name]['rules'] if resource in rule.get('resources',
             ()) for verb in rule['verbs']}
    assert verbs('view', 'pods') == {'get', 'list', 'watch'}
    assert {'create', 'delete'} <= verbs('edit', 'pods') and 'get' in verbs('edit', 'pods')   # edit has view's
    assert {'create', 'delete', 'get'} <= verbs('admin', 'pods') and 'create' in verbs('admin', 'rolebindings')
    assert not any(aggregation.changed(roles[n].get('rules'), aggregation.aggregated(roles[n], roles.values()) or [])
                   for n in ('admin', 'edit', 'view'))


def test_the_seeded_copies_are_the_objects_with_their_managed_fields() -> None:
    """`seeded()` copies a template made once: the same as computing each object's managed fields at `now`."""
    now = '2026-01-02T03:04:05Z'
    first, second = bootstrap.seeded(now), bootstrap.seeded(now)
    for (key, obj), (_, other), (expected_key, expected) in zip(first, second, bootstrap.objects(), strict=True):
        assert key == expected_key and obj['metadata']['uid'] != other['metadata']['uid']
        assert obj['metadata']['managedFields'] == bootstrap.managed(expected, now)
        assert obj['metadata']['creationTimestamp'] == now
        meta = {k: v for k, v in obj['metadata'].items() if k not in ('uid', 'resourceVersion', 'creationTimestamp',
                                                                        'managedFields')}
        assert {**obj, 'metadata': meta} == expected
