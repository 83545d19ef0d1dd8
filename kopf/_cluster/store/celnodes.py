"""The tree cel-go's parser builds (as much as a shard selector's parser reads), and the token sets of its grammar."""
import dataclasses
from typing import Any

from kopf._cluster.store import celtokens as t

CALL, IDENT, LIST, LITERAL, MAP, SELECT, STRUCT = 1, 3, 4, 5, 6, 7, 8   # cel-go's ast.ExprKind numbers
EXPR_START = frozenset({t.LBRACKET, t.LBRACE, t.LPAREN, t.DOT, t.MINUS, t.EXCLAM, t.TRUE, t.FALSE, t.NULL,
                        t.NUM_FLOAT, t.NUM_INT, t.NUM_UINT, t.STRING, t.BYTES, t.IDENTIFIER})
MEMBER_START = EXPR_START - {t.EXCLAM}
RESERVED = frozenset({'as', 'break', 'const', 'continue', 'else', 'false', 'for', 'function', 'if', 'import', 'in',
                      'let', 'loop', 'package', 'namespace', 'null', 'return', 'true', 'var', 'void', 'while'})
Follow = tuple[frozenset[int], bool]   # the tokens that may come next, and whether what encloses may follow too


class CelError(Exception):
    """The first error of a parse, as cel-go's `Errors.GetErrors()[0].Message`."""


@dataclasses.dataclass(frozen=True)
class Node:
    kind: int                        # CALL, IDENT, LIST, LITERAL, MAP, SELECT, STRUCT
    name: str = ''                   # a call's function, an identifier, a selected field, a message's type
    args: tuple['Node', ...] = ()    # a call's arguments (not its target), a selection's operand, items
    value: Any = None                # a literal's value
    gotype: str = ''                 # a literal's Go type, as `%T` prints it
    target: 'Node | None' = None     # a member call's receiver (`x.f(...)`)
