"""The three CEL libraries on PyPI with wheels for 3.11, on Kubernetes-style rules: fidelity and speed.

    PYTHON bench/cel_libraries.py     # PYTHON: a throw-away venv with common-expression-language,
                                      # cel-python and cel-expr-python installed (never the project's .venv)

Fidelity: of 32 rules a Kubernetes CRD may carry (the standard macros, optional chaining, strings v2, lists,
sets, two-variable comprehensions, a type error and runtime errors Kubernetes reports), how many evaluate to
what kube-apiserver 1.34 gives (true for the valid ones; an error for the invalid ones). Speed: evaluations
per second of 4 simple rules over a dict, with each library's own data conversion. Printed, never asserted.
"""
import time
from typing import Any

VALID = [
    ('self.replicas >= 0 && self.replicas <= 10', {'replicas': 3}),
    ("self.name.startsWith('a') && size(self.name) < 10", {'name': 'abc'}),
    ('self.items.all(x, x > 0)', {'items': [1, 2, 3]}),
    ('self.items.exists_one(x, x == 2)', {'items': [1, 2, 3]}),
    ('self.items.map(x, x * 2).filter(y, y > 2).size() == 2', {'items': [1, 2, 3]}),
    ("has(self.spec) && self.spec.x == 'y'", {'spec': {'x': 'y'}}),
    ("self.?spec.?x.orValue('z') == 'y'", {'spec': {'x': 'y'}}),
    ("self.name.matches('^[a-z]+$')", {'name': 'abc'}),
    ("self.name.lowerAscii() == 'abc'", {'name': 'ABC'}),
    ("self.name.split('-').size() == 2", {'name': 'a-b'}),
    ("'%s-%d'.format([self.name, 1]) == 'a-1'", {'name': 'a'}),
    ('sets.contains([1,2,3], [1,2])', {}),
    ('self.m.all(k, v, k.size() == v)', {'m': {'ab': 2}}),
    ('[3,1,2].sort() == [1,2,3]', {}),
    ('lists.range(3) == [0,1,2]', {}),
    ('[[1],[2,3]].flatten() == [1,2,3]', {}),
    ('1 < 2.5', {}),
    ("duration('1h') > duration('30m')", {}),
    ("timestamp('2024-01-01T00:00:00Z') < timestamp('2025-01-01T00:00:00Z')", {}),
    ('self.items.isSorted()', {'items': [1, 2, 3]}),
    ("self.name.find('[0-9]+') == '12'", {'name': 'ab12'}),
    ("self.name.indexOf('b') == 1", {'name': 'ab12'}),
    ("self.name.charAt(1) == 'b'", {'name': 'ab12'}),
    ("strings.quote('a') == '\"a\"'", {}),
    ('self.items.sum() == 6', {'items': [1, 2, 3]}),
    ('optional.of(1).hasValue()', {}),
    ("quantity('1Gi').isGreaterThan(quantity('1Mi'))", {}),
    ("url('https://a.b/c').getHost() == 'a.b'", {}),
]
INVALID = [("self.name + 1 == 'x'", {'name': 'a'}), ('self.missing == 1', {}), ('1/0 == 1', {}), ('self.x in [1,2', {})]
SPEED = ['self.replicas >= 0 && self.replicas <= 10', "self.name.startsWith('a') && size(self.name) < 10",
         'self.items.all(x, x > 0)', "has(self.spec) && self.spec.x == 'y'"]
OBJ = {'replicas': 3, 'name': 'abc', 'items': list(range(10)), 'spec': {'x': 'y'}}


def rust(rule: str) -> Any:
    import cel
    program = cel.compile(rule)
    return lambda obj: program.execute({'self': obj})


def celpy(rule: str) -> Any:
    import celpy
    env = celpy.Environment()
    program = env.program(env.compile(rule))
    return lambda obj: program.evaluate({'self': celpy.json_to_cel(obj)})


def cpp(rule: str) -> Any:
    from cel_expr_python import cel
    from cel_expr_python.ext import ext_optional, ext_strings
    extensions = [ext_strings.ExtStrings(), ext_optional.ExtOptional()] if hasattr(ext_strings, 'ExtStrings') else None
    env = cel.NewEnv(variables={'self': cel.Type.DYN}, extensions=extensions)
    expression = env.compile(rule)
    return lambda obj: expression.eval(data={'self': obj}).plain_value()


def fidelity(make: Any) -> tuple[int, int]:
    ok = 0
    for rule, obj in VALID:
        try:
            ok += make(rule)(obj) is True
        except Exception:
            pass
    for rule, obj in INVALID:
        try:
            result = make(rule)(obj)
            ok += isinstance(result, str) and ('error' in result.lower() or 'not found' in result.lower())
        except Exception:
            ok += 1
    return ok, len(VALID) + len(INVALID)


def speed(make: Any, n: int) -> float:
    total = 0.0
    for rule in SPEED:
        fn = make(rule)
        started = time.perf_counter()
        for _ in range(n):
            fn(OBJ)
        total += time.perf_counter() - started
    return n * len(SPEED) / total


def main() -> None:
    for name, make, n in (('common-expression-language', rust, 20000), ('cel-python', celpy, 500),
                          ('cel-expr-python', cpp, 20000)):
        ok, of = fidelity(make)
        print(f'{name:28} as Kubernetes: {ok:2}/{of}   {speed(make, n):9,.0f} evals/s')


if __name__ == '__main__':
    main()
