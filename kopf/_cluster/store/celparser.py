"""CEL expressions parsed as cel-go parses them (no macros), with the first error worded as cel-go reports it.

A recursive descent over cel-go's grammar (`CEL.g4`) that follows its ANTLR parser where it reports
errors: the `sync` before decisions (a token that cannot start what comes is "extraneous input" if
the one after it could, else "mismatched input … expecting {…}"), `match` (extraneous, "missing X at
…" when the token could follow X, else mismatched), and failed predictions ("no viable alternative at
input …"). Syntax errors come before the checks of the tree (reserved identifiers, literals), as in
cel-go, where the visitor runs after the parse. The tree keeps what k8s.io/apiserver's shard selector
parser looks at: each node's kind (cel-go's `ast.ExprKind` numbers), functions, names and literals.
"""
import re
from typing import Any

from kopf._cluster.store import celprimary
from kopf._cluster.store import celtokens as t
from kopf._cluster.store.celnodes import CALL, EXPR_START, MEMBER_START, SELECT, CelError, Follow, Node

RELATIONS = {t.LESS: '_<_', t.LESS_EQUALS: '_<=_', t.GREATER_EQUALS: '_>=_', t.GREATER: '_>_', t.EQUALS: '_==_',
             t.NOT_EQUALS: '_!=_', t.IN: '@in'}
PRODUCTS = {t.STAR: '_*_', t.SLASH: '_/_', t.PERCENT: '_%_'}
SUMS = {t.PLUS: '_+_', t.MINUS: '_-_'}
SIZE_LIMIT = 100_000
RESERVED_AFTER_DOT = re.compile(r"no viable alternative at input '.(true|false|null)'")


def parse(text: str) -> Node:
    """The tree of a CEL expression, or CelError with the first error as cel-go words it."""
    size = len(text)
    if size > SIZE_LIMIT:
        raise CelError(f'expression code point size exceeds limit: size: {size}, limit {SIZE_LIMIT}')
    try:
        return _Parser(text).start()
    except t.LexError as exc:
        raise CelError(f'Syntax error: {exc}') from None


def _set(*types: int) -> frozenset[int]:
    return frozenset(types)


def _expecting(types: frozenset[int]) -> str:
    names = [t.display(x) for x in sorted(types)]
    return names[0] if len(names) == 1 else '{' + ', '.join(names) + '}'


def _shown(token: t.Token) -> str:
    text = token.text.replace('\n', '\\n').replace('\r', '\\r').replace('\t', '\\t')
    return f"'{text}'"


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = t.Tokens(text)
        self.follows: list[Follow] = []   # per rule invocation: what may follow it in its caller
        self.later: list[str] = []        # the tree's errors (cel-go's visitor), reported if the syntax is fine

    # -- ANTLR's error reporting ------------------------------------------------------------------

    def fail(self, message: str) -> CelError:
        return CelError(f'Syntax error: {message}')

    def sync(self, expected: frozenset[int]) -> None:
        """Before a decision whose every branch takes a token: a token none takes is an error here."""
        if self.tokens.la() in expected:
            return
        first = self.tokens.lt()
        if self.tokens.la(2) in expected:
            raise self.fail(f'extraneous input {_shown(first)} expecting {_expecting(expected)}')
        raise self.fail(f'mismatched input {_shown(first)} expecting {_expecting(expected)}')

    def loop_back(self, expected: frozenset[int]) -> None:
        """At the back of a `(…)+` loop, ANTLR reports an unexpected token without trying to delete it."""
        if self.tokens.la() not in expected:
            raise self.fail(f'extraneous input {_shown(self.tokens.lt())} expecting {_expecting(expected)}')

    def match(self, kind: int, after: Follow) -> t.Token:
        """Take a token of this kind; `after`: what may follow it in this rule (for "missing X at …")."""
        if self.tokens.la() == kind:
            return self.tokens.consume()
        first = self.tokens.lt()
        if self.tokens.la(2) == kind:
            raise self.fail(f'extraneous input {_shown(first)} expecting {t.display(kind)}')
        if first.type in self.full(after):
            raise self.fail(f'missing {t.display(kind)} at {_shown(first)}')
        raise self.fail(f'mismatched input {_shown(first)} expecting {t.display(kind)}')

    def full(self, after: Follow) -> frozenset[int]:
        tokens, open_end = after
        for outer, more in reversed(self.follows):
            if not open_end:
                break
            tokens, open_end = tokens | outer, more
        return tokens

    def no_viable(self, start: t.Token, stop: t.Token) -> CelError:
        text = '<EOF>' if start.type == t.EOF else self.tokens.between(start, stop)
        message = f"no viable alternative at input {_shown(t.Token(0, text, 0))}"
        # cel-go words a keyword after a dot as it did before (its parser.go's reservedIdentifier).
        return self.fail(RESERVED_AFTER_DOT.sub(r"mismatched input '\1' expecting IDENTIFIER", message))

    def call(self, follow: Follow, rule: Any, *args: Any) -> Any:
        self.follows.append(follow)
        try:
            return rule(*args)
        finally:
            self.follows.pop()

    # -- the rules --------------------------------------------------------------------------------

    def start(self) -> Node:
        node: Node = self.call((_set(t.EOF), False), self.expr)
        self.match(t.EOF, (frozenset(), False))
        if self.later:
            raise CelError(self.later[0])
        return node

    def expr(self) -> Node:
        cond: Node = self.call((_set(t.QUESTION), True), self.disjunction)
        if self.tokens.la() != t.QUESTION:
            return cond
        self.tokens.consume()
        then: Node = self.call((_set(t.COLON), False), self.disjunction)
        self.match(t.COLON, (EXPR_START, False))
        other: Node = self.call((frozenset(), True), self.expr)
        return Node(CALL, '_?_:_', (cond, then, other))

    def disjunction(self) -> Node:
        terms = [self.call((_set(t.OR), True), self.conjunction)]
        while self.tokens.la() == t.OR:
            self.tokens.consume()
            terms.append(self.call((_set(t.OR), True), self.conjunction))
        return _balanced('_||_', terms)

    def conjunction(self) -> Node:
        terms = [self.call((_set(t.AND), True), self.relation)]
        while self.tokens.la() == t.AND:
            self.tokens.consume()
            terms.append(self.call((_set(t.AND), True), self.relation))
        return _balanced('_&&_', terms)

    def relation(self) -> Node:
        ops = frozenset(RELATIONS)
        node: Node = self.call((ops, True), self.calc, 0)
        while self.tokens.la() in RELATIONS:
            op = RELATIONS[self.tokens.consume().type]
            node = Node(CALL, op, (node, self.call((ops, True), self.calc, 0)))
        return node

    def calc(self, least: int) -> Node:
        ops = frozenset(PRODUCTS) | frozenset(SUMS)
        node: Node = self.call((ops, True), self.unary)
        while True:
            kind = self.tokens.la()
            level = 2 if kind in PRODUCTS else 1 if kind in SUMS else 0
            if not level or level < least:
                return node
            op = {**PRODUCTS, **SUMS}[self.tokens.consume().type]
            node = Node(CALL, op, (node, self.call((ops, True), self.calc, level + 1)))

    def unary(self) -> Node:
        self.sync(EXPR_START)
        first = self.tokens.lt()
        if first.type == t.EXCLAM or (first.type == t.MINUS and self.tokens.la(2) not in (t.NUM_INT, t.NUM_FLOAT)):
            if first.type == t.MINUS and self.tokens.la(2) not in MEMBER_START:
                raise self.no_viable(first, self.tokens.lt(2))
            count = 0
            while True:   # `'!'+` and `'-'+`: a `-` before a number is one more operator, not the number's sign
                self.tokens.consume()
                count += 1
                self.loop_back(MEMBER_START | {first.type})
                if self.tokens.la() != first.type:
                    break
                if first.type == t.MINUS and self.tokens.la(2) not in MEMBER_START:
                    raise self.no_viable(self.tokens.lt(), self.tokens.lt(2))
            operand: Node = self.call((frozenset(), True), self.member)
            return operand if count % 2 == 0 else Node(CALL, '!_' if first.type == t.EXCLAM else '-_', (operand,))
        return self.call((frozenset(), True), self.member)   # type: ignore[no-any-return]

    def member(self) -> Node:
        after: Follow = (_set(t.DOT, t.LBRACKET), True)
        node: Node = self.call(after, self.primary)
        while self.tokens.la() in (t.DOT, t.LBRACKET):
            if self.tokens.la() == t.LBRACKET:
                node = self.index(node, after)
                continue
            dot, second = self.tokens.lt(), self.tokens.la(2)
            if second not in (t.QUESTION, t.IDENTIFIER, t.ESC_IDENTIFIER):
                raise self.no_viable(dot, self.tokens.lt(2))
            if second == t.IDENTIFIER and self.tokens.la(3) == t.LPAREN:
                self.tokens.consume()
                name = self.tokens.consume().text
                self.tokens.consume()
                args = self.arguments(after)
                node = Node(CALL, name, args, target=node)
                continue
            self.tokens.consume()
            optional = self.tokens.la() == t.QUESTION and bool(self.tokens.consume())
            field = self.call(after, self.escaped_ident)
            if optional:
                self.later.append("unsupported syntax '.?'")
            node = Node(SELECT, field, (node,))
        return node

    def index(self, target: Node, after: Follow) -> Node:
        self.tokens.consume()
        self.sync(EXPR_START | {t.QUESTION})
        optional = self.tokens.la() == t.QUESTION and bool(self.tokens.consume())
        key: Node = self.call((_set(t.RBRACKET), False), self.expr)
        self.match(t.RBRACKET, after)
        if optional:
            self.later.append("unsupported syntax '[?'")
        return Node(CALL, '_[_]', (target, key))

    def arguments(self, after: Follow) -> tuple[Node, ...]:
        """After `(`: optional comma-separated expressions, then `)`."""
        self.sync(EXPR_START | {t.RPAREN})
        args: list[Node] = []
        if self.tokens.la() in EXPR_START:
            args.append(self.call((_set(t.COMMA, t.RPAREN), False), self.expr))
            while self.tokens.la() == t.COMMA:
                self.tokens.consume()
                args.append(self.call((_set(t.COMMA, t.RPAREN), False), self.expr))
        self.match(t.RPAREN, after)
        return tuple(args)

    def escaped_ident(self) -> str:
        self.sync(_set(t.IDENTIFIER, t.ESC_IDENTIFIER))
        token = self.tokens.consume()
        return token.text[1:-1] if token.type == t.ESC_IDENTIFIER else token.text

    def primary(self) -> Node:
        return celprimary.primary(self)


def _balanced(function: str, terms: list[Node]) -> Node:
    """cel-go's balanced tree of `||` or `&&` terms (the order of the leaves is that of the text)."""
    if len(terms) == 1:
        return terms[0]
    middle = len(terms) // 2
    return Node(CALL, function, (_balanced(function, terms[:middle]), _balanced(function, terms[middle:])))
