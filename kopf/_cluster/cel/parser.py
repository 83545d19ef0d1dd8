"""The CEL parser: text to a `nodes.Expr` tree, with cel-go's node ids, offsets, macros and error texts.

A recursive-descent rendering of cel-go's CEL.g4 grammar and its `parser.go` visitor: operator
precedence, `&&`/`||` chains balanced into a tree, signed numeric literals, reserved identifiers,
optional syntax (`.?f`, `[?i]`, `{?k: v}`, `[?e]`), escaped identifiers, and the macros
(`macros.py`). Syntax errors are worded as ANTLR words them for the common cases (mismatched input,
extraneous input, token recognition errors).
"""
from __future__ import annotations

from collections.abc import Callable

from kopf._cluster.cel import lexer, macros, nodes
from kopf._cluster.cel.lexer import Token
from kopf._cluster.cel.nodes import Entry, Expr, Issues, Source

RESERVED = {'as', 'break', 'const', 'continue', 'else', 'false', 'for', 'function', 'if', 'import', 'in',
            'let', 'loop', 'package', 'namespace', 'null', 'return', 'true', 'var', 'void', 'while'}

# ANTLR's display order of the vocabulary (the grammar's token types).
VOCABULARY = ['==', '!=', 'in', '<', '<=', '>=', '>', '&&', '||', '[', ']', '{', '}', '(', ')', '.', ',', '-',
              '!', '?', ':', '+', '*', '/', '%', 'true', 'false', 'null', lexer.FLOAT, lexer.INT, lexer.UINT,
              lexer.STRING, lexer.BYTES, lexer.IDENT, lexer.ESC_IDENT]
PRIMARY_START = {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', lexer.FLOAT, lexer.INT, lexer.UINT,
                 lexer.STRING, lexer.BYTES, lexer.IDENT}
RELATIONS = {'<', '<=', '>=', '>', '==', '!=', 'in'}
OPERATORS = {'<': '_<_', '<=': '_<=_', '>=': '_>=_', '>': '_>_', '==': '_==_', '!=': '_!=_', 'in': '@in',
             '*': '_*_', '/': '_/_', '%': '_%_', '+': '_+_', '-': '_-_'}
MAX_RECURSION = 250
MAX_CODE_POINTS = 100_000


class SyntaxFailure(Exception):
    pass


def expected_set(kinds: set[str]) -> str:
    names = [k if k[0].isupper() else f"'{k}'" for k in VOCABULARY if k in kinds]
    if len(names) == 1:
        return names[0]
    return '{' + ', '.join(names) + '}'


def display(token: Token) -> str:
    return "'<EOF>'" if token.kind == lexer.EOF else f"'{token.text}'"


class Parser:
    def __init__(self, text: str) -> None:
        self.source = Source(text)
        self.issues = Issues(self.source)
        tokens = lexer.tokenize(text)
        self.lexer_errors = [t for t in tokens if t.kind == lexer.ERROR]
        self.tokens = [t for t in tokens if t.kind != lexer.ERROR]
        self.pos = 0
        self.next_id = 1
        self.depth = 0
        self.macro_calls: dict[int, Expr] = {}

    # ---- ids and errors ----

    def new_id(self, offset: int) -> int:
        id = self.next_id
        self.next_id += 1
        self.source.offsets[id] = offset
        return id

    def error(self, offset: int, message: str) -> Expr:
        id = self.new_id(offset)
        self.issues.report(offset, message, id)
        return Expr(id, nodes.UNSPECIFIED)

    def syntax_error(self, token: Token, message: str) -> SyntaxFailure:
        self.issues.report(token.offset, f'Syntax error: {message}')
        return SyntaxFailure()

    # ---- tokens ----

    @property
    def tok(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tokens[self.pos]
        if self.pos < len(self.tokens) - 1:
            self.pos += 1
        return token

    def expect(self, kinds: set[str]) -> Token:
        if self.tok.kind not in kinds:
            if len(kinds) == 1 and self.tok.kind == lexer.EOF and kinds & {')', ']', '}'}:
                raise self.syntax_error(self.tok, f"missing {expected_set(kinds)} at '<EOF>'")
            if len(kinds) == 1 and self.peek().kind in kinds:
                raise self.syntax_error(self.tok, f'extraneous input {display(self.tok)} expecting '
                                                  f'{expected_set(kinds)}')
            raise self.syntax_error(self.tok, f'mismatched input {display(self.tok)} expecting {expected_set(kinds)}')
        return self.advance()

    # ---- grammar ----

    def parse(self) -> Expr:
        if len(self.source.text) > MAX_CODE_POINTS:
            self.issues.report(-1, f'expression code point size exceeds limit: size: {len(self.source.text)}, '
                                   f'limit {MAX_CODE_POINTS}')
            return Expr(0, nodes.UNSPECIFIED)
        for token in self.lexer_errors:
            shown = token.text.replace('\n', '\\n').replace('\r', '\\r').replace('\t', '\\t')
            self.issues.report(token.offset, f"Syntax error: token recognition error at: '{shown}'")
        try:
            expr = self.expr()
            if self.tok.kind != lexer.EOF:
                how = 'extraneous' if self.peek().kind == lexer.EOF else 'mismatched'
                raise self.syntax_error(self.tok, f'{how} input {display(self.tok)} expecting <EOF>')
            if self.lexer_errors:
                return Expr(0, nodes.UNSPECIFIED)
            return expr
        except SyntaxFailure:
            return Expr(0, nodes.UNSPECIFIED)
        except RecursionError:
            self.issues.report(-1, 'max recursion depth exceeded')
            return Expr(0, nodes.UNSPECIFIED)

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_RECURSION:
            self.issues.report(-1, f'expression recursion limit exceeded: {MAX_RECURSION}')
            raise SyntaxFailure()

    def expr(self) -> Expr:
        self.enter()
        try:
            cond = self.conditional_or()
            if self.tok.kind != '?':
                return cond
            op = self.advance()
            id = self.new_id(op.offset)
            truthy = self.conditional_or()
            self.expect({':'})
            falsy = self.expr()
            return self.global_call(id, '_?_:_', [cond, truthy, falsy])
        finally:
            self.depth -= 1

    def conditional_or(self) -> Expr:
        return self.logic_chain('||', '_||_', self.conditional_and)

    def conditional_and(self) -> Expr:
        return self.logic_chain('&&', '_&&_', self.relation)

    def logic_chain(self, op: str, function: str, operand: Callable[[], Expr]) -> Expr:
        terms = [operand()]
        ops: list[int] = []
        while self.tok.kind == op:
            ops.append(self.advance().offset)
            terms.append(operand())
        if not ops:
            return terms[0]
        ids = [self.new_id(offset) for offset in ops]
        return balance(function, terms, ids)

    def relation(self) -> Expr:
        left = self.calc(0)
        while self.tok.kind in RELATIONS:
            op = self.advance()
            id = self.new_id(op.offset)
            right = self.calc(0)
            left = self.global_call(id, OPERATORS[op.kind], [left, right])
        return left

    def calc(self, level: int) -> Expr:
        ops = ({'+', '-'}, {'*', '/', '%'})
        if level == 2:
            return self.unary()
        left = self.calc(level + 1)
        while self.tok.kind in ops[level]:
            op = self.advance()
            id = self.new_id(op.offset)
            right = self.calc(level + 1)
            left = self.global_call(id, OPERATORS[op.kind], [left, right])
        return left

    def unary(self) -> Expr:
        kind = self.tok.kind
        if kind not in ('!', '-'):
            return self.member()
        count = 0
        while self.peek(count).kind == kind:
            count += 1
        after = self.peek(count).kind
        if kind == '-' and count == 1 and after in (lexer.INT, lexer.FLOAT):
            return self.member()   # a signed literal: `-1`, `-1.5`
        first = self.tok
        if after == lexer.EOF:
            end = self.peek(count)
            if kind == '-':
                self.issues.report(end.offset, "Syntax error: no viable alternative at input '-'")
                raise self.syntax_error(end, f'mismatched input {display(end)} expecting {expected_set(PRIMARY_START)}')
            raise self.syntax_error(end, f'extraneous input {display(end)} expecting {expected_set(PRIMARY_START)}')
        for _ in range(count):
            self.advance()
        self.enter()
        try:
            operand = self.member()
        finally:
            self.depth -= 1
        if count % 2 == 0:
            return operand
        id = self.new_id(first.offset)
        return self.global_call(id, '!_' if kind == '!' else '-_', [operand])

    def member(self) -> Expr:
        expr = self.primary()
        while True:
            kind = self.tok.kind
            if kind == '.':
                expr = self.member_dot(expr)
            elif kind == '[':
                op = self.advance()
                optional = self.tok.kind == '?'
                if optional:
                    self.advance()
                else:
                    self.require_start({'?'})
                id = self.new_id(op.offset)
                index = self.expr()
                self.expect({']'})
                expr = self.global_call(id, '_[?_]' if optional else '_[_]', [expr, index])
            else:
                return expr

    def member_dot(self, operand: Expr) -> Expr:
        op = self.advance()
        optional = self.tok.kind == '?'
        if optional:
            self.advance()
        if self.tok.kind == lexer.IDENT and self.peek().kind == '(' and not optional:
            name = self.advance().text
            open = self.advance()
            id = self.new_id(open.offset)
            args = self.expr_list(')')
            return self.receiver_call(id, name, operand, args)
        field_token = self.tok
        if field_token.kind not in (lexer.IDENT, lexer.ESC_IDENT):
            shown = '.' + ('?' if optional else '') + (field_token.text if field_token.kind != lexer.EOF else '')
            if field_token.kind not in lexer.KEYWORDS:
                raise self.syntax_error(field_token, f"no viable alternative at input '{shown}'")
            self.issues.report(field_token.offset, f"Syntax error: no viable alternative at input '{shown}'")
            self.advance()
            self.require_start(set())   # ANTLR recovers after the keyword: what follows must start an expression
            raise SyntaxFailure()
        name = self.escape_ident()
        if optional:
            id = self.new_id(op.offset)
            field = Expr(self.new_id(field_token.offset), nodes.LITERAL, value=name)
            return Expr(id, nodes.CALL, function='_?._', args=[operand, field])
        return Expr(self.new_id(op.offset), nodes.SELECT, operand=operand, field=name)

    def escape_ident(self) -> str:
        token = self.expect({lexer.IDENT, lexer.ESC_IDENT})
        if token.kind == lexer.ESC_IDENT:
            return token.text[1:-1]
        return token.text

    def expr_list(self, close: str) -> list[Expr]:
        args: list[Expr] = []
        if self.tok.kind == close:
            self.advance()
            return args
        self.require_start({close})
        args.append(self.expr())
        while self.tok.kind == ',':
            self.advance()
            args.append(self.expr())
        if self.tok.kind != close and self.tok.kind != lexer.EOF and self.peek().kind == close:
            raise self.syntax_error(self.tok, f"extraneous input {display(self.tok)} expecting '{close}'")
        self.expect({close, ','} if close == ')' else {close})
        return args

    def require_start(self, extra: set[str]) -> None:
        """At a place where an expression (or one of `extra`) must begin: ANTLR's error if none does."""
        if self.tok.kind in PRIMARY_START:
            return
        kinds = PRIMARY_START | extra
        if self.tok.kind == lexer.EOF:
            raise self.syntax_error(self.tok, f'mismatched input {display(self.tok)} expecting {expected_set(kinds)}')
        how = 'extraneous' if self.peek().kind in kinds else 'mismatched'
        raise self.syntax_error(self.tok, f'{how} input {display(self.tok)} expecting {expected_set(kinds)}')

    def primary(self) -> Expr:
        token = self.tok
        kind = token.kind
        if kind == '.' or kind == lexer.IDENT:
            return self.primary_ident()
        if kind == '(':
            self.advance()
            expr = self.expr()
            self.expect({')'})
            return expr
        if kind == '[':
            return self.create_list()
        if kind == '{':
            return self.create_map()
        return self.literal()

    def primary_ident(self) -> Expr:
        leading = ''
        if self.tok.kind == '.':
            self.advance()
            leading = '.'
        token = self.expect({lexer.IDENT})
        name = leading + token.text
        if self.tok.kind == '(':
            open = self.advance()
            if token.text in RESERVED:
                self.expr_list(')')
                return self.error(token.offset, f'reserved identifier: {token.text}')
            id = self.new_id(open.offset)
            return self.global_call(id, name, self.expr_list(')'))
        if self.tok.kind in ('.', '{') and self.is_message_literal():
            return self.create_message(leading, token)
        if token.text in RESERVED:
            return self.error(token.offset, f'reserved identifier: {token.text}')
        return Expr(self.new_id(token.offset), nodes.IDENT, name=name)

    def is_message_literal(self) -> bool:
        i = 0
        while self.peek(i).kind == '.' and self.peek(i + 1).kind == lexer.IDENT:
            i += 2
        return self.peek(i).kind == '{'

    def create_message(self, leading: str, first: Token) -> Expr:
        names = [first.text]
        while self.tok.kind == '.':
            self.advance()
            names.append(self.advance().text)
        op = self.advance()
        id = self.new_id(op.offset)
        entries: list[Entry] = []
        while self.tok.kind != '}':
            optional = self.tok.kind == '?'
            if optional:
                self.advance()
            field = self.escape_ident()
            colon = self.expect({':'})
            value_id = self.new_id(colon.offset)
            entries.append(Entry(value_id, field, self.expr(), optional))
            if self.tok.kind != ',':
                break
            self.advance()
        self.expect({'}'})
        return Expr(id, nodes.STRUCT, name=leading + '.'.join(names), entries=entries)

    def create_list(self) -> Expr:
        op = self.advance()
        id = self.new_id(op.offset)
        elements: list[Expr] = []
        optionals: list[int] = []
        while self.tok.kind != ']':
            if self.tok.kind == '?':
                self.advance()
                optionals.append(len(elements))
            elements.append(self.expr())
            if self.tok.kind != ',':
                break
            self.advance()
        self.expect({']', ','} if elements and self.tok.kind != ']' else {']'})
        return Expr(id, nodes.LIST, elements=elements, optional_indices=optionals)

    def create_map(self) -> Expr:
        op = self.advance()
        id = self.new_id(op.offset)
        entries: list[Entry] = []
        while self.tok.kind != '}':
            optional = self.tok.kind == '?'
            if optional:
                self.advance()
            key = self.expr()
            colon = self.expect({':'})
            entry_id = self.new_id(colon.offset)
            entries.append(Entry(entry_id, key, self.expr(), optional))
            if self.tok.kind != ',':
                break
            self.advance()
        self.expect({'}', ','} if entries and self.tok.kind != '}' else {'}'})
        return Expr(id, nodes.MAP, entries=entries)

    def literal(self) -> Expr:
        token = self.tok
        kind = token.kind
        if kind == '-':
            self.advance()
            number = self.advance()
            return self.number(number, token.offset, '-')
        if kind in (lexer.INT, lexer.UINT, lexer.FLOAT):
            self.advance()
            return self.number(token, token.offset, '')
        if kind in (lexer.STRING, lexer.BYTES):
            self.advance()
            return self.string(token)
        if kind in ('true', 'false', 'null'):
            self.advance()
            value = {'true': True, 'false': False, 'null': None}[kind]
            return Expr(self.new_id(token.offset), nodes.LITERAL, value=value)
        self.require_start(set())
        raise self.syntax_error(token, f'mismatched input {display(token)} expecting {expected_set(PRIMARY_START)}')

    def number(self, token: Token, offset: int, sign: str) -> Expr:
        from kopf._cluster.cel.celvalues import UInt
        text = token.text
        try:
            if token.kind == lexer.FLOAT:
                return Expr(self.new_id(offset), nodes.LITERAL, value=float(sign + text))
            if token.kind == lexer.UINT:
                body = text[:-1]
                value = int(body[2:], 16) if body.startswith('0x') else int(body)
                if value >= 2 ** 64:
                    return self.error(offset, 'invalid uint literal')
                return Expr(self.new_id(offset), nodes.LITERAL, value=UInt(value))
            value = int(text[2:], 16) if text.startswith('0x') else int(text)
            value = -value if sign else value
            if not -2 ** 63 <= value < 2 ** 63:
                return self.error(offset, 'invalid int literal')
            return Expr(self.new_id(offset), nodes.LITERAL, value=value)
        except ValueError:
            return self.error(offset, 'invalid double literal')

    def string(self, token: Token) -> Expr:
        from kopf._cluster.cel.unescape import unescape
        is_bytes = token.kind == lexer.BYTES
        try:
            text = unescape(token.text[1:] if is_bytes else token.text, is_bytes)
        except ValueError as e:
            return self.error(token.offset, str(e))
        value = text.encode('latin-1') if is_bytes else text
        return Expr(self.new_id(token.offset), nodes.LITERAL, value=value)

    # ---- calls and macros ----

    def global_call(self, id: int, function: str, args: list[Expr]) -> Expr:
        expanded = macros.expand(self, id, function, None, args)
        if expanded is not None:
            return expanded
        return Expr(id, nodes.CALL, function=function, args=args)

    def receiver_call(self, id: int, function: str, target: Expr, args: list[Expr]) -> Expr:
        expanded = macros.expand(self, id, function, target, args)
        if expanded is not None:
            return expanded
        return Expr(id, nodes.CALL, function=function, target=target, args=args)


def balance(function: str, terms: list[Expr], ids: list[int]) -> Expr:
    """cel-go's balancing logic manager: `a && b && c && d` becomes a balanced binary tree."""
    def build(lo: int, hi: int) -> Expr:
        mid = (lo + hi + 1) // 2
        left = terms[mid] if mid == lo else build(lo, mid - 1)
        right = terms[mid + 1] if mid == hi else build(mid + 1, hi)
        return Expr(ids[mid], nodes.CALL, function=function, args=[left, right])
    return build(0, len(ids) - 1)


def parse(text: str) -> tuple[Expr, Source, Issues]:
    parser = Parser(text)
    expr = parser.parse()
    return expr, parser.source, parser.issues

