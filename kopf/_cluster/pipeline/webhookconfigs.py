"""Validation and defaults of admission webhook configurations: names, rules, client configs,
failure policies, side effects, review versions, as the real server checks them.

Real servers reject non-https URLs; the emulator does too unless `allow_http` (kopf's
`WebhookServer(insecure=True)` produces http URLs, which only a permissive emulator accepts).
"""
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses

Cause = dict[str, Any]
OPERATIONS = ('CREATE', 'UPDATE', 'DELETE', 'CONNECT', '*')


def prepare(obj: dict[str, Any], mutating: bool, allow_http: bool) -> list[Cause]:
    """Fill the defaults of every webhook and return the causes of what is invalid."""
    webhooks = obj.get('webhooks')
    if webhooks is None:
        return []
    if not isinstance(webhooks, list):
        return [statuses.cause('FieldValueTypeInvalid', 'webhooks', 'Invalid value: must be a list')]
    causes: list[Cause] = []
    seen: set[str] = set()
    for index, hook in enumerate(webhooks):
        field = f'webhooks[{index}]'
        if not isinstance(hook, dict):
            causes.append(statuses.cause('FieldValueTypeInvalid', field, 'Invalid value: must be an object'))
            continue
        _default(hook, mutating)
        causes.extend(_hook_causes(hook, field, seen, allow_http))
    return causes


def _default(hook: dict[str, Any], mutating: bool) -> None:
    hook.setdefault('failurePolicy', 'Fail')
    hook.setdefault('matchPolicy', 'Equivalent')
    hook.setdefault('namespaceSelector', {})
    hook.setdefault('objectSelector', {})
    hook.setdefault('timeoutSeconds', 10)
    if mutating:
        hook.setdefault('reinvocationPolicy', 'Never')
    for rule in hook.get('rules') or []:
        if isinstance(rule, dict):
            rule.setdefault('scope', '*')
    service = (hook.get('clientConfig') or {}).get('service')
    if isinstance(service, dict):
        service.setdefault('port', 443)


def _hook_causes(hook: Mapping[str, Any], field: str, seen: set[str], allow_http: bool) -> list[Cause]:
    causes: list[Cause] = []
    name = hook.get('name') or ''
    if not name:
        causes.append(statuses.cause('FieldValueRequired', f'{field}.name', 'Required value'))
    elif len(name.split('.')) < 3:
        causes.append(statuses.cause('FieldValueInvalid', f'{field}.name', f'Invalid value: "{name}": should be a '
                                     'domain with at least three segments separated by dots'))
    elif name in seen:
        causes.append(statuses.cause('FieldValueDuplicate', f'{field}.name', f'Duplicate value: "{name}"'))
    seen.add(name)
    if hook.get('sideEffects') not in ('None', 'NoneOnDryRun'):
        causes.append(statuses.cause('FieldValueNotSupported', f'{field}.sideEffects',
                                     f'Unsupported value: "{hook.get("sideEffects") or ""}": '
                                     'supported values: "None", "NoneOnDryRun"'))
    if not hook.get('admissionReviewVersions'):
        causes.append(statuses.cause('FieldValueRequired', f'{field}.admissionReviewVersions',
                                     'Required value: must specify one of v1, v1beta1'))
    if hook.get('failurePolicy') not in ('Fail', 'Ignore'):
        causes.append(statuses.cause('FieldValueNotSupported', f'{field}.failurePolicy',
                                     f'Unsupported value: "{hook.get("failurePolicy")}": supported values: '
                                     '"Fail", "Ignore"'))
    timeout = hook.get('timeoutSeconds')
    if not isinstance(timeout, int) or not 1 <= timeout <= 30:
        causes.append(statuses.cause('FieldValueInvalid', f'{field}.timeoutSeconds',
                                     f'Invalid value: {timeout}: the timeout value must be between 1 and 30 seconds'))
    causes.extend(_client_config_causes(hook.get('clientConfig'), f'{field}.clientConfig', allow_http))
    for number, rule in enumerate(hook.get('rules') or []):
        for operation in (rule or {}).get('operations') or []:
            if operation not in OPERATIONS:
                causes.append(statuses.cause('FieldValueNotSupported', f'{field}.rules[{number}].operations',
                                             f'Unsupported value: "{operation}"'))
    return causes


def _client_config_causes(config: Any, field: str, allow_http: bool) -> list[Cause]:
    if not isinstance(config, Mapping) or bool(config.get('url')) == bool(config.get('service')):
        message = 'Required value: exactly one of url or service is required'
        return [statuses.cause('FieldValueRequired', field, message)]
    url = config.get('url')
    if not url:
        return []
    parsed = urllib.parse.urlparse(str(url))
    allowed = ('https', 'http') if allow_http else ('https',)
    if parsed.scheme not in allowed:
        return [statuses.cause('FieldValueInvalid', f'{field}.url', f'Invalid value: "{parsed.scheme}": \'https\' is '
                               'the only allowed URL scheme; desired format: https://host[/path]')]
    if not parsed.hostname or re.search(r'[?#]', str(url)) or parsed.username:
        return [statuses.cause('FieldValueInvalid', f'{field}.url', 'Invalid value: host must be specified; '
                               'query, fragment and user info are not allowed')]
    return []
