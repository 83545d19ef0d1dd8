"""CRD `x-kubernetes-validations`: compiled when a CRD is written, evaluated when its objects are.

`rule_causes(schema, field)` are the causes a real server gives when it refuses a CRD for its rules
(empty rules, bad messages or reasons, compile errors in cel-go's words, `optionalOldSelf` without
`oldSelf`, `oldSelf` where it cannot be correlated, estimated costs over the budget).
`validate(schema, obj, old)` evaluates every rule at every level of an object (and its old version, for
transition rules) as apiextensions-apiserver's `cel.Validator` does, returning field-error causes and
the warnings that ratcheting turns unchanged values' errors into.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kopf._cluster.cel import celtypes, cost, environment
from kopf._cluster.cel.crdpaths import valid_field_path
from kopf._cluster.cel.interpreter import PlanError
from kopf._cluster.cel.nodes import Issues
from kopf._cluster.cel.schematypes import Decl, decl_type

Cause = dict[str, Any]
REASONS = ('FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired')
PER_CALL_LIMIT = 1_000_000
STATIC_COST_LIMIT = 10_000_000
STATIC_CRD_COST_LIMIT = 100_000_000


class Rule:
    def __init__(self, spec: Mapping[str, Any]) -> None:
        self.spec = spec
        self.rule = str(spec.get('rule') or '')
        self.message = str(spec.get('message') or '')
        self.message_expression = str(spec.get('messageExpression') or '')
        self.reason: str | None = spec.get('reason')
        self.field_path = str(spec.get('fieldPath') or '')
        self.optional_old_self = spec.get('optionalOldSelf')
        self.compiled: environment.Compiled | None = None
        self.program: Any = None   # the planned program of `compiled`
        self.message_compiled: environment.Compiled | None = None
        self.error = ''
        self.message_error = ''
        self.uses_old_self = False
        self.normalized_field_path = ''
        self.max_cost = 0
        self.message_max_cost = 0

    def go_json(self) -> str:
        """The internal ValidationRule as Go's json.Marshal renders it in a field error."""
        import json
        reason = None if self.reason is None else self.reason
        fields = {'Rule': self.rule, 'Message': self.message, 'MessageExpression': self.message_expression,
                  'Reason': reason, 'FieldPath': self.field_path, 'OptionalOldSelf': self.optional_old_self}
        text = json.dumps(fields, separators=(',', ':'), ensure_ascii=False)
        return text.replace('<', '\\u003c').replace('>', '\\u003e').replace('&', '\\u0026')


class Node:
    """One schema level: its rules (compiled lazily) and the levels below it."""

    def __init__(self, schema: Mapping[str, Any], root: bool) -> None:
        self.schema = schema
        self.root = root
        self.type = str(schema.get('type') or '')
        self.rules = [Rule(r) for r in schema.get('x-kubernetes-validations') or () if isinstance(r, Mapping)]
        self.decl: Decl | None = None
        self.properties: dict[str, Node] = {}
        self.additional: Node | None = None
        self.items: Node | None = None
        self.all_of: list[Node] = []
        self.has_rules = bool(self.rules)
        for key, sub in (schema.get('properties') or {}).items():
            if isinstance(sub, Mapping):
                self.properties[key] = Node(sub, bool(sub.get('x-kubernetes-embedded-resource')))
        additional = schema.get('additionalProperties')
        if isinstance(additional, Mapping):
            self.additional = Node(additional, bool(additional.get('x-kubernetes-embedded-resource')))
        items = schema.get('items')
        if isinstance(items, Mapping):
            self.items = Node(items, bool(items.get('x-kubernetes-embedded-resource')))
        for sub in schema.get('allOf') or ():
            if isinstance(sub, Mapping):
                self.all_of.append(Node(sub, False))
        children = [*self.properties.values(), *self.all_of]
        children += [n for n in (self.additional, self.items) if n is not None]
        self.has_rules = self.has_rules or any(child.has_rules for child in children)
        if self.rules:
            self.compile()

    def compile(self) -> None:
        self.decl = decl_type(self.schema, self.root)
        if self.decl is None:
            return
        base = environment.base_env()
        env = base.copy()
        env.add_ident('self', self.decl.type)
        env.add_ident('oldSelf', self.decl.type)
        optional_env = base.copy()
        optional_env.add_ident('self', self.decl.type)
        optional_env.add_ident('oldSelf', celtypes.optional_of(self.decl.type))
        for rule in self.rules:
            compile_rule(rule, optional_env if rule.optional_old_self is True else env, self)


def compile_rule(rule: Rule, env: Any, node: Node) -> None:
    if not rule.rule.strip():
        return
    compiled = environment.compile(rule.rule, env)
    if isinstance(compiled, Issues):
        rule.error = f'compilation failed: {compiled}'
        return
    if compiled.output_type.kind != celtypes.BOOL:
        rule.error = 'cel expression must evaluate to a bool'
        return
    try:
        rule.program = compiled.plan()
    except PlanError as e:
        rule.error = f'program instantiation failed: {e}'
        return
    rule.compiled = compiled
    rule.uses_old_self = 'oldSelf' in compiled.checked.refs.values()
    assert node.decl is not None
    rule.max_cost = cost.estimate(compiled.checked, node.decl)
    if rule.message_expression:
        message = environment.compile(rule.message_expression, env)
        if isinstance(message, Issues):
            rule.message_error = f'messageExpression compilation failed: {message}'
        elif message.output_type.kind != celtypes.STRING:
            rule.message_error = 'messageExpression must evaluate to a string'
        else:
            try:
                message.plan()
                rule.message_compiled = message
            except PlanError as e:
                rule.message_error = f'messageExpression instantiation failed: {e}'
            rule.message_max_cost = cost.estimate(message.checked, node.decl)
    if rule.field_path:
        normalized = valid_field_path(rule.field_path, node.schema)
        rule.normalized_field_path = normalized or ''


_cache: dict[int, tuple[Mapping[str, Any], Node]] = {}


def tree(schema: Mapping[str, Any]) -> Node:
    """The compiled rules of a CRD version's schema (cached per schema object)."""
    cached = _cache.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    node = Node(schema, True)
    _cache[id(schema)] = (schema, node)
    return node


def has_rules(schema: Mapping[str, Any]) -> bool:
    return tree(schema).has_rules
