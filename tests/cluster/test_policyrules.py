"""PolicyRules: matching requests, covering other rules, and the texts of what is missing."""
import pytest

from kopf._cluster.rbac import policyrules
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User

U = User('u')
PODS = {'verbs': ['get', 'list'], 'apiGroups': [''], 'resources': ['pods']}


def res(verb: str, resource: str, group: str = '', sub: str = '', name: str = '') -> Attributes:
    return Attributes(U, verb, True, group, 'v1', resource, sub, 'ns', name)


@pytest.mark.parametrize('rule, attributes, allowed', [
    (PODS, res('get', 'pods'), True),
    (PODS, res('watch', 'pods'), False),
    (PODS, res('get', 'pods', group='apps'), False),
    (PODS, res('get', 'pods', sub='log'), False),
    ({'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods/log']}, res('get', 'pods', sub='log'), True),
    ({'verbs': ['get'], 'apiGroups': [''], 'resources': ['*/log']}, res('get', 'pods', sub='log'), True),
    ({'verbs': ['get'], 'apiGroups': [''], 'resources': ['*/log']}, res('get', 'pods'), False),
    ({'verbs': ['*'], 'apiGroups': ['*'], 'resources': ['*']}, res('delete', 'x', group='y', sub='z'), True),
    ({'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods'], 'resourceNames': ['a']}, res('get', 'pods',
         name='a'), True),
    ({'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods'], 'resourceNames': ['a']}, res('get', 'pods',
         name='b'), False),
    ({'verbs': ['list'], 'apiGroups': [''], 'resources': ['pods'], 'resourceNames': ['a']}, res('list', 'pods'), False),
    ({'verbs': ['get'], 'nonResourceURLs': ['/healthz']}, Attributes(U, 'get', False, path='/healthz'), True),
    ({'verbs': ['get'], 'nonResourceURLs': ['/apis/*']}, Attributes(U, 'get', False, path='/apis/apps'), True),
    ({'verbs': ['get'], 'nonResourceURLs': ['/apis/*']}, Attributes(U, 'get', False, path='/api'), False),
    ({'verbs': ['get'], 'nonResourceURLs': ['*']}, Attributes(U, 'post', False, path='/x'), False),
    (PODS, Attributes(U, 'get', False, path='/pods'), False),
])
def test_allows(rule: policyrules.Rule, attributes: Attributes, allowed: bool) -> None:
    assert policyrules.allows(attributes, rule) is allowed


def test_breakdown_and_covers() -> None:
    rule = {'verbs': ['get', 'list'], 'apiGroups': ['', 'apps'], 'resources': ['pods'], 'resourceNames': ['a']}
    assert len(policyrules.breakdown(rule)) == 4
    assert policyrules.covers([{'verbs': ['*'], 'apiGroups': ['*'], 'resources': ['*']}], [rule]) == []
    missing = policyrules.covers([PODS], [rule])
    assert missing == [{'apiGroups': ['apps'], 'resources': ['pods'], 'verbs': ['get'], 'resourceNames': ['a']},
                       {'apiGroups': ['apps'], 'resources': ['pods'], 'verbs': ['list'], 'resourceNames': ['a']}]
    named = {'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods'], 'resourceNames': ['a']}
    assert policyrules.covers([named], [PODS]) != []   # names do not cover all
    assert policyrules.covers([{'verbs': ['get'], 'apiGroups': [''], 'resources': ['*/log']}],
                              [{'verbs': ['get'], 'apiGroups': [''], 'resources': ['pods/log']}]) == []
    assert policyrules.covers([{'verbs': ['get'], 'nonResourceURLs': ['/a/*']}],
                              [{'verbs': ['get'], 'nonResourceURLs': ['/a/b']}]) == []


def test_compact_and_compact_string() -> None:
    missing = policyrules.covers([], [{'verbs': ['get', 'list'], 'apiGroups': [''], 'resources': ['pods', 'secrets']},
                                      {'verbs': ['get'], 'nonResourceURLs': ['/x']}])
    texts = sorted(policyrules.compact_string(rule) for rule in policyrules.compact(missing))
    assert texts == ['{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
                     '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
                     '{NonResourceURLs:["/x"], Verbs:["get"]}']
