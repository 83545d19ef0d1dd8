"""The byte comparison of the differential suite: raw answers with only the legitimately differing values replaced.

A server's answer is parsed into a tree whose scalars keep their raw text (number formatting, string
escaping), whose objects keep their key order, and whose whitespace between tokens is recorded; the values
that compare.py normalizes (uids, times, resourceVersions, generated names, allocated IPs, continue tokens,
Table ages, tokens, the namespaces' CA ConfigMap) are replaced by the same placeholders in both (managedFields'
entries in one order: a server orders them by time first), and
the tree is written back: equal bytes then mean the same field order, formatting, escaping and framing
(the trailing newline) as kube-apiserver's. No I/O.
"""
import json
import re
from typing import Any

from . import compare

WS = b' \t\r\n'
UID_IN_KEY = re.compile(rb'\\"uid\\":\\"[^\\"]*\\"')
SELF_TYPE = re.compile(rb'selfType\d+')
SCALAR = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null', re.DOTALL)


class Raw:
    """A scalar as written: `text` is its raw bytes, `value` the parsed value."""

    __slots__ = ('text', 'value')

    def __init__(self, text: bytes) -> None:
        self.text = text
        self.value = json.loads(text)


Tree = Raw | list[Any] | dict[bytes, Any]


def parse(data: bytes) -> tuple[Tree, bool]:
    """The tree of one JSON text, and whether it was compact (no whitespace between tokens)."""
    tree, end, compact = _value(data, 0)
    if data[end:].strip(WS):
        raise ValueError(f'trailing data at {end}')
    return tree, compact


def _skip(data: bytes, pos: int) -> tuple[int, bool]:
    start = pos
    while pos < len(data) and data[pos] in WS:
        pos += 1
    return pos, pos == start


def _value(data: bytes, pos: int) -> tuple[Tree, int, bool]:
    pos, compact = _skip(data, pos)
    opener = data[pos:pos + 1]
    if opener in (b'{', b'['):
        closer = b'}' if opener == b'{' else b']'
        items: Any = {} if opener == b'{' else []
        pos, tight = _skip(data, pos + 1)
        compact = compact and tight
        if data[pos:pos + 1] == closer:
            return items, pos + 1, compact
        while True:
            if opener == b'{':
                key, pos, tight = _value(data, pos)
                pos, before = _skip(data, pos)
                assert isinstance(key, Raw) and data[pos:pos + 1] == b':', f'bad object member at {pos}'
                value, pos, after = _value(data, pos + 1)
                items[key.text] = value
                compact = compact and tight and before and after
            else:
                value, pos, tight = _value(data, pos)
                items.append(value)
                compact = compact and tight
            pos, tight = _skip(data, pos)
            compact = compact and tight
            if data[pos:pos + 1] == closer:
                return items, pos + 1, compact
            assert data[pos:pos + 1] == b',', f'expected , at {pos}'
            pos += 1
    found = SCALAR.match(data, pos)
    if found is None:
        raise ValueError(f'bad JSON at {pos}')
    return Raw(found.group()), found.end(), compact


def emit(tree: Tree) -> bytes:
    if isinstance(tree, Raw):
        return tree.text
    if isinstance(tree, list):
        return b'[' + b','.join(emit(item) for item in tree) + b']'
    return b'{' + b','.join(key + b':' + emit(value) for key, value in tree.items()) + b'}'


def placeholder(text: str) -> Raw:
    return Raw(json.dumps(text).encode())


def _name(key: bytes) -> str:
    return str(json.loads(key))


def normalize(tree: Tree) -> Tree:
    """The tree with compare.normalize()'s placeholders, in place of the same values, keeping everything else."""
    if isinstance(tree, list):
        return [normalize(item) for item in tree if not _furniture(item)]
    if not isinstance(tree, dict):
        return tree
    result: dict[bytes, Any] = {}
    for key, value in tree.items():
        name = _name(key)
        empty = (isinstance(value, Raw) and value.value in ('', None)) or value in ([], {})
        if name in compare.DROPPED:
            continue
        if name.startswith('k:') and '"uid":"' in name:   # an ownerReference in managedFields: by its uid
            key = UID_IN_KEY.sub(rb'\"uid\":\"<uid>\"', key)
        if name == 'managedFields' and isinstance(value, list):
            result[key] = sorted((normalize(entry) for entry in value), key=emit)
        elif name in compare.OPAQUE and not empty:
            result[key] = placeholder('<rv>') if name == 'resourceVersion' else placeholder(f'<{name}>')
        elif name in compare.TIMES and not empty:
            result[key] = placeholder('<time>')
        elif name == 'message' and isinstance(value, Raw) and b'selfType' in value.text:   # as compare.view()
            result[key] = Raw(SELF_TYPE.sub(b'selfType<N>', value.text))
        else:
            result[key] = normalize(value)
    generate = tree.get(b'"generateName"')
    if isinstance(generate, Raw) and generate.value and b'"name"' in result:
        result[b'"name"'] = placeholder('<generated>')
    kind = tree.get(b'"kind"')
    if isinstance(kind, Raw) and kind.value == 'Table':
        _ages(tree, result)
    return result


def _ages(tree: dict[bytes, Any], result: dict[bytes, Any]) -> None:
    columns = tree.get(b'"columnDefinitions"') or []
    ages = [i for i, c in enumerate(columns) if isinstance(c, dict)
            and isinstance(c.get(b'"name"'), Raw) and c[b'"name"'].value == 'Age']
    rows = result.get(b'"rows"')
    for row in rows if isinstance(rows, list) else []:
        cells = row.get(b'"cells"') if isinstance(row, dict) else None
        if isinstance(cells, list):
            row[b'"cells"'] = [placeholder('<age>') if i in ages else cell for i, cell in enumerate(cells)]
    if isinstance(rows, list):
        result[b'"rows"'] = [row for row in rows if not (
            isinstance(row, dict) and isinstance(row.get(b'"cells"'), list) and row[b'"cells"']
            and isinstance(row[b'"cells"'][0], Raw) and row[b'"cells"'][0].value == compare.FURNITURE)]


def _furniture(item: Any) -> bool:
    meta = item.get(b'"metadata"') if isinstance(item, dict) else None
    if isinstance(item, dict) and isinstance(item.get(b'"object"'), dict):   # a watch event
        meta = item[b'"object"'].get(b'"metadata"')
    name = meta.get(b'"name"') if isinstance(meta, dict) else None
    return isinstance(name, Raw) and name.value == compare.FURNITURE


def rendered(data: bytes, generated: dict[str, str] | None = None) -> str:
    """The normalized bytes of one answer as text: `<not compact>` and `<no newline>` marks where due.

    `generated`: names a server generated (in Status messages too) and their placeholder.
    """
    try:
        tree, compact = parse(data)
    except (ValueError, AssertionError):
        return f'<not JSON> {data[:200]!r}'
    text = emit(normalize(tree)).decode('utf-8', 'backslashreplace')
    for name, replacement in (generated or {}).items():
        text = text.replace(name, replacement)
    return (text + ('' if compact else ' <not compact>') +
            ('\\n' if data.endswith(b'\n') and not data.endswith(b'\n\n') else ' <no single newline>'))
