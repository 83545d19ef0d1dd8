"""CRD rules compiled as kube-apiserver compiles them: errors in cel-go's words, estimated costs."""
import re

import pytest

from kopf._cluster.cel import crdrules

from .cel_recorded import COSTS, ERRORS, SCHEMA


def compiled(rule: str) -> crdrules.Rule:
    schema = dict(SCHEMA, **{'x-kubernetes-validations': [{'rule': rule}]})
    return crdrules.Node(schema, True).rules[0]


@pytest.mark.parametrize('rule, error', ERRORS, ids=[r for r, _ in ERRORS])
def test_compile_errors_are_the_real_servers(rule: str, error: str) -> None:
    assert re.sub(r'selfType\d+', 'selfType<N>', compiled(rule).error) == error


@pytest.mark.parametrize('rule, cost', COSTS, ids=[r for r, _ in COSTS])
def test_estimated_costs_are_the_real_servers(rule: str, cost: int) -> None:
    found = compiled(rule)
    assert found.error == ''
    assert found.max_cost == cost


def test_rules_using_old_self_are_known() -> None:
    assert compiled('self.n == oldSelf.n').uses_old_self
    assert not compiled('self.n == 1').uses_old_self


def test_a_schema_without_rules_compiles_nothing() -> None:
    assert not crdrules.Node({'type': 'object', 'properties': {'a': {'type': 'string'}}}, True).has_rules


def test_nested_rules_make_their_ancestors_have_rules() -> None:
    schema = {'type': 'object', 'properties': {'spec': {'type': 'object', 'properties': {
        'a': {'type': 'string', 'x-kubernetes-validations': [{'rule': "self != 'x'"}]}}}}}
    root = crdrules.Node(schema, True)
    assert root.has_rules and root.properties['spec'].has_rules
    assert root.properties['spec'].properties['a'].rules[0].compiled is not None


def test_field_paths_are_normalised() -> None:
    schema = dict(SCHEMA, **{'x-kubernetes-validations': [{'rule': 'true', 'fieldPath': ".o['x']"},
                                                          {'rule': 'true', 'fieldPath': ".m['any.key']"}]})
    rules = crdrules.Node(schema, True).rules
    assert [r.normalized_field_path for r in rules] == ['o.x', 'm[any.key]']
