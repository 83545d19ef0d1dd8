"""Why a real server refuses a CRD for its `x-kubernetes-validations`, in its words.

`rule_causes(openAPIV3Schema, field)` walks the schema as apiextensions' CRD validation does and returns
the causes: rule/message/messageExpression/reason/fieldPath checks, compile errors, `optionalOldSelf`
without `oldSelf`, `oldSelf` under lists that cannot be correlated, and static costs over the limits.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kopf._cluster.cel import crdpaths, crdrules
from kopf._cluster.cel.crdrules import STATIC_COST_LIMIT, STATIC_CRD_COST_LIMIT, Node, Rule
from kopf._cluster.cel.schematypes import MAX_REQUEST_SIZE

Cause = dict[str, Any]


def cause(reason: str, field: str, message: str) -> Cause:
    return {'reason': reason, 'message': message, 'field': field}


def quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def rule_causes(schema: Any, field: str) -> list[Cause]:
    if not isinstance(schema, Mapping):
        return []
    root = crdrules.tree(schema)
    if not root.has_rules:
        return []
    causes: list[Cause] = []
    costs: list[tuple[str, int]] = []
    walk(root, field, None, causes, costs, cardinality=1)
    total = min(sum(c for _, c in costs), 2 ** 64 - 1)
    if total > STATIC_CRD_COST_LIMIT:
        expensive = [(path, c) for path, c in costs if c >= STATIC_CRD_COST_LIMIT // 100]
        for path, _ in sorted(expensive, key=lambda pc: -pc[1])[:4]:
            causes.append(cause('FieldValueForbidden', path, 'Forbidden: contributed to estimated rule cost total '
                                                             'exceeding cost limit for entire OpenAPIv3 schema'))
        causes.append(cause('FieldValueForbidden', field, 'Forbidden: ' + cost_message(
            'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', total,
            STATIC_CRD_COST_LIMIT)))
    return causes


def walk(node: Node, path: str, uncorrelatable: str | None, causes: list[Cause], costs: list[tuple[str, int]],
         cardinality: int | None) -> None:
    schema_errors = [c for i, rule in enumerate(node.rules)
                     for c in rule_schema_causes(rule, f'{path}.x-kubernetes-validations[{i}]', node)]
    causes.extend(schema_errors)
    if node.rules and not schema_errors:
        for i, rule in enumerate(node.rules):
            rule_cel_causes(rule, f'{path}.x-kubernetes-validations[{i}]', uncorrelatable, causes, costs, cardinality,
                            node.decl)
    schema = node.schema
    if node.additional is not None:
        walk(node.additional, f'{path}.additionalProperties', uncorrelatable, causes, costs,
             child_cardinality(cardinality, schema.get('maxProperties')))
    correlatable = schema.get('x-kubernetes-map-type') in (None, 'granular', 'atomic')
    for key, sub in node.properties.items():
        walk(sub, f'{path}.properties[{key}]', uncorrelatable or (None if correlatable else path), causes, costs,
             cardinality)
    if node.items is not None:
        sub_uncorrelatable = uncorrelatable or (path if schema.get('x-kubernetes-list-type') != 'map' else None)
        walk(node.items, f'{path}.items', sub_uncorrelatable, causes, costs,
             child_cardinality(cardinality, schema.get('maxItems')))


def child_cardinality(cardinality: int | None, maximum: Any) -> int | None:
    if cardinality is None or not isinstance(maximum, int):
        return None
    return cardinality * max(maximum, 0)


def rule_schema_causes(rule: Rule, path: str, node: Node) -> list[Cause]:
    out: list[Cause] = []
    trimmed_rule, trimmed_msg = rule.rule.strip(), rule.message.strip()
    if not trimmed_rule:
        out.append(cause('FieldValueRequired', f'{path}.rule', 'Required value: rule is not specified'))
    elif rule.message and not trimmed_msg:
        out.append(cause('FieldValueInvalid', f'{path}.message',
                         f'Invalid value: {quoted(rule.message)}: must be non-empty if specified'))
    elif has_newlines(trimmed_msg):
        out.append(cause('FieldValueInvalid', f'{path}.message',
                         f'Invalid value: {quoted(rule.message)}: must not contain line breaks'))
    elif has_newlines(trimmed_rule) and not trimmed_msg:
        out.append(cause('FieldValueRequired', f'{path}.message',
                         'Required value: message must be specified if rule contains line breaks'))
    if rule.message_expression and not rule.message_expression.strip():
        out.append(cause('FieldValueRequired', f'{path}.messageExpression',
                         'Required value: messageExpression must be non-empty if specified'))
    if rule.reason is not None and rule.reason not in crdrules.REASONS:
        supported = ', '.join(quoted(r) for r in crdrules.REASONS)
        out.append(cause('FieldValueNotSupported', f'{path}.reason',
                         f'Unsupported value: {quoted(str(rule.reason))}: supported values: {supported}'))
    if rule.field_path and not rule.field_path.strip():
        out.append(cause('FieldValueInvalid', f'{path}.fieldPath',
                         f'Invalid value: {quoted(rule.field_path)}: must be non-empty if specified'))
    if has_newlines(rule.field_path):
        out.append(cause('FieldValueInvalid', f'{path}.fieldPath',
                         f'Invalid value: {quoted(rule.field_path)}: must not contain line breaks'))
    if rule.field_path and crdpaths.valid_field_path(rule.field_path, node.schema) is None:
        out.append(cause('FieldValueInvalid', f'{path}.fieldPath',
                         f'Invalid value: {quoted(rule.field_path)}: must be a valid path'))
    return out


def rule_cel_causes(rule: Rule, path: str, uncorrelatable: str | None, causes: list[Cause],
                    costs: list[tuple[str, int]], cardinality: int | None, node_decl: Any) -> None:
    if not rule.rule.strip():
        return
    if cardinality is None:
        assert node_decl is not None
        cardinality = MAX_REQUEST_SIZE // (node_decl.min_size + 1)
    expression_cost = min(rule.max_cost * cardinality, 2 ** 64 - 1) if rule.max_cost else 0
    if expression_cost > STATIC_COST_LIMIT:
        causes.append(cause('FieldValueForbidden', f'{path}.rule',
                            'Forbidden: ' + cost_message('estimated rule cost', expression_cost, STATIC_COST_LIMIT)))
    costs.append((f'{path}.rule', expression_cost))
    if rule.error:
        causes.append(cause('FieldValueInvalid', f'{path}.rule', f'Invalid value: {rule.go_json()}: {rule.error}'))
    if rule.message_error:
        causes.append(cause('FieldValueInvalid', f'{path}.messageExpression',
                            f'Invalid value: {rule.go_json()}: {rule.message_error}'))
    elif rule.message_compiled is not None:
        message_cost = rule.message_max_cost
        if message_cost > STATIC_COST_LIMIT:
            causes.append(cause('FieldValueForbidden', f'{path}.messageExpression', 'Forbidden: ' + cost_message(
                'estimated messageExpression cost', message_cost, STATIC_COST_LIMIT)))
        costs.append((f'{path}.messageExpression', message_cost))
    if rule.uses_old_self:
        if uncorrelatable is not None:
            causes.append(cause('FieldValueInvalid', f'{path}.rule', f'Invalid value: {quoted(rule.rule)}: oldSelf '
                                f'cannot be used on the uncorrelatable portion of the schema within {uncorrelatable}'))
    elif rule.optional_old_self is not None and rule.compiled is not None:
        value = 'true' if rule.optional_old_self else 'false'
        causes.append(cause('FieldValueInvalid', f'{path}.optionalOldSelf',
                            f'Invalid value: {value}: may not be set if oldSelf is not used in rule'))


def cost_message(name: str, cost: int, limit: int) -> str:
    factor = cost / limit
    if factor > 100.0:
        text = 'more than 100x'
    elif factor < 1.5:
        text = f'{factor:f}x'
    else:
        text = f'{factor:.1f}x'
    return (f'{name} exceeds budget by factor of {text} (try simplifying the rule, or adding maxItems, '
            f'maxProperties, and maxLength where arrays, maps, and strings are declared)')


def has_newlines(text: str) -> bool:
    return '\n' in text or '\r' in text
