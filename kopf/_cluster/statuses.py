"""Kubernetes `Status` error bodies, exactly as a real API server renders them.

Every error answer is `{"kind": "Status", "apiVersion": "v1", "status": "Failure", "message", "reason",
"details", "code"}`, with the HTTP status as its `code`.
"""
from collections.abc import Mapping, Sequence
from typing import Any

GENERIC_NOT_FOUND = 'the server could not find the requested resource'
JSON_PATCH_FAILED = 'the server rejected our request due to an error in our request'
MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again'

Cause = Mapping[str, Any]


class ApiError(Exception):
    """An API failure that becomes an HTTP response with a `Status` body."""

    def __init__(
        self, code: int, reason: str, message: str,
        details: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
        list_meta: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = dict(details) if details is not None else None
        self.headers = dict(headers or {})
        self.list_meta = dict(list_meta or {})   # the Status's own `metadata` (a 410's `continue`)

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {'kind': 'Status', 'apiVersion': 'v1', 'metadata': dict(self.list_meta),
                                'status': 'Failure'}
        if self.message:   # Go's `omitempty`
            body['message'] = self.message
        if self.reason:   # a real server's error that is not a Status (StatusReasonUnknown) has none
            body['reason'] = self.reason
        if self.details is not None:
            body['details'] = self.details
        body['code'] = self.code
        return body


def _details(name: str | None, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:  # a real server omits an empty name (`ConfigMap "" is invalid`: no details.name)
        details['name'] = name
    if group:
        details['group'] = group
    details['kind'] = kind
    details.update(extra)
    return details


def not_found(qualified: str, group: str, plural: str, name: str) -> ApiError:
    message = f'{qualified} "{name}" not found'
    return ApiError(404, 'NotFound', message, _details(name, group, plural))


def generic_not_found() -> ApiError:
    return ApiError(404, 'NotFound', GENERIC_NOT_FOUND, {})


def already_exists(qualified: str, group: str, plural: str, name: str) -> ApiError:
    message = f'{qualified} "{name}" already exists'
    return ApiError(409, 'AlreadyExists', message, _details(name, group, plural))


def conflict(qualified: str, group: str, plural: str, name: str, text: str = MODIFIED) -> ApiError:
    message = f'Operation cannot be fulfilled on {qualified} "{name}": {text}'
    return ApiError(409, 'Conflict', message, _details(name, group, plural))


def invalid(kind: str, group: str, name: str, causes: Sequence[Cause]) -> ApiError:
    """422 Invalid with field causes; `kind` is the Kind (not the plural) as in real validation errors."""
    # One text per distinct error, as a real server's aggregate has it; the causes keep the repeats.
    texts = list(dict.fromkeys(f"{c['field']}: {c['message']}" if c.get('field') else str(c['message'])
                               for c in causes))
    joined = texts[0] if len(texts) == 1 else '[' + ', '.join(texts) + ']'
    qualified = f'{kind}.{group}' if group else kind
    message = f'{qualified} "{name}" is invalid: {joined}'
    return ApiError(422, 'Invalid', message, _details(name, group, kind, causes=[dict(c) for c in causes]))


def cause(reason: str, field: str, message: str) -> dict[str, str]:
    return {'reason': reason, 'message': message, 'field': field}


def json_patch_failed() -> ApiError:
    return ApiError(422, 'Invalid', JSON_PATCH_FAILED, {})


def bad_request(message: str) -> ApiError:
    return ApiError(400, 'BadRequest', message)   # no details, as NewBadRequest


def method_not_allowed() -> ApiError:
    return ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource', {})


def unsupported_media(types: Sequence[str]) -> ApiError:
    accepted = ', '.join(types)
    text = f'the body of the request was in an unknown format - accepted media types include: {accepted}'
    return ApiError(415, 'UnsupportedMediaType', text)


def not_acceptable(types: Sequence[str] = ('application/json', 'application/yaml')) -> ApiError:
    text = f'only the following media types are accepted: {", ".join(types)}'
    return ApiError(406, 'NotAcceptable', text)


def namespace_not_found(namespace: str) -> ApiError:
    return not_found('namespaces', '', 'namespaces', namespace)


def namespace_terminating(plural: str, name: str, namespace: str) -> ApiError:
    message = (f'{plural} "{name}" is forbidden: unable to create new content in namespace {namespace}'
               ' because it is being terminated')
    causes = [cause('NamespaceTerminating', 'metadata.namespace',
                    f'namespace {namespace} is being terminated')]
    return ApiError(403, 'Forbidden', message, _details(name, '', plural, causes=causes))


def expired(message: str) -> ApiError:
    return ApiError(410, 'Expired', message)


def internal(text: str) -> ApiError:
    details = {'causes': [{'message': text}]}
    return ApiError(500, 'InternalError', f'Internal error occurred: {text}', details)


def success(name: str, group: str, plural: str, uid: str) -> dict[str, Any]:
    details = _details(name, group, plural, uid=uid)
    return {'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success', 'details': details}


def too_large_rv(requested: int, current: int) -> ApiError:
    details = {'causes': [{'reason': 'ResourceVersionTooLarge', 'message': 'Too large resource version'}],
               'retryAfterSeconds': 1}
    return ApiError(504, 'Timeout', f'Timeout: Too large resource version: {requested}, current: {current}',
                    details, headers={'Retry-After': '1'})
