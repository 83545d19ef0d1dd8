"""The CEL syntax tree, its source positions, and cel-go's rendering of issues (``ERROR: <input>:1:6: ...``).

An expression is a tree of `Expr` nodes, each with a unique id; `Source` maps ids to code-point offsets,
and offsets to lines and columns, as cel-go's `common.Source` does. `Issues` collects errors and renders
them exactly as cel-go's `Errors.ToDisplayString()`: sorted by position, each with its source line and a
caret line.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# Node kinds.
LITERAL = 'literal'
IDENT = 'ident'
SELECT = 'select'
CALL = 'call'
LIST = 'list'
MAP = 'map'
STRUCT = 'struct'
COMPREHENSION = 'comprehension'
UNSPECIFIED = 'unspecified'


class Expr:
    """One node: `kind` and the fields that kind uses (the others stay at their defaults)."""
    __slots__ = (
        'accu_init',
        'accu_var',
        'args',
        'elements',
        'entries',
        'field',
        'function',
        'id',
        'iter_range',
        'iter_var',
        'iter_var2',
        'kind',
        'loop_condition',
        'loop_step',
        'macro',
        'name',
        'operand',
        'optional_indices',
        'result',
        'target',
        'test_only',
        'value',
    )

    def __init__(self, id: int, kind: str, **fields: Any) -> None:
        self.id = id
        self.kind = kind
        self.value: Any = None
        self.name = ''
        self.operand: Expr | None = None
        self.field = ''
        self.test_only = False
        self.function = ''
        self.target: Expr | None = None
        self.args: list[Expr] = []
        self.elements: list[Expr] = []
        self.optional_indices: list[int] = []
        self.entries: list[Entry] = []
        self.iter_range: Expr | None = None
        self.iter_var = ''
        self.iter_var2 = ''
        self.accu_var = ''
        self.accu_init: Expr | None = None
        self.loop_condition: Expr | None = None
        self.loop_step: Expr | None = None
        self.result: Expr | None = None
        self.macro = ''   # comprehensions: the macro they expand ('all', 'exists', 'exists_one', 'map', 'filter')
        for key, val in fields.items():
            setattr(self, key, val)

    def __repr__(self) -> str:
        return f'Expr({self.id}, {self.kind}, {debug(self)})'


class Entry:
    """A map literal's `key: value`, or a message literal's `field: value` (`key` is then the field name)."""
    __slots__ = ('id', 'key', 'optional', 'value')

    def __init__(self, id: int, key: Expr | str, value: Expr, optional: bool) -> None:
        self.id = id
        self.key = key
        self.value = value
        self.optional = optional


def debug(e: Expr) -> str:
    """A compact, deterministic rendering for tests and error texts that print an expression."""
    if e.kind == LITERAL:
        return repr(e.value)
    if e.kind == IDENT:
        return e.name
    if e.kind == SELECT:
        assert e.operand is not None
        return f'{debug(e.operand)}.{e.field}' + ('~test-only~' if e.test_only else '')
    if e.kind == CALL:
        args = ', '.join(debug(a) for a in e.args)
        prefix = f'{debug(e.target)}.' if e.target is not None else ''
        return f'{prefix}{e.function}({args})'
    if e.kind == LIST:
        return '[' + ', '.join(debug(a) for a in e.elements) + ']'
    if e.kind in (MAP, STRUCT):
        items = ', '.join(f'{k if isinstance(k := en.key, str) else debug(k)}: {debug(en.value)}'
                          for en in e.entries)
        return f'{e.name}{{{items}}}'
    if e.kind == COMPREHENSION:
        return f'__comprehension__({e.iter_var}, {e.accu_var})'
    return '<<error>>'


class Source:
    """The expression's text, its line starts, and the offsets of the nodes (in code points)."""

    def __init__(self, text: str, description: str = '<input>') -> None:
        self.text = text
        self.description = description
        self.line_offsets: list[int] = []
        for i, ch in enumerate(text):
            if ch == '\n':
                self.line_offsets.append(i + 1)
        self.line_offsets.append(len(text) + 1)
        self.offsets: dict[int, int] = {}

    def location(self, offset: int) -> tuple[int, int]:
        """A code-point offset as (line, column): 1-based line, 0-based column, as cel-go's Location."""
        line = 1
        start = 0
        for lo in self.line_offsets:
            if lo > offset:
                break
            line += 1
            start = lo
        return line, offset - start

    def snippet(self, line: int) -> str | None:
        starts = [0, *self.line_offsets]
        if line < 1 or line > len(self.line_offsets):
            return None
        begin, end = starts[line - 1], starts[line] - 1
        return self.text[begin:end]


class Issue:
    __slots__ = ('expr_id', 'message', 'offset')

    def __init__(self, offset: int, message: str, expr_id: int = 0) -> None:
        self.offset = offset   # -1: no location
        self.message = message
        self.expr_id = expr_id


class Issues(Exception):
    """Parse or check errors, rendered as cel-go does (its `Issues.String()`)."""

    MAX = 100

    def __init__(self, source: Source, issues: Sequence[Issue] = ()) -> None:
        super().__init__()
        self.source = source
        self.issues = list(issues)
        self.count = len(self.issues)

    def report(self, offset: int, message: str, expr_id: int = 0) -> None:
        self.count += 1
        if self.count <= self.MAX:
            self.issues.append(Issue(offset, message, expr_id))

    def __bool__(self) -> bool:
        return bool(self.issues)

    def __str__(self) -> str:
        def key(issue: Issue) -> tuple[int, int]:
            return self.source.location(issue.offset) if issue.offset >= 0 else (-1, -1)
        ordered = sorted(self.issues, key=key)
        lines = [render_issue(self.source, issue) for issue in ordered[:self.MAX]]
        if self.count > self.MAX:
            lines.append(f'{self.count - self.MAX} more errors were truncated')
        return '\n'.join(lines)


def render_issue(source: Source, issue: Issue) -> str:
    line, column = source.location(issue.offset) if issue.offset >= 0 else (-1, -1)
    text = f'ERROR: {source.description}:{line}:{column + 1}: {issue.message}'
    snippet = source.snippet(line) if line > 0 else None
    if snippet is not None and len(snippet) <= 16384:
        snippet = snippet.replace('\t', ' ')
        marks = ''.join('\uff0e' if len(ch.encode()) > 1 else '.' for ch in snippet[:column])
        under = snippet[column:column + 1]
        marks += '\uff3e' if under and len(under.encode()) > 1 else '^'
        text += f'\n | {snippet}\n | {marks}'
    return text
