"""Regenerate tests/cluster/data/shard_selectors.json: shard selectors and what kube-apiserver 1.37's parser says.

    python tools/generate_shard_vectors.py   # needs Go: runs tools/envtest/1.37.2/shardparse

The oracle is k8s.io/apiserver v0.37.2's `pkg/sharding.Parse` (and k8s.io/apimachinery's `HashField`),
compiled from the Go module cache by `go run` in tools/envtest/1.37.2. The inputs: a hand-written list
(valid forms, every error of pkg/sharding, the syntax errors people make) and two seeded fuzzers
(random fragments; one to four character edits of valid selectors and CEL expressions).
"""

import json
import os
import pathlib
import random
import subprocess

ROOT = pathlib.Path(__file__).parent.parent
OUT = ROOT / 'tests' / 'cluster' / 'data' / 'shard_selectors.json'
ORACLE = ROOT / 'tools' / 'envtest' / '1.37.2'
FUZZED = 300  # per fuzzer


def written() -> list[str]:
    U = 'object.metadata.uid'
    A, B, E = "'0x0000000000000000'", "'0x8000000000000000'", "'0x10000000000000000'"
    ok = f'shardRange({U}, {A}, {B})'
    return [
        ok,
        f'shardRange({U}, {A}, {E})',
        f'shardRange(object.metadata.namespace, {A}, {B})',
        f'{ok} || shardRange({U}, {B}, {E})',
        f'shardRange({U},{A},{B})',
        f'  shardRange( {U} , {A} , {B} )  ',
        f'shardRange({U}, "0x0000000000000000", "0x8000000000000000")',
        f"shardRange({U}, r'0x0000000000000000', '0x8000000000000000')",
        f"shardRange({U}, '\\x30x0000000000000000', {B})",
        f'({ok})',
        f'(({ok}) || (shardRange({U}, {B}, {E})))',
        f'object.shardRange({U}, {A}, {B})',
        f'!!{ok}',
        f'{ok} || {ok}',
        f"shardRange({U}, {B}, {A}) || {ok}",
        f'{ok} // comment',
        f"shardRange({U}, '''0x0000000000000000''', {B})",
        '',
        '   ',
        'x',
        'object.metadata.uid',
        "'0x00'",
        '1',
        '[1]',
        '{}',
        'a{}',
        'true',
        'null',
        f'shardRange(object.metadata.name, {A}, {B})',
        f'shardRange(uid, {A}, {B})',
        f'shardRange(.object.metadata.uid, {A}, {B})',
        f'shardRange(object.metadata.labels, {A}, {B})',
        f"shardRange(object.metadata['uid'], {A}, {B})",
        f'shardRange({U}, {A})',
        f'shardRange({U})',
        'shardRange()',
        f'shardRange({U}, {A}, {B}, {B})',
        f"shardRange({U}, '0x0', {B})",
        f"shardRange({U}, {A}, '0xff')",
        f"shardRange({U}, '0x000000000000000000', {B})",
        f"shardRange({U}, '0x1000000000000000a', {B})",
        f"shardRange({U}, '0X0000000000000000', {B})",
        f"shardRange({U}, '0x000000000000000A', {B})",
        f"shardRange({U}, '0000000000000000', {B})",
        f"shardRange({U}, '0x', {B})",
        f"shardRange({U}, '0x0g', {B})",
        f"shardRange({U}, {B}, {B})",
        f"shardRange({U}, {B}, {A})",
        f"shardRange({U}, {E}, {E})",
        f'shardRange({U}, 0, 8)',
        f'shardRange({U}, 0x0000000000000000, 0x8000000000000000)',
        f'shardRange({U}, 1u, 2u)',
        f'shardRange({U}, 1.5, 2.5)',
        f"shardRange({U}, b'0x0000000000000000', {B})",
        f'shardRange({U}, true, {B})',
        f'shardRange({U}, null, {B})',
        f'shardRange({U}, x, {B})',
        f'shardRange({U}, hex(0), {B})',
        f'shardRange({U}, [1], {B})',
        f"shardRange({U}, {A} + '', {B})",
        f"shardRange('uid', {A}, {B})",
        f'shardRange(1, {A}, {B})',
        f'{ok} && shardRange({U}, {B}, {E})',
        f'!{ok}',
        f'-{ok}',
        f'{ok} == true',
        f'{U} > {A}',
        f'{ok} ? {ok} : {ok}',
        f'{ok} || x',
        f'{ok} || shardRange(object.metadata.namespace, {B}, {E})',
        f'invalidFunc({U}, {A}, {B})',
        f'{ok} in [1]',
        f'{ok} + 1',
        f'{ok}[0]',
        f'{ok}.x',
        f'shardRange(namespace, {A}, {B})',
        f'if({U}, {A}, {B})',
        f'shardRange(object.metadata.`uid`, {A}, {B})',
        f'shardRange(object.?metadata, {A}, {B})',
        '[?1]',
        # syntax errors
        f'shardRange({U}, {A}, {B}',
        f'shardRange({U}, {A}, {B}))',
        f'shardRange({U}, {A}, {B}) ||',
        f'|| {ok}',
        f'{ok} | {ok}',
        f'{ok} or {ok}',
        f'{ok} & {ok}',
        f'{ok} x',
        f'{ok} )',
        f'{ok};',
        f'shardRange({U}, {A}, )',
        f'shardRange({U}, , {B})',
        f'shardRange(, {A}, {B})',
        f'shardRange({U} {A}, {B})',
        f"shardRange({U}, '0x0000000000000000, {B})",
        f"shardRange({U}, {A}, '0x8000000000000000)",
        f'shardRange({U}, {A}, {B}',
        f'shardRange{U}, {A}, {B})',
        f'shardRange[{U}, {A}, {B}]',
        f'shardRange({U}., {A}, {B})',
        f'shardRange(object..uid, {A}, {B})',
        f'shardRange($, {A}, {B})',
        f'shardRange({U}, {A}, {B}) = x',
        f'shardRange({U}; {A}; {B})',
        f'shardRange({U}, {A}, {B}) || || {ok}',
        '(',
        ')',
        '||',
        '"',
        "'",
        '`',
        '#',
        '@',
        '\\',
        '^',
        '~',
        '$x',
        f'{ok} $',
        'a b',
        'a.',
        'a.1',
        '.',
        '..',
        '1a',
        '0x',
        '0xg',
        f'shardRange({U}, {A}, {B}) shardRange({U}, {A}, {B})',
        f"shardRange({U}, '0x0000000000000000' '0x8000000000000000')",
        f'shardRange(object.metadata.uid, {A}, {B}))))',
        f'((shardRange({U}, {A}, {B})',
        f'shardRange({U}, {A}, {B} || ',
        'a ? b',
        'a ? b :',
        '{a: }',
        '[1,',
        'f(a,)',
        'a[',
        'a[1',
        '-',
        '!',
        'a.b(',
        'a.b(1',
        "'\\q'",
        "'\\u00'",
        'b"x',
        'r"x',
        "'''abc",
        '"""abc',
        'in',
        'a in',
        'true.x',
        '1 2',
        '1.',
        '.5',
        "'abc' 'def'",
        'a..b',
        '(a',
        'a)',
        'a,b',
        'a:b',
        'a?',
        '?',
        "'\\ud800'",
        "'\\400'",
        f'shardRange(object.metadata.uid, {A}, {B}) ||| {ok}',
        f'{ok}\n||\n{ok}',
        'Σ',
        "'Σ'",
        f"shardRange({U}, 'Σ', {B})",
        f"shardRange({U}, '0x000000000000000\\n', {B})",
        'a.b.c(',
        'f(,',
        'f(a b)',
    ]


def fragments(rng: random.Random) -> str:
    frag = [
        'shardRange',
        '(',
        ')',
        ',',
        ' ',
        'object',
        '.',
        'metadata',
        'uid',
        'namespace',
        "'0x0000000000000000'",
        "'0x8000000000000000'",
        "'0x10000000000000000'",
        '||',
        '&&',
        '|',
        '!',
        '-',
        '[',
        ']',
        '{',
        '}',
        ':',
        '?',
        '1',
        '0x1',
        '1u',
        '1.5',
        '"a"',
        "'",
        '"',
        '`',
        '`uid`',
        'x',
        'in',
        'true',
        'null',
        '==',
        '<',
        '+',
        '*',
        '$',
        '\\',
        "r'a'",
        "b'a'",
        '.5',
        "'''",
        '"""',
        '//c\n',
        '\n',
        '\t',
        'if',
        "'\\x30'",
        "'\\u00e9'",
        "'\\q'",
        '=',
        '&',
        '1e',
        '1e5',
        '0x',
    ]
    k = rng.randint(1, 12)
    pieces = [rng.choice(frag) for _ in range(k)]
    if rng.random() < 0.4:
        s = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
        pos = rng.randint(0, len(s))
        return s[:pos] + ''.join(pieces[:3]) + s[pos + rng.randint(0, 3) :]
    return ''.join(pieces)


def edits(rng: random.Random) -> str:
    valid = [
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000') || "
        "shardRange(object.metadata.namespace, '0x0000000000000000', '0x0000000000000001')",
        "(shardRange(object.metadata.uid, \"0x0000000000000000\", r'0x8000000000000000'))",
        "a.b[1] + {1: [2, 3]}.x ? -1 : !true",
        "Foo.Bar{a: 1, b: 'x'}.c(1u, 2.5e3, b'\\x00')",
    ]
    chars = list("()[]{},.:?!-+*/%<>=&|'\"`\\ \t\nabxuU0123456789_rRΣé$#@;~^") + ['\u2028', '\x00', '\x1c']
    s = rng.choice(valid)
    for _ in range(rng.randint(1, 4)):
        pos, op = rng.randint(0, len(s)), rng.random()
        if op < 0.33:
            s = s[:pos] + s[pos + 1 :]
        elif op < 0.66:
            s = s[:pos] + rng.choice(chars) + s[pos:]
        else:
            s = s[:pos] + rng.choice(chars) + s[pos + 1 :]
    return s


def main() -> None:
    rng = random.Random(39)
    inputs = written() + [fragments(rng) for _ in range(FUZZED)] + [edits(rng) for _ in range(FUZZED)]
    lines = ''.join(json.dumps(text) + '\n' for text in inputs)
    env = {**os.environ, 'GOTOOLCHAIN': 'local', 'GOFLAGS': '-mod=mod'}
    done = subprocess.run(
        ['go', 'run', './shardparse'], cwd=ORACLE, input=lines, capture_output=True, text=True, env=env, check=True
    )
    cases = [json.loads(line) for line in done.stdout.splitlines()]
    source = 'k8s.io/apiserver v0.37.2 pkg/sharding.Parse, by tools/generate_shard_vectors.py'
    body = ',\n'.join(json.dumps(case, ensure_ascii=False) for case in cases)
    OUT.write_text(f'{{"oracle": {json.dumps(source)}, "cases": [\n{body}\n]}}\n')
    print(f'{len(cases)} cases written to {OUT.relative_to(ROOT)}')


if __name__ == '__main__':
    main()
