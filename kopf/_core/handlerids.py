"""Handler ids: the persistent key of a handler in progress storages, status and indices.

- plain function or method: its `__qualname__` (`fn`, `Cls.method`, `outer.<locals>.inner`);
- `functools.partial` and `functools.wraps` wrappers: the id of the wrapped function;
- lambda: `lambda:<source path>:<first line>`;
- with `field=`: `<id>/<field.dotted.path>` (also with an explicit `id=`; not for indices);
- sub-handlers: `<parent id>/<sub id>`.
"""
import functools
from collections.abc import Callable
from typing import Any, NewType

from kopf._shared import fields

#: A handler's id: the function's name (or `id=`), with the field for field handlers and the parent's
#: id for sub-handlers (`parent/child`); the key of its progress record and of its result in status.
HandlerId = NewType('HandlerId', str)


def get_callable_id(fn: Callable[..., Any]) -> str:
    """The id a callable gets when no explicit `id=` is given."""
    while True:  # unwrap partials (of partials) and @functools.wraps-style decorators
        if isinstance(fn, functools.partial):
            fn = fn.func
        elif hasattr(fn, '__wrapped__'):
            fn = fn.__wrapped__
        else:
            break
    name = getattr(fn, '__name__', None)
    code = getattr(fn, '__code__', None)
    if name == '<lambda>' and code is not None:
        return f'lambda:{code.co_filename}:{code.co_firstlineno}'
    qualname = getattr(fn, '__qualname__', None)
    if isinstance(qualname, str):
        return qualname
    return type(fn).__qualname__  # a callable object: its class


def form_id(
        fn: Callable[..., Any],
        *,
        id: str | None = None,
        field: fields.FieldPath | None = None,
        parent_id: str | None = None,
) -> HandlerId:
    """The full handler id: the explicit or callable id, a `/field` suffix, a `parent/` prefix."""
    if id is not None and not isinstance(id, str):
        raise TypeError(f'A handler id must be a string, got {id!r}.')
    if id == '':
        raise TypeError('A handler id must not be empty.')
    result = id if id is not None else get_callable_id(fn)
    if field:
        result = f'{result}/{".".join(field)}'
    if parent_id is not None:
        result = f'{parent_id}/{result}'
    return HandlerId(result)
