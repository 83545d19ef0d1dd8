"""ValidatingAdmissionPolicies and their bindings, applied to writes as kube-apiserver's plugin applies them.

Which policies a request meets (the policy's `matchConstraints` and the binding's `matchResources`: rules,
excluded rules, namespace and object selectors), their params (`paramKind` + `paramRef`: by name or
selector, `parameterNotFoundAction`), the variables the expressions see, and what the decisions become:
`Deny` refuses the request with the real server's Status, `Warn` adds a warning, `Audit` has no observable
effect here (the local cluster keeps no audit log). Compiled policies are cached per stored object.

`authorize` is the one place that answers the `authorizer` variable's questions ("may this user do this
verb on this resource"): the local cluster's authorizer (`rbac.authorizer`: `forbid()`, `system:masters`, RBAC).
"""
import dataclasses
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.admitting import reviews
from kopf._cluster.admitting.reviews import Request
from kopf._cluster.cel import admissionexprs, admissionruns, authz, celvalues
from kopf._cluster.pipeline.state import State
from kopf._cluster.rbac.requestinfo import Attributes
from kopf._cluster.rbac.subjects import User
from kopf._shared import resourcetable

POLICIES = ('admissionregistration.k8s.io', 'validatingadmissionpolicies')
BINDINGS = ('admissionregistration.k8s.io', 'validatingadmissionpolicybindings')
OPTION_KINDS = {'CREATE': 'CreateOptions', 'UPDATE': 'UpdateOptions', 'DELETE': 'DeleteOptions'}
_compiled: dict[tuple[str, str], tuple[Mapping[str, Any], admissionexprs.Compiled]] = {}


@dataclasses.dataclass(frozen=True)
class Subject:
    user: str
    groups: tuple[str, ...]


def configured(state: State) -> bool:
    return bool(state.store.objects.get(BINDINGS))


def authorize(access: Any, attributes: authz.Attributes) -> tuple[str, str, str]:
    """The seam for the `authorizer` variable: 'allow' / 'deny' / 'noopinion', a reason, an error.

    The local cluster's authorizer decides (`Access.authorizer`: `forbid()` rules deny, `system:masters`
    is allowed, RBAC allows what is bound or has no opinion), with RBAC's reasons; without one, all is allowed.
    """
    if access is None:
        return 'allow', '', ''
    user = User(attributes.user, attributes.groups)
    asked = Attributes(user, attributes.verb, attributes.resource_request, attributes.group, '*', attributes.resource,
                       attributes.subresource, attributes.namespace, attributes.name, attributes.path)
    decision = access.authorizer.authorize(asked)
    return ('allow' if decision.allowed else 'deny' if decision.denied else 'noopinion'), decision.reason, ''


def compiled(policy: Mapping[str, Any]) -> admissionexprs.Compiled:
    meta = policy.get('metadata') or {}
    key = (str(meta.get('name') or ''), str(meta.get('resourceVersion') or ''))
    cached = _compiled.get(key)
    if cached is not None and cached[0] is policy:
        return cached[1]
    result = admissionexprs.compile_policy(policy.get('spec') or {})
    _compiled[key] = (policy, result)
    return result


def check(state: State, request: Request, subject: Subject, access: Any) -> list[str]:
    """Run the matching policies; raise the first denial; return the warnings of `Warn` bindings."""
    if reviews.exempt(request) or request.resource.key in (POLICIES, BINDINGS):
        return []
    warnings: list[str] = []
    denials: list[tuple[str, str, admissionruns.Decision]] = []
    by_name = {p['metadata']['name']: p for p in state.store.iterate(POLICIES)}
    for binding in sorted(state.store.iterate(BINDINGS), key=lambda b: b['metadata']['name']):
        spec = binding.get('spec') or {}
        policy = by_name.get(spec.get('policyName'))
        if policy is None or not matches(state, (policy.get('spec') or {}).get('matchConstraints'), request):
            continue
        if spec.get('matchResources') and not matches(state, spec['matchResources'], request):
            continue
        for decision in decide(state, policy, binding, request, subject, access):
            actions = spec.get('validationActions') or []
            pname, bname = policy['metadata']['name'], binding['metadata']['name']
            if 'Deny' in actions:
                denials.append((pname, bname, decision))
            if 'Warn' in actions:
                warnings.append(f"Validation failed for ValidatingAdmissionPolicy '{pname}' with binding "
                                f"'{bname}': {decision.message}")
    if denials:
        raise denied(request, *denials[0])
    return warnings


def decide(state: State, policy: Mapping[str, Any], binding: Mapping[str, Any], request: Request,
           subject: Subject, access: Any) -> list[admissionruns.Decision]:
    spec = policy.get('spec') or {}
    failure = str(spec.get('failurePolicy') or 'Fail')
    try:
        params = find_params(state, spec.get('paramKind'), (binding.get('spec') or {}).get('paramRef'), request)
    except LookupError as e:
        if failure == 'Ignore':
            return []
        return [admissionruns.Decision('deny', f'failed to configure binding: {e}')]
    base = activation(state, request, subject, access)
    found: list[admissionruns.Decision] = []
    for param in params:
        decisions = admissionruns.run(compiled(policy), {**base, 'params': param}, failure)
        found += [d for d in decisions or [] if d.action == 'deny']
    return found


def find_params(state: State, kind: Any, ref: Any, request: Request) -> list[Any]:
    if not isinstance(kind, Mapping):
        return [None]
    if not isinstance(ref, Mapping):
        return [None]
    api_version = str(kind.get('apiVersion') or '')
    resource = state.catalog.by_kind(api_version, str(kind.get('kind') or ''))
    if resource is None:
        group, _, version = api_version.rpartition('/')
        raise LookupError(f'paramKind kind `{group}/{version}, Kind={kind.get("kind")}` not known')
    namespace = ''
    if resource.namespaced:
        namespace = str(ref.get('namespace') or request.namespace or '')
        if not namespace:
            raise LookupError('cannot use namespaced paramRef in policy binding that matches cluster-scoped resources')
    elif ref.get('namespace'):
        raise LookupError('paramRef.namespace must not be provided for a cluster-scoped `paramKind`')
    if ref.get('name'):
        one = state.store.get(resource.key, namespace, str(ref['name']))
        params = [one] if one is not None else []
    else:
        select = reviews.label_selector(ref.get('selector'))
        params = [o for o in state.store.iterate(resource.key, namespace or None) if select(o)]
    if not params and ref.get('parameterNotFoundAction') == 'Deny':
        raise LookupError('no params found for policy binding with `Deny` parameterNotFoundAction')
    return params


def matches(state: State, constraints: Any, request: Request) -> bool:
    """A policy's `matchConstraints` or a binding's `matchResources` against a request."""
    if not isinstance(constraints, Mapping):
        return False
    rules = constraints.get('resourceRules') or []   # none (a binding's may be unset): all that the policy matches
    if rules and not any(reviews.rule_matches(rule, request) and named(rule, request) for rule in rules):
        return False
    if any(reviews.rule_matches(rule, request) and named(rule, request)
           for rule in constraints.get('excludeResourceRules') or []):
        return False
    if not reviews.label_selector(constraints.get('objectSelector'))(request.obj or request.old or {}):
        return False
    return reviews.namespace_matches(state, constraints.get('namespaceSelector'), request)


def named(rule: Mapping[str, Any], request: Request) -> bool:
    names = rule.get('resourceNames') or []
    return not names or request.name in names


def activation(state: State, request: Request, subject: Subject, access: Any) -> dict[str, Any]:
    resource = request.resource
    namespace = None
    if resource.namespaced and request.namespace:
        namespace = namespace_object(state.store.get(resourcetable.NAMESPACES.key, '', request.namespace))
    authorizer = authz.Authorizer(subject.user, subject.groups, lambda attributes: authorize(access, attributes))
    return {
        'object': request.obj if request.operation != 'DELETE' else None,
        'oldObject': request.old if request.operation != 'CREATE' else None,
        'request': request_object(request, subject),
        'namespaceObject': namespace,
        'authorizer': authorizer,
        'authorizer.requestResource': authz.request_resource(authorizer, resource.group, resource.plural,
                                                              request.subresource or '', request.namespace,
                                                              request.name),
    }


def request_object(request: Request, subject: Subject) -> dict[str, Any]:
    resource = request.resource
    kind = {'group': resource.group, 'version': resource.version, 'kind': resource.kind}
    gvr = {'group': resource.group, 'version': resource.version, 'resource': resource.plural}
    user: dict[str, Any] = {'username': subject.user}
    if subject.groups:
        user['groups'] = list(subject.groups)
    body: dict[str, Any] = {'kind': kind, 'resource': gvr, 'requestKind': kind, 'requestResource': gvr,
                            'operation': request.operation, 'userInfo': user,
                            'options': {'apiVersion': 'meta.k8s.io/v1', 'kind': OPTION_KINDS[request.operation]}}
    if request.subresource:
        body['subResource'] = body['requestSubResource'] = request.subresource
    if request.name:
        body['name'] = request.name
    if request.namespace:
        body['namespace'] = request.namespace
    if request.dry_run:
        body['dryRun'] = True
    return body


def namespace_object(namespace: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if namespace is None:
        return None
    meta = namespace.get('metadata') or {}
    kept = {k: meta[k] for k in ('name', 'generateName', 'namespace', 'resourceVersion', 'generation', 'labels',
                                 'annotations', 'finalizers', 'deletionGracePeriodSeconds') if k in meta}
    if 'uid' in meta:
        kept['UID'] = meta['uid']
    for key in ('creationTimestamp', 'deletionTimestamp'):
        if meta.get(key):
            kept[key] = celvalues.parse_timestamp(meta[key])
    return {'metadata': kept, 'spec': namespace.get('spec') or {}, 'status': namespace.get('status') or {}}


def denied(request: Request, policy: str, binding: str, decision: admissionruns.Decision) -> statuses.ApiError:
    resource = request.resource
    message = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}' denied request: {decision.message}"
    subject = f'{resource.qualified} "{request.name}"' if request.name else resource.qualified
    text = f'{subject} is forbidden: {message}'
    reason = decision.reason or 'Invalid'
    code = {'Unauthorized': 401, 'Forbidden': 403, 'Invalid': 422, 'RequestEntityTooLarge': 413}.get(reason, 422)
    details: dict[str, Any] = {'name': request.name} if request.name else {}
    if resource.group:
        details['group'] = resource.group
    details['kind'] = resource.plural
    details['causes'] = [{'message': message}]
    return statuses.ApiError(code, reason, text, details)
