"""ValidatingAdmissionPolicies and their bindings: what a real server refuses when they are written.

The policy's expressions are compiled (`kopf._cluster.cel.policies`) and their errors refused in its
words; the binding's `validationActions`, `paramRef` and `policyName` are checked as
`k8s.io/kubernetes/pkg/apis/admissionregistration/validation` checks them.
"""
import json
from collections.abc import Mapping
from typing import Any

Cause = dict[str, Any]
ACTIONS = ('Audit', 'Deny', 'Warn')


def cause(reason: str, field: str, message: str) -> Cause:
    return {'reason': reason, 'message': message, 'field': field}


def prepare_policy(obj: dict[str, Any]) -> list[Cause]:
    from kopf._cluster.cel import admissionexprs
    spec = obj.get('spec')
    causes: list[Cause] = []
    if not isinstance(spec, Mapping):
        return causes
    if not (spec.get('matchConstraints') or {}).get('resourceRules'):
        causes.append(cause('FieldValueRequired', 'spec.matchConstraints.resourceRules', 'Required value'))
    if not spec.get('validations') and not spec.get('auditAnnotations'):
        for field in ('validations', 'auditAnnotations'):
            causes.append(cause('FieldValueRequired', f'spec.{field}',
                                'Required value: validations or auditAnnotations must contain at least one item'))
    for i, validation in enumerate(spec.get('validations') or []):
        if isinstance(validation, Mapping) and not str(validation.get('expression') or '').strip():
            causes.append(cause('FieldValueRequired', f'spec.validations[{i}].expression',
                                'Required value: expression is not specified'))
    return causes + admissionexprs.spec_causes(spec)


def prepare_binding(obj: dict[str, Any]) -> list[Cause]:
    spec = obj.get('spec')
    if not isinstance(spec, Mapping):
        spec = {}
    causes: list[Cause] = []
    if not spec.get('policyName'):
        causes.append(cause('FieldValueRequired', 'spec.policyName', 'Required value'))
    ref = spec.get('paramRef')
    if isinstance(ref, Mapping):
        causes += _param_ref(ref)
    actions = spec.get('validationActions') or []
    seen: set[str] = set()
    for i, action in enumerate(actions):
        if action not in ACTIONS:
            supported = ', '.join(f'"{a}"' for a in ACTIONS)
            causes.append(cause('FieldValueNotSupported', f'spec.validationActions[{i}]',
                                f'Unsupported value: {json.dumps(action)}: supported values: {supported}'))
        if action in seen:
            causes.append(cause('FieldValueDuplicate', f'spec.validationActions[{i}]',
                                f'Duplicate value: {json.dumps(action)}'))
        seen.add(action)
    if 'Deny' in seen and 'Warn' in seen:
        shown = json.dumps(actions, separators=(',', ':'))
        causes.append(cause('FieldValueInvalid', 'spec.validationActions', f'Invalid value: {shown}: must not contain '
                            'both Deny and Warn (repeating the same validation failure information in the API '
                            'response and headers serves no purpose)'))
    if not seen:
        causes.append(cause('FieldValueRequired', 'spec.validationActions',
                            'Required value: at least one validation action is required'))
    return causes


def _param_ref(ref: Mapping[str, Any]) -> list[Cause]:
    causes: list[Cause] = []
    if ref.get('name') and ref.get('selector') is not None:
        causes.append(cause('FieldValueForbidden', 'spec.paramRef.name', 'Forbidden: name and selector are mutually '
                                                                           'exclusive'))
        causes.append(cause('FieldValueForbidden', 'spec.paramRef.selector', 'Forbidden: name and selector are '
                                                                               'mutually exclusive'))
    if not ref.get('name') and ref.get('selector') is None:
        causes.append(cause('FieldValueRequired', 'spec.paramRef',
                            'Required value: one of name or selector must be specified'))
    action = ref.get('parameterNotFoundAction')
    if not action:
        causes.append(cause('FieldValueRequired', 'spec.paramRef.parameterNotFoundAction', 'Required value'))
    elif action not in ('Deny', 'Allow'):
        causes.append(cause('FieldValueNotSupported', 'spec.paramRef.parameterNotFoundAction',
                            f'Unsupported value: {json.dumps(action)}: supported values: "Deny", "Allow"'))
    return causes
