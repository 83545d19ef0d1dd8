"""`'...'.format([args])`: cel-go's string formatting (ext.Strings v1-v3), the common clauses."""
from __future__ import annotations

import re
from typing import Any

from kopf._cluster.cel.celvalues import Duration, EvalError, Timestamp, UInt, format_double, to_text, type_of

CLAUSE = re.compile(r'%(?:\.(\d+))?([sdfeEbxXo%])')


def string_format(template: str, args: Any) -> str:
    out: list[str] = []
    pos = 0
    index = 0
    while True:
        i = template.find('%', pos)
        if i < 0:
            out.append(template[pos:])
            return ''.join(out)
        out.append(template[pos:i])
        m = CLAUSE.match(template, i)
        if m is None:
            if i + 1 >= len(template):
                raise EvalError('unexpected end of string')
            raise EvalError(f'could not parse formatting clause: unrecognized formatting clause "{template[i + 1]}"')
        precision, verb = m.group(1), m.group(2)
        pos = m.end()
        if verb == '%':
            out.append('%')
            continue
        if index >= len(args):
            raise EvalError(f'index {index} out of range')
        out.append(clause(verb, precision, args[index]))
        index += 1


def clause(verb: str, precision: str | None, arg: Any) -> str:
    t = type(arg)
    if verb == 's':
        return stringify(arg)
    if verb == 'd':
        if t in (int, UInt):
            return str(int(arg))
        raise EvalError(f'error during formatting: decimal clause can only be used on integers, was given '
                        f'{type_of(arg).name}')
    if verb in 'fe':
        if t not in (int, UInt, float):
            raise EvalError(f'error during formatting: fixed-point clause can only be used on doubles, was given '
                            f'{type_of(arg).name}')
        digits = 6 if precision is None else int(precision)
        return f'{float(arg):.{digits}{verb}}'
    if verb == 'b':
        if t is bool:
            return '1' if arg else '0'
        return format(int(arg), 'b')
    if verb in 'xX':
        if t is str:
            text = arg.encode().hex()
        elif t is bytes:
            text = arg.hex()
        else:
            text = format(int(arg), 'x')
        return str(text.upper() if verb == 'X' else text)
    return format(int(arg), 'o')


def stringify(arg: Any) -> str:
    t = type(arg)
    if t is float:
        return format_double(arg)
    if t in (list, tuple):
        return '[' + ', '.join(stringify_in_list(a) for a in arg) + ']'
    if t is dict:
        items = sorted(arg.items(), key=lambda kv: stringify(kv[0]))
        return '{' + ', '.join(f'{stringify_in_list(k)}: {stringify_in_list(v)}' for k, v in items) + '}'
    if arg is None:
        return 'null'
    if t in (Duration, Timestamp, bool, int, UInt, str, bytes):
        return to_text(arg)
    return str(arg)


def stringify_in_list(arg: Any) -> str:
    if type(arg) is str:
        return f'"{arg}"'
    return stringify(arg)
