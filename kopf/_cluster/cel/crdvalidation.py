"""Evaluating a CRD's rules over an object, as apiextensions' `cel.Validator` does (with ratcheting).

`validate(schema, obj, old)` returns `(causes, warnings)`: the field errors of failed rules (message,
messageExpression, reason, fieldPath), of rules whose evaluation failed (in the server's words), and the
warnings that unchanged values' errors become on updates (CRD validation ratcheting).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kopf._cluster.cel import crdrules
from kopf._cluster.cel.celvalues import NONE, EvalError, Optional
from kopf._cluster.cel.crdrules import Node, Rule

Cause = dict[str, Any]
MAX_MESSAGE_BYTES = 5 * 1024
MISSING = object()


def validate(schema: Mapping[str, Any], obj: Any, old: Any = None) -> tuple[list[Cause], list[str]]:
    root = crdrules.tree(schema)
    causes: list[Cause] = []
    warnings: list[str] = []
    if root.has_rules:
        correlation = (obj, old) if old is not None else None
        walk(root, '', obj, old, correlation, None, causes, warnings)
    return causes, warnings


Pair = tuple[Any, Any] | None


def walk(node: Node, path: str, obj: Any, old: Any, current: Pair, parent: Pair,
         causes: list[Cause], warnings: list[str]) -> None:
    if obj is None or not node.has_rules:
        return
    if node.rules:
        evaluate(node, path, obj, old, current if current is not None else parent, causes, warnings)
    for sub in node.all_of:
        walk(sub, path, obj, old, None, parent, causes, warnings)   # allOf: not ratcheted (as the real one)
    if type(obj) is list and node.items is not None:
        keys = node.schema.get('x-kubernetes-list-map-keys')
        old_items = correlate_list(old, keys) if node.schema.get('x-kubernetes-list-type') == 'map' else {}
        for i, item in enumerate(obj):
            old_item = old_items.get(key_of(item, keys)) if old_items else None
            item_pair = (item, old_item) if current is not None and old_item is not None else None
            walk(node.items, f'{path}[{i}]', item, old_item, item_pair, current or parent, causes, warnings)
    elif type(obj) is dict:
        correlatable = node.schema.get('x-kubernetes-map-type') in (None, 'granular', 'atomic')
        old_map = old if correlatable and type(old) is dict else {}
        for key, value in obj.items():
            if node.additional is not None:
                sub_node: Node | None = node.additional
                sub_path = f'{path}[{key}]'
            else:
                sub_node = node.properties.get(key)
                sub_path = f'{path}.{key}' if path else key
            if sub_node is None:
                continue
            old_value = old_map.get(key)
            pair = (value, old_value) if current is not None and old_value is not None else None
            if not path and key in ('apiVersion', 'kind'):
                pair = None
            walk(sub_node, sub_path, value, old_value, pair, current or parent, causes, warnings)


def key_of(item: Any, keys: Any) -> Any:
    if type(item) is not dict or not keys:
        return None
    return tuple(repr(item.get(k)) for k in keys)


def correlate_list(old: Any, keys: Any) -> dict[Any, Any]:
    if type(old) is not list or not keys:
        return {}
    return {key_of(item, keys): item for item in old}


def ratchets(pair: Pair) -> bool:
    return pair is not None and pair[0] == pair[1]


def evaluate(node: Node, path: str, obj: Any, old: Any, correlation: Pair, causes: list[Cause],
             warnings: list[str]) -> None:
    decl = node.decl
    if decl is None:
        return
    plain = {'self': decl.convert(obj)}   # shared by the rules that do not use oldSelf (most of them)
    with_old: dict[str, Any] | None = None
    for rule in node.rules:
        program = rule.program
        if program is None:
            if rule.error:
                causes.append(invalid(path or '<nil>', node.type, f'rule compile error: {rule.error}'))
            continue
        activation = plain
        if rule.uses_old_self or rule.optional_old_self is True:
            if old is None and rule.optional_old_self is not True:
                continue
            if with_old is None:
                with_old = {'self': plain['self'], 'old': decl.convert(old) if old is not None else None}
            activation = old_activation(rule, with_old, old is not None)
        try:
            if program.root(activation) is True:
                continue
        except EvalError as e:
            causes.append(invalid(path or '<nil>', node.type, runtime_error(e, rule)))
            continue
        failed(node, rule, path, activation, correlation, causes, warnings)


def old_activation(rule: Rule, values: dict[str, Any], has_old: bool) -> dict[str, Any]:
    if rule.optional_old_self is True:
        return {'self': values['self'], 'oldSelf': Optional(values['old']) if has_old else NONE}
    return {'self': values['self'], 'oldSelf': values['old']}


def failed(node: Node, rule: Rule, path: str, activation: dict[str, Any], correlation: Pair, causes: list[Cause],
           warnings: list[str]) -> None:
    """A rule that evaluated to false: its error, or a warning when ratcheting keeps an unchanged value."""
    target = path or '<nil>'   # Go's nil field.Path, as a root rule's errors name it
    if rule.normalized_field_path:
        target = f'{path}.{rule.normalized_field_path}' if path else rule.normalized_field_path
    error = for_reason(target, node.type, rule_message(rule, activation), rule.reason)
    if not rule.uses_old_self and ratchets(correlation):
        warnings.append(f"{error['field']}: {error['message']}" if error['field'] else error['message'])
    else:
        causes.append(error)


def rule_message(rule: Rule, activation: dict[str, Any]) -> str:
    if rule.message_compiled is not None:
        try:
            value = rule.message_compiled.program.eval(activation)
        except EvalError:
            return default_message(rule)
        if type(value) is not str:
            return default_message(rule)
        text = value.strip()
        if not text or len(text.encode()) > MAX_MESSAGE_BYTES or '\n' in text:
            return default_message(rule)
        return text
    return default_message(rule)


def error_string(rule: Rule) -> str:
    return rule.message.strip() if rule.message else rule.rule.strip()


def default_message(rule: Rule) -> str:
    return rule.message.strip() if rule.message else f'failed rule: {error_string(rule)}'


def runtime_error(e: EvalError, rule: Rule) -> str:
    text = e.message
    if text.startswith('no such overload'):
        return (f"'{text}': call arguments did not match a supported operator, function or macro signature for "
                f'rule: {error_string(rule)}')
    return f'{text} evaluating rule: {error_string(rule)}'


def invalid(field: str, type_text: str, detail: str) -> Cause:
    return {'reason': 'FieldValueInvalid', 'message': f'Invalid value: "{type_text}": {detail}', 'field': field}


def for_reason(field: str, type_text: str, detail: str, reason: str | None) -> Cause:
    if reason == 'FieldValueForbidden':
        return {'reason': reason, 'message': f'Forbidden: {detail}', 'field': field}
    if reason == 'FieldValueRequired':
        return {'reason': reason, 'message': f'Required value: {detail}', 'field': field}
    if reason == 'FieldValueDuplicate':
        return {'reason': reason, 'message': f'Duplicate value: "{type_text}"', 'field': field}
    return invalid(field, type_text, detail)
