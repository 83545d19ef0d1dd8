"""The typing side of admission webhooks: client configs, the request callback, servers.

A webhook server (or tunnel) is a callable that gets the framework's request callback (`WebhookFn`)
and yields `WebhookClientConfig` dicts (how the API server reaches it) whenever that changes.
The server classes themselves are in `kopf._admission.servers`.
"""
import base64
import json
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping, Sequence
from typing import Any, Protocol, TypedDict

from kopf._core import errors, filters, registries
from kopf._core import settings as settings_
from kopf._core.kwargs import Headers, SSLPeer
from kopf._shared import extras, fields


class WebhookClientConfigService(TypedDict, total=False):
    """The `service` stanza of a webhook's `clientConfig` (a K8s ServiceReference)."""

    namespace: str | None
    name: str | None
    path: str | None
    port: int | None


class WebhookClientConfig(TypedDict, total=False):
    """A webhook's `clientConfig`: how the API server reaches the operator (a URL or a service)."""

    caBundle: str  # base64-encoded PEM (the K8s field name)
    url: str | None
    service: WebhookClientConfigService | None


class WebhookFn(Protocol):
    """The framework's callback that a server calls for every admission request it receives.

    `request` is the parsed AdmissionReview; `webhook` is the handler id hinted by the URL path;
    the result is the AdmissionReview response to send back.
    """

    def __call__(
            self,
            request: Mapping[str, Any],
            /, *,
            webhook: str | None = None,
            headers: Headers | None = None,
            sslpeer: SSLPeer | None = None,
    ) -> Awaitable[Mapping[str, Any]]: ...


class WebhookServerProtocol(Protocol):
    """A webhook server or tunnel: called with the request callback, yields the client configs."""

    def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]: ...


# -- reviews and their answers (pure) -----------------------------------------------------------------

REVIEW_VERSIONS = ('admission.k8s.io/v1', 'admission.k8s.io/v1beta1')
OPERATIONS = frozenset({'CREATE', 'UPDATE', 'DELETE', 'CONNECT'})


class BadReview(ValueError):
    """The body is not an AdmissionReview with a request (the answer is a 400)."""


def parse_review(payload: Any) -> Mapping[str, Any]:
    """The review's `request`, checked for what answering needs; `BadReview` otherwise."""
    if not fields.is_mapping(payload) or payload.get('kind') != 'AdmissionReview':
        raise BadReview('Not an AdmissionReview.')
    if payload.get('apiVersion') not in REVIEW_VERSIONS:
        raise BadReview(f'Unsupported AdmissionReview version: {payload.get("apiVersion")!r}.')
    request = payload.get('request')
    if not fields.is_mapping(request) or not isinstance(request.get('uid'), str):
        raise BadReview('The AdmissionReview has no request with a uid.')
    resource = request.get('resource')
    if not fields.is_mapping(resource) or not isinstance(resource.get('resource'), str):
        raise BadReview('The AdmissionReview request names no resource.')
    for field in ('group', 'version'):
        if resource.get(field) is not None and not isinstance(resource.get(field), str):
            raise BadReview(f'The request resource {field} is not a string.')
    operation = request.get('operation')
    if not isinstance(operation, str) or operation not in OPERATIONS:
        raise BadReview(f'Unknown operation: {operation!r}.')
    for field in ('object', 'oldObject', 'userInfo', 'options'):
        if request.get(field) is not None and not fields.is_mapping(request.get(field)):
            raise BadReview(f'The request {field} is not an object.')
    for field in ('subResource', 'name', 'namespace'):
        if request.get(field) is not None and not isinstance(request.get(field), str):
            raise BadReview(f'The request {field} is not a string.')
    for field in ('object', 'oldObject'):
        meta = (request.get(field) or {}).get('metadata')
        if meta is not None and not fields.is_mapping(meta):
            raise BadReview(f'The request {field} has metadata that is not an object.')
    return request


def priority(exc: BaseException) -> int:
    """Which error's message and code answer a review: AdmissionError > PermanentError > TemporaryError > other."""
    if isinstance(exc, errors.AdmissionError):
        return 3
    if isinstance(exc, errors.PermanentError):
        return 2
    if isinstance(exc, errors.TemporaryError):
        return 1
    return 0


def respond(payload: Mapping[str, Any], *, errors: Sequence[BaseException] = (), warnings: Sequence[str] = (),
            patch_ops: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The AdmissionReview answer: the request's apiVersion and uid echoed; denied by the top error, if any."""
    request = payload.get('request') or {}
    response: dict[str, Any] = {'uid': request.get('uid'), 'allowed': not errors}
    if warnings:
        response['warnings'] = [str(w) for w in warnings]
    if errors:
        top = max(errors, key=priority)  # the first of the highest priority
        code = getattr(top, 'code', None)
        response['status'] = {'code': code if isinstance(code, int) and priority(top) == 3 else 500,
                              'message': str(top) or repr(top)}
    elif patch_ops:
        response['patchType'] = 'JSONPatch'
        response['patch'] = base64.b64encode(json.dumps(list(patch_ops)).encode()).decode()
    return {'apiVersion': payload.get('apiVersion', REVIEW_VERSIONS[0]), 'kind': 'AdmissionReview',
            'response': response}


# -- managed webhook configurations (pure) ------------------------------------------------------------

def validate_managed(name: str) -> None:
    """A configuration name gives webhook names `<id>.<name>`: Kubernetes wants three dot-separated segments."""
    if not isinstance(name, str) or len([part for part in name.split('.') if part]) < 2:
        raise ValueError(f'settings.admission.managed={name!r} must have at least two dot-separated segments '
                         '(e.g. "auto.kopf.dev"): webhook names are "<handler id>.<managed>", and Kubernetes '
                         'requires at least three segments in them.')


def webhook_name(handler_id: str, managed: str) -> str:
    """`<id>.<managed>` with `/` → `.`, `_` → `-`, and any other character that a DNS name cannot hold hex-encoded."""
    chars = []
    for char in handler_id.replace('/', '.').replace('_', '-'):
        if char.isascii() and (char.islower() or char.isdigit() or char in '-.'):
            chars.append(char)
        else:
            chars.append(f'x{ord(char):x}')
    return f'{"".join(chars).strip(".-") or "x"}.{managed}'


def build_webhooks(handlers: Iterable[Any], resources: Iterable[Any], config: Mapping[str, Any], *,
                   managed: str, selects: Any) -> list[dict[str, Any]]:
    """One webhook per handler: rules for the resources it selects (`selects(handler, resource)`), its path."""
    result = []
    resources = list(resources)
    for handler in handlers:
        rules = []
        for resource in resources:
            if not selects(handler, resource):
                continue
            plural = resource.plural if not handler.subresource else f'{resource.plural}/{handler.subresource}'
            rules.append({'apiGroups': [resource.group], 'apiVersions': [resource.version],
                          'resources': [plural], 'operations': sorted(handler.operations or ['*']), 'scope': '*'})
        client = dict(config)
        path = '/' + urllib.parse.quote(handler.id)
        if client.get('url'):
            client['url'] = str(client['url']).rstrip('/') + path
        elif isinstance(client.get('service'), Mapping):
            service = dict(client['service'])
            service['path'] = str(service.get('path') or '').rstrip('/') + path
            client['service'] = service
        webhook: dict[str, Any] = {
            'name': webhook_name(handler.id, managed),
            'sideEffects': 'NoneOnDryRun' if handler.side_effects else 'None',
            'failurePolicy': 'Ignore' if handler.ignore_failures else 'Fail',
            'matchPolicy': 'Equivalent',
            'rules': rules,
            'clientConfig': client,
            'timeoutSeconds': 30,
            'admissionReviewVersions': ['v1', 'v1beta1'],
        }
        selector = _object_selector(getattr(handler, 'labels', None))
        if selector:
            webhook['objectSelector'] = selector
        result.append(webhook)
    return result


def _object_selector(labels: Mapping[str, Any] | None) -> dict[str, Any]:
    expressions: list[dict[str, Any]] = []
    for key, value in (labels or {}).items():
        if value is filters.PRESENT:
            expressions.append({'key': key, 'operator': 'Exists'})
        elif value is filters.ABSENT:
            expressions.append({'key': key, 'operator': 'DoesNotExist'})
        elif isinstance(value, str):
            expressions.append({'key': key, 'operator': 'In', 'values': [value]})
        # callables cannot be expressed: the handler's own filter decides
    return {'matchExpressions': expressions} if expressions else {}


class UnsupportedHandlersError(Exception):
    """The registry has handlers that this operator cannot serve as configured."""


def check(registry: registries.OperatorRegistry, settings: settings_.OperatorSettings) -> None:
    """What admission handlers need: a webhook server (set in a startup handler), valid managed webhook names,
    the server's optional dependencies (one line naming the extra, before any watcher starts); an operator
    must never silently run without the webhooks it asked for."""
    webhooks = registry.webhooks
    if not webhooks:
        return
    if settings.admission.server is None:
        names = ', '.join(f'{h.id!r}' for h in webhooks)
        raise UnsupportedHandlersError(
            f'Admission handlers ({names}) need a webhook server: set settings.admission.server '
            '(e.g. kopf.WebhookServer()) in a startup handler.')
    if settings.admission.managed is not None:
        try:
            validate_managed(settings.admission.managed)
        except ValueError as exc:
            raise UnsupportedHandlersError(str(exc)) from None
    problem = extras.unmet_needs(settings.admission.server)  # e.g. `cryptography` for a self-signed certificate
    if problem is not None:
        raise UnsupportedHandlersError(problem)
