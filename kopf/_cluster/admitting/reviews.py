"""Admission webhooks, the pure part: which webhooks match a request, what
AdmissionReview they receive, and what their answers mean. The calling is in `calling`.
"""
import base64
import dataclasses
import uuid
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.patchtypes import jsonpatches
from kopf._cluster.pipeline.state import State
from kopf._cluster.store import selection
from kopf._shared import resourcetable
from kopf._shared.resourcetable import Resource

Obj = dict[str, Any]
CONFIG_KEYS = {
    False: ('admissionregistration.k8s.io', 'validatingwebhookconfigurations'),
    True: ('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'),
}
OPTION_KINDS = {'CREATE': 'CreateOptions', 'UPDATE': 'UpdateOptions', 'DELETE': 'DeleteOptions'}
USER = {'username': 'kubernetes-admin', 'groups': ['system:masters', 'system:authenticated']}
REASONS = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
           422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable'}


@dataclasses.dataclass(frozen=True)
class Request:
    operation: str                  # CREATE | UPDATE | DELETE
    resource: Resource
    subresource: str | None
    name: str
    namespace: str
    obj: Obj | None
    old: Obj | None
    dry_run: bool = False


def configured(state: State) -> bool:
    """Cheap: is there any webhook configuration at all? (Writes skip admission entirely if not.)"""
    objects = state.store.objects
    return bool(objects.get(CONFIG_KEYS[False]) or objects.get(CONFIG_KEYS[True]))


def webhooks(state: State, mutating: bool) -> list[Mapping[str, Any]]:
    """Webhooks of one type, configurations ordered by name, then in their list order."""
    found: list[Mapping[str, Any]] = []
    for config in state.store.iterate(CONFIG_KEYS[mutating]):
        found.extend(hook for hook in config.get('webhooks') or [] if isinstance(hook, Mapping))
    return found


def exempt(request: Request) -> bool:
    """Writes to webhook configurations themselves never go to webhooks (no lock-out)."""
    return request.resource.key in CONFIG_KEYS.values()


def matches(state: State, hook: Mapping[str, Any], request: Request) -> bool:
    if not any(_rule_matches(rule, request) for rule in hook.get('rules') or []):
        return False
    if not _selector(hook.get('objectSelector'))(request.obj or request.old or {}):
        return False
    return _namespace_matches(state, hook.get('namespaceSelector'), request)


def rule_matches(rule: Mapping[str, Any], request: Request) -> bool:
    """A webhook's or a policy's rule (operations, groups, versions, resources, scope) against a request."""
    return _rule_matches(rule, request)


def namespace_matches(state: State, spec: Any, request: Request) -> bool:
    return _namespace_matches(state, spec, request)


def _rule_matches(rule: Mapping[str, Any], request: Request) -> bool:
    resource = request.resource
    wanted = f'{resource.plural}/{request.subresource}' if request.subresource else resource.plural
    names = rule.get('resources') or []
    by_name = wanted in names or (
        f'*/{request.subresource}' in names if request.subresource else '*' in names) or '*/*' in names
    scope = rule.get('scope') or '*'
    return (by_name
            and _listed(rule.get('operations'), request.operation)
            and _listed(rule.get('apiGroups'), resource.group)
            and _listed(rule.get('apiVersions'), resource.version)
            and (scope == '*' or (scope == 'Namespaced') == resource.namespaced))


def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and ('*' in values or value in values)


def label_selector(spec: Any) -> Any:
    """A label selector (`matchLabels`, `matchExpressions`) as a predicate over objects."""
    return _selector(spec)


def _selector(spec: Any) -> Any:
    spec = spec if isinstance(spec, Mapping) else {}
    requirements = [selection.Requirement(k, '=', (str(v),)) for k, v in (spec.get('matchLabels') or {}).items()]
    operators = {'In': 'in', 'NotIn': 'notin', 'Exists': 'exists', 'DoesNotExist': '!'}
    for expression in spec.get('matchExpressions') or []:
        op = operators.get(expression.get('operator'), 'exists')
        requirements.append(selection.Requirement(expression.get('key', ''), op,
                                                  tuple(str(v) for v in expression.get('values') or [])))
    return selection.matcher(requirements, [])


def _namespace_matches(state: State, spec: Any, request: Request) -> bool:
    if request.resource.key == resourcetable.NAMESPACES.key:
        return bool(_selector(spec)(request.obj or request.old or {}))
    if not request.resource.namespaced:
        return True
    namespace = state.store.get(resourcetable.NAMESPACES.key, '', request.namespace) or {}
    return bool(_selector(spec)(namespace))


def review(hook: Mapping[str, Any], request: Request) -> tuple[str, Obj]:
    """The request uid and the AdmissionReview body, in the first version the webhook accepts."""
    versions = [v for v in hook.get('admissionReviewVersions') or [] if v in ('v1', 'v1beta1')] or ['v1']
    uid = str(uuid.uuid4())
    resource = request.resource
    kind = {'group': resource.group, 'version': resource.version, 'kind': resource.kind}
    gvr = {'group': resource.group, 'version': resource.version, 'resource': resource.plural}
    body: Obj = {
        'uid': uid, 'kind': kind, 'resource': gvr, 'requestKind': kind, 'requestResource': gvr,
        'name': request.name, 'operation': request.operation, 'userInfo': USER,
        'object': request.obj, 'oldObject': request.old, 'dryRun': request.dry_run,
        'options': {'apiVersion': 'meta.k8s.io/v1', 'kind': OPTION_KINDS[request.operation]},
    }
    if not request.name:  # a name to be generated: not yet there for mutating webhooks (Go's omitempty)
        del body['name']
    if request.resource.namespaced:
        body['namespace'] = request.namespace
    if request.subresource:
        body['subResource'] = body['requestSubResource'] = request.subresource
    return uid, {'apiVersion': f'admission.k8s.io/{versions[0]}', 'kind': 'AdmissionReview', 'request': body}


class CallFailed(Exception):
    """The webhook could not be called or answered nonsense (failurePolicy decides what follows)."""


def interpret(hook: Mapping[str, Any], uid: str, sent: Obj, answer: Any) -> Mapping[str, Any]:
    """The `response` stanza of a webhook's answer, verified; raises CallFailed if it is unusable."""
    if not isinstance(answer, Mapping) or answer.get('kind') != 'AdmissionReview':
        raise CallFailed('expected response.kind AdmissionReview')
    if answer.get('apiVersion') != sent['apiVersion']:
        raise CallFailed(f'expected webhook response of {sent["apiVersion"]}, got {answer.get("apiVersion")}')
    response = answer.get('response')
    if not isinstance(response, Mapping) or response.get('uid') != uid:
        raise CallFailed(f'expected response.uid="{uid}"')
    return response


def denial(hook: Mapping[str, Any], response: Mapping[str, Any]) -> statuses.ApiError:
    status: Mapping[str, Any] = response['status'] if isinstance(response.get('status'), Mapping) else {}
    code = int(status.get('code') or 400)
    code = code if code >= 400 else 400
    reason = str(status.get('reason') or '')  # as the webhook said it: a real server adds none
    text = status.get('message') or reason
    message = (f'admission webhook "{hook.get("name")}" denied the request: {text}' if text
               else f'admission webhook "{hook.get("name")}" denied the request without explanation')
    return statuses.ApiError(code, reason, message, dict(status.get('details') or {}) or None)


def mutated(obj: Obj, response: Mapping[str, Any]) -> Obj:
    """Apply a mutating webhook's JSON patch (base64); raises CallFailed on a bad one."""
    if not response.get('patch'):
        return obj
    if response.get('patchType') != 'JSONPatch':
        raise CallFailed(f'unsupported patchType {response.get("patchType")!r}')
    try:
        ops = jsoncodec.loads(base64.b64decode(response['patch']))
        result: Obj = jsonpatches.json_patch(obj, ops)
    except (ValueError, statuses.ApiError) as exc:
        raise CallFailed(f'the patch could not be applied: {exc}') from None
    return result


def failed(hook: Mapping[str, Any], cause: str) -> statuses.ApiError:
    return statuses.internal(f'failed calling webhook "{hook.get("name")}": {cause}')
