"""Kubernetes 1.34's base CEL environment (k8s.io/apiserver `pkg/cel/environment/base.go`), and compiling.

`base_env()` declares every library of the 1.34 base environment once (cached); a caller copies it and
adds its variables (`self`, `oldSelf`, `object`, `params`, ...). `compile(text, env)` parses, checks and
plans an expression: a `Compiled` with its program and type, or the `Issues` that cel-go reports.
"""
from __future__ import annotations

import functools

from kopf._cluster.cel import (
    authz,
    checker,
    extlib,
    interpreter,
    k8sformats,
    k8slib,
    k8stypes,
    literals,
    optionals,
    parser,
    stdlib,
)
from kopf._cluster.cel.celtypes import Type
from kopf._cluster.cel.checker import Checked
from kopf._cluster.cel.decls import Env
from kopf._cluster.cel.interpreter import Program
from kopf._cluster.cel.nodes import Issues


class Compiled:
    """A checked expression; its program is planned on first use (`plan()` raises `PlanError`)."""

    def __init__(self, checked: Checked, env: Env) -> None:
        self.checked = checked
        self.env = env
        self._program: Program | None = None

    @property
    def output_type(self) -> Type:
        return self.checked.output_type

    def plan(self) -> Program:
        if self._program is None:
            self._program = interpreter.plan(self.checked, self.env)
        return self._program

    @property
    def program(self) -> Program:
        return self.plan()


@functools.lru_cache(maxsize=1)
def base_env() -> Env:
    env = Env()
    stdlib.declare(env)
    optionals.optional_lib(env)
    k8slib.k8s_lists(env)
    k8slib.k8s_regex(env)
    extlib.strings_lib(env)
    extlib.sets_lib(env)
    extlib.lists_lib(env)
    extlib.comprehensions_lib(env)
    k8stypes.declare(env)
    k8sformats.declare(env)
    authz.declare(env)
    return env


def compile(text: str, env: Env) -> Compiled | Issues:
    """Parse, check and validate the literals (planning comes later: `Compiled.plan()`)."""
    expr, source, issues = parser.parse(text)
    if issues:
        return issues
    checked, issues = checker.check(expr, source, env)
    if issues:
        return issues
    issues = literals.validate(checked, env)
    if issues:
        return issues
    return Compiled(checked, env)
