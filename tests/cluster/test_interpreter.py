"""CEL evaluation with Kubernetes' environment: values, cel-go's semantics (error absorption, overflow,
heterogeneous equality), and its error texts."""
from typing import Any

import pytest

from kopf._cluster.cel import celtypes, environment
from kopf._cluster.cel.celvalues import EvalError
from kopf._cluster.cel.nodes import Issues


def evaluate(text: str, **variables: Any) -> Any:
    env = environment.base_env().copy()
    for name in variables:
        env.add_ident(name, celtypes.DynType)
    compiled = environment.compile(text, env)
    assert not isinstance(compiled, Issues), str(compiled)
    return compiled.program.eval(variables)


VALUES = [
    ('1 + 2 * 3', 7), ('7 / 2', 3), ('-7 / 2', -3), ('-7 % 3', -1), ('7.0 / 2.0', 3.5), ('2u * 3u', 6),
    ("'a' + 'b'", 'ab'), ('[1] + [2]', [1, 2]), ('1 < 2.5', True), ('2u > 1', True), ('dyn(1) == 1.0', True),
    ("dyn(1) == 'a'", False), ('[1, 2] == [1, 2]', True), ("{'a': 1} == {'a': 1}", True), ('1 in [1, 2]', True),
    ("'a' in {'a': 1}", True), ('size([1, 2, 3])', 3), ("size('héllo')", 5), ("'abc'.startsWith('a')", True),
    ("'abc'.matches('^a.c$')", True), ("'a,b'.split(',')", ['a', 'b']), ("'%d-%s'.format([1, 'x'])", '1-x'),
    ("'Hello'.lowerAscii()", 'hello'), ("'abc'.substring(1, 2)", 'b'), ("' x '.trim()", 'x'),
    ("['a', 'b'].join('-')", 'a-b'), ('[1, 2, 3].all(x, x > 0)', True), ('[1, 2, 3].exists(x, x > 2)', True),
    ('[1, 2, 3].exists_one(x, x > 1)', False), ('[1, 2, 3].map(x, x * 2)', [2, 4, 6]),
    ('[1, 2, 3].filter(x, x % 2 == 1)', [1, 3]), ("{'a': 1}.all(k, v, k == 'a' && v == 1)", True),
    ('[3, 1, 2].sort()', [1, 2, 3]), ('[1, 2, 2].distinct()', [1, 2]), ('lists.range(3)', [0, 1, 2]),
    ('[[1], [2, 3]].flatten()', [1, 2, 3]), ('[1, 2, 3].slice(1, 3)', [2, 3]), ('[1, 2, 3].sum()', 6),
    ('[1, 5, 2].max()', 5), ('[1, 2].isSorted()', True), ('sets.contains([1, 2], [2])', True),
    ('optional.of(1).orValue(2)', 1), ('optional.none().orValue(2)', 2), ("{'a': 1}[?'b'].orValue(0)", 0),
    ('[1, 2].transformList(i, v, i + v)', [1, 3]), ("{'a': 1}.transformMap(k, v, v + 1)", {'a': 2}),
    ("duration('1h30m') == duration('90m')", True), ("string(duration('1.5s'))", '1.5s'),
    ("timestamp('2024-01-02T03:04:05Z').getHours()", 3), ("string(timestamp('2024-01-02T03:04:05.5Z'))",
                                                           '2024-01-02T03:04:05.5Z'),
    ('string(1.5)', '1.5'), ('string(1e6)', '1e+06'), ("int('-12')", -12), ('double(1)', 1.0),
    ("quantity('1.5Gi').isGreaterThan(quantity('1Gi'))", True), ("quantity('500m').asApproximateFloat()", 0.5),
    ("url('https://a.example:8443/p?x=1').getPort()", '8443'), ("cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", True),
    ("semver('1.2.3').isLessThan(semver('1.10.0'))", True), ("format.dns1123Label().validate('ok').hasValue()", False),
    ('false && (1 / 0 == 1)', False), ('(1 / 0 == 1) || true', True), ('[1, 0].exists(x, 1 / x == 1)', True),
]


@pytest.mark.parametrize('text, value', VALUES)
def test_values(text: str, value: Any) -> None:
    assert evaluate(text) == value


ERRORS = [
    ('1 / 0 == 1', 'division by zero'), ('1 % 0 == 1', 'modulus by zero'),
    ('9223372036854775807 + 1 > 0', 'integer overflow'), ('0u - 1u > 0u', 'unsigned integer overflow'),
    ('[1][2] == 1', 'index out of bounds: 2'), ("{'a': 1}['b'] == 1", 'no such key: b'),
    ("dyn('a') + 1 == 1", 'no such overload'), ('[0, 1].all(x, 1 / x > 0)', 'division by zero'),
    ('optional.none().value() == 1', 'optional.none() dereference'), ('[].max() == 1', 'max called on empty list'),
    ("quantity('x') == quantity('1')",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("'abc'.substring(2, 1) == ''", 'invalid substring range. start: 2, end: 1'),
]


@pytest.mark.parametrize('text, message', ERRORS)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(EvalError) as e:
        evaluate(text)
    assert str(e.value) == message


def test_variables_and_field_selection() -> None:
    assert evaluate('self.a.b == 1 && has(self.a) && !has(self.c)', self={'a': {'b': 1}}) is True
    with pytest.raises(EvalError, match='no such key: c'):
        evaluate('self.c == 1', self={})


def test_shadowed_comprehension_variables_are_restored() -> None:
    assert evaluate('[1, 2].all(x, [3].all(x, x == 3)) && x == 5', x=5) is True
