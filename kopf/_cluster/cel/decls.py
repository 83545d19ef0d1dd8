"""Declarations of a CEL environment: variables, functions and their overloads, scopes.

An `Overload` carries its type signature (for the checker), its implementation (for the interpreter),
and whether it is a member (receiver-style) function. An `Env` holds the global declarations; the checker
stacks `Scope`s on it for comprehension variables.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from kopf._cluster.cel import celtypes
from kopf._cluster.cel.celtypes import Type

Impl = Callable[..., Any]


class Overload:
    __slots__ = ('args', 'id', 'impl', 'member', 'non_strict', 'result', 'type_params')

    def __init__(self, id: str, args: Sequence[Type], result: Type, impl: Impl | None = None, *,
                 member: bool = False, non_strict: bool = False) -> None:
        self.id = id
        self.args = tuple(args)
        self.result = result
        self.impl = impl
        self.member = member
        self.non_strict = non_strict
        params: list[str] = []
        for t in (*self.args, result):
            collect_params(t, params)
        self.type_params = params


def collect_params(t: Type, out: list[str]) -> None:
    if t.kind == celtypes.TYPEPARAM:
        if t.name not in out:
            out.append(t.name)
    for p in t.params:
        collect_params(p, out)


class Function:
    __slots__ = ('name', 'overloads')

    def __init__(self, name: str, overloads: Iterable[Overload] = ()) -> None:
        self.name = name
        self.overloads: list[Overload] = list(overloads)

    def by_id(self, id: str) -> Overload | None:
        for o in self.overloads:
            if o.id == id:
                return o
        return None


class Env:
    """Global identifiers and functions; a library adds to them with `add_function` / `add_ident`."""

    def __init__(self) -> None:
        self.idents: dict[str, Type] = {}
        self.values: dict[str, Any] = {}          # constants: type identifiers and the like
        self.functions: dict[str, Function] = {}

    def copy(self) -> Env:
        env = Env()
        env.idents = dict(self.idents)
        env.values = dict(self.values)
        env.functions = {name: Function(name, f.overloads) for name, f in self.functions.items()}
        return env

    def add_ident(self, name: str, t: Type, value: Any = None) -> None:
        self.idents[name] = t
        if value is not None:
            self.values[name] = value

    def add_function(self, name: str, *overloads: Overload) -> None:
        fn = self.functions.setdefault(name, Function(name))
        for o in overloads:
            if fn.by_id(o.id) is None:
                fn.overloads.append(o)


class Scope:
    """The checker's identifiers: the comprehension variables over the environment's globals."""

    def __init__(self, env: Env, parent: Scope | None = None) -> None:
        self.env = env
        self.parent = parent
        self.local: dict[str, Type] = {}

    def lookup(self, name: str) -> Type | None:
        scope: Scope | None = self
        while scope is not None:
            if name in scope.local:
                return scope.local[name]
            scope = scope.parent
        if name.startswith('.'):
            name = name[1:]
        return self.env.idents.get(name)

    def enter(self) -> Scope:
        return Scope(self.env, self)
