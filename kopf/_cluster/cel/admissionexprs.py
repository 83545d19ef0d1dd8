"""ValidatingAdmissionPolicies' expressions: compiled as kube-apiserver 1.34 compiles them, and evaluated.

`compile_policy(spec)` compiles a policy's variables (in order: each sees those before it), validations,
their messageExpressions, matchConditions and auditAnnotations in the admission environment (`object`,
`oldObject`, `request`, `params`, `namespaceObject`, `authorizer`, `authorizer.requestResource`,
`variables`), and collects the refusals a real server gives when such a policy is written
(`spec_causes`). `evaluate(compiled, inputs)` runs one policy for one request and returns its decisions.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from kopf._cluster.cel import authz, celtypes, environment
from kopf._cluster.cel.celtypes import Type
from kopf._cluster.cel.celvalues import EvalError
from kopf._cluster.cel.decls import Env
from kopf._cluster.cel.nodes import Issues

S, B, T, D = celtypes.StringType, celtypes.BoolType, celtypes.TimestampType, celtypes.DynType
Cause = dict[str, Any]


def obj(type_name: str, /, **fields: Type) -> Type:
    return celtypes.object_type(type_name, fields)


GVK = obj('kubernetes.GroupVersionKind', group=S, version=S, kind=S)
GVR = obj('kubernetes.GroupVersionResource', group=S, version=S, resource=S)
USER = obj('kubernetes.UserInfo', username=S, uid=S, groups=celtypes.list_of(S),
           extra=celtypes.map_of(S, celtypes.list_of(S)))
REQUEST = obj('kubernetes.AdmissionRequest', kind=GVK, resource=GVR, subResource=S, requestKind=GVK,
              requestResource=GVR, requestSubResource=S, name=S, namespace=S, operation=S, userInfo=USER,
              dryRun=B, options=D)
NAMESPACE = obj('kubernetes.Namespace', metadata=obj(
    'kubernetes.NamespaceMetadata', name=S, generateName=S, namespace=S, labels=celtypes.map_of(S, S),
    annotations=celtypes.map_of(S, S), UID=S, creationTimestamp=T, deletionGracePeriodSeconds=celtypes.IntType,
    deletionTimestamp=T, generation=celtypes.IntType, resourceVersion=S, finalizers=celtypes.list_of(S)),
    spec=obj('kubernetes.NamespaceSpec', finalizers=celtypes.list_of(S)),
    status=obj('kubernetes.NamespaceStatus', phase=S, conditions=celtypes.list_of(obj(
        'kubernetes.NamespaceCondition', status=S, type=S, lastTransitionTime=T, message=S, reason=S))))


def admission_env(params: bool, authorizer: bool, variables: dict[str, Type] | None) -> Env:
    env = environment.base_env().copy()
    env.add_ident('object', D)
    env.add_ident('oldObject', D)
    env.add_ident('namespaceObject', NAMESPACE)
    env.add_ident('request', REQUEST)
    if params:
        env.add_ident('params', D)
    if authorizer:
        env.add_ident('authorizer', authz.AuthorizerType)
        env.add_ident('authorizer.requestResource', authz.ResourceCheckType)
    if variables is not None:
        env.add_ident('variables', celtypes.object_type('kubernetes.variables', variables))
    return env


@dataclasses.dataclass
class Expression:
    text: str
    compiled: environment.Compiled | None = None
    error: str = ''


@dataclasses.dataclass
class Compiled:
    variables: list[tuple[str, Expression]]
    validations: list[tuple[Mapping[str, Any], Expression, Expression | None]]
    conditions: list[tuple[str, Expression]]
    annotations: list[tuple[str, Expression]]


def compile_one(text: str, env: Env, returns: tuple[str, ...]) -> Expression:
    """One expression; `returns`: the allowed output types ('any' for any), as cel-go formats them."""
    result = environment.compile(text, env)
    if isinstance(result, Issues):
        return Expression(text, None, f'compilation failed: {result}')
    shown = type_string(result.output_type)
    if 'any' not in returns and shown not in returns:
        if len(returns) == 1:
            return Expression(text, None, f'must evaluate to {returns[0]} but got {shown}')
        return Expression(text, None, f"must evaluate to one of [{' '.join(returns)}] but got {shown}")
    return Expression(text, result)


def type_string(t: Type) -> str:
    """cel-go's `Type.String()`."""
    if t.kind == celtypes.TYPEPARAM:
        return f'<{t.name}>'
    name = t.name
    if not t.params:
        return name
    return f"{name}({', '.join(type_string(p) for p in t.params)})"


def compile_policy(spec: Mapping[str, Any]) -> Compiled:
    has_params = isinstance(spec.get('paramKind'), Mapping)
    declared: dict[str, Type] = {}
    composed = bool(spec.get('variables'))
    variables: list[tuple[str, Expression]] = []
    for item in spec.get('variables') or []:
        name, text = str(item.get('name') or ''), str(item.get('expression') or '')
        compiled = compile_one(text, admission_env(has_params, True, declared), ('any',))
        declared[name] = compiled.compiled.output_type if compiled.compiled else D
        variables.append((name, compiled))
    env = admission_env(has_params, True, declared if composed else None)
    message_env = admission_env(has_params, False, declared if composed else None)
    validations = []
    for item in spec.get('validations') or []:
        expression = compile_one(str(item.get('expression') or ''), env, ('bool',))
        message = None
        if str(item.get('messageExpression') or '').strip():
            message = compile_one(str(item['messageExpression']), message_env, ('string',))
        validations.append((item, expression, message))
    condition_env = admission_env(has_params, True, None)
    conditions = [(str(c.get('name') or ''), compile_one(str(c.get('expression') or ''), condition_env, ('bool',)))
                  for c in spec.get('matchConditions') or []]
    annotations = [(str(a.get('key') or ''), compile_one(str(a.get('valueExpression') or ''), env,
                                                         ('string', 'null_type')))
                   for a in spec.get('auditAnnotations') or []]
    return Compiled(variables, validations, conditions, annotations)


def spec_causes(spec: Mapping[str, Any]) -> list[Cause]:
    """The expression-related refusals of a policy's spec, with the real server's fields and texts."""
    compiled = compile_policy(spec)
    causes: list[Cause] = []
    for i, (_name, expression) in enumerate(compiled.variables):
        causes += expression_causes(f'spec.variables[{i}].expression', expression)
    for i, (_item, expression, message) in enumerate(compiled.validations):
        causes += expression_causes(f'spec.validations[{i}].expression', expression)
        if message is not None:
            causes += expression_causes(f'spec.validations[{i}].messageExpression', message)
    for i, (_name, expression) in enumerate(compiled.conditions):
        causes += expression_causes(f'spec.matchConditions[{i}].expression', expression)
    for i, (_key, expression) in enumerate(compiled.annotations):
        causes += expression_causes(f'spec.auditAnnotations[{i}].valueExpression', expression)
    return causes


def expression_causes(field: str, expression: Expression) -> list[Cause]:
    if not expression.text.strip() or not expression.error:
        return []
    message = f'Invalid value: {json.dumps(expression.text, ensure_ascii=False)}: {expression.error}'
    return [{'reason': 'FieldValueInvalid', 'message': message, 'field': field}]


class Variables:
    """`variables`: each evaluated on first use, as Kubernetes' lazy map does."""

    def __init__(self, compiled: list[tuple[str, Expression]], activation: dict[str, Any]) -> None:
        self.compiled = dict(compiled)
        self.activation = activation
        self.values: dict[str, Any] = {}

    def cel_field(self, name: str) -> Any:
        if name not in self.values:
            expression = self.compiled.get(name)
            if expression is None:
                raise EvalError(f'no such key: {name}')
            if expression.compiled is None:
                self.values[name] = EvalError(f'composited variable "{name}" fails to compile: {expression.error}')
            else:
                try:
                    self.values[name] = expression.compiled.program.eval(self.activation)
                except EvalError as e:
                    self.values[name] = EvalError(f'composited variable "{name}" fails to evaluate: {e}')
        value = self.values[name]
        if isinstance(value, EvalError):
            raise value
        return value
