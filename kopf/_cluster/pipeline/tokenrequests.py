"""TokenRequest (`POST …/serviceaccounts/<name>/token`): a token of that ServiceAccount, never stored.

As the registry's TokenREST: the body's name and namespace must match the URL's (422); the
ServiceAccount must exist (404); `expirationSeconds` defaults to 3600 and must be from 600 to 2^32
(422); the audiences default to the API server's own; a `boundObjectRef` (a Pod of this
ServiceAccount, a Secret, a Node) must exist and match its uid (404, 400, 409). The answer is the
request with its `status` (`token`, `expirationTimestamp`); the token authenticates as the
ServiceAccount while it and the bound object exist (`rbac.satokens`).
"""
import datetime
import time
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.patchtypes import managedfields
from kopf._cluster.pipeline import metadata
from kopf._cluster.pipeline.state import State
from kopf._cluster.rbac import satokens
from kopf._cluster.rbac.subjects import User

GROUP = 'authentication.k8s.io'
MIN_SECONDS, MAX_SECONDS = 600, 1 << 32
BOUND = {'Pod': ('', 'pods'), 'Secret': ('', 'secrets'), 'Node': ('', 'nodes')}


def issue(state: State, target: Target, body: Any, manager: str = 'unknown',
          now: float | None = None) -> dict[str, Any]:
    namespace, name = target.namespace or '', target.name or ''
    request: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    given = request.get('metadata')
    meta: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    for field, expected, what in (('name', name, 'name'), ('namespace', namespace, 'namespace')):
        sent = meta.get(field)
        if sent and sent != expected:
            raise _invalid(name, f'metadata.{field}', f'Invalid value: "{sent}": must match the service account '
                           f'{what} if specified')
    account = state.store.get(('', 'serviceaccounts'), namespace, name)
    if account is None:
        raise statuses.not_found('serviceaccounts', '', 'serviceaccounts', name)
    uid = account['metadata'].get('uid', '')
    if meta.get('uid') and meta['uid'] != uid:
        raise statuses.conflict('TokenRequest.authentication.k8s.io', GROUP, 'TokenRequest', name,
                                f'the UID in the token request ({meta["uid"]}) does not match the UID of the '
                                f'service account ({uid})')
    spec = dict(request.get('spec') or {}) if isinstance(request.get('spec'), Mapping) else {}
    seconds = spec.get('expirationSeconds')
    seconds = satokens.DEFAULT_SECONDS if seconds is None else seconds
    if not isinstance(seconds, int) or seconds < MIN_SECONDS or seconds > MAX_SECONDS:
        short = not isinstance(seconds, int) or seconds < MIN_SECONDS
        limit = 'less than 10 minutes' if short else 'larger than 2^32 seconds'
        raise _invalid('', 'spec.expirationSeconds', f'Invalid value: {seconds}: may not specify a duration {limit}')
    audiences = [str(a) for a in spec.get('audiences') or ()] or list(satokens.AUDIENCES)
    bound = _bound(state, namespace, name, spec.get('boundObjectRef'))
    moment = int(now if now is not None else time.time())
    claims = satokens.claims(namespace, name, uid, audiences, moment, seconds, bound)
    expires = datetime.datetime.fromtimestamp(moment + seconds, datetime.UTC)
    sent = {key: value for key, value in spec.items() if value not in (None, '', [])}
    return {
        'kind': 'TokenRequest', 'apiVersion': f'{GROUP}/v1',
        'metadata': {'name': name, 'namespace': namespace, 'uid': uid, 'creationTimestamp': metadata.now(),
                     **_managed({**sent, 'expirationSeconds': seconds}, manager)},
        'spec': {'audiences': audiences, 'expirationSeconds': seconds, 'boundObjectRef': spec.get('boundObjectRef')},
        'status': {'token': satokens.issue(state.token_key, claims),
                   'expirationTimestamp': expires.strftime('%Y-%m-%dT%H:%M:%SZ')},
    }


def _managed(spec: dict[str, Any], manager: str) -> dict[str, Any]:
    """The field manager's entry the create handler gives the request (as a `token` subresource write)."""
    empty = {'metadata': {}, 'spec': {'audiences': None}, 'status': {'token': '', 'expirationTimestamp': None}}
    request = {'apiVersion': f'{GROUP}/v1', 'kind': 'TokenRequest', 'metadata': {}, 'spec': spec}
    entries = managedfields.updated(empty, request, manager=manager, api_version=f'{GROUP}/v1', subresource='token',
                                    schema=None, ignored=[('f:status',)], now=metadata.now(), creating=True)
    return {'managedFields': entries} if entries else {}


def _bound(state: State, namespace: str, name: str, ref: Any) -> dict[str, Any] | None:
    if not isinstance(ref, Mapping):
        return None
    kind, api_version = str(ref.get('kind') or ''), str(ref.get('apiVersion') or '')
    ref_name = str(ref.get('name') or '')
    group, _, version = api_version.rpartition('/')
    if group or kind not in BOUND:
        raise statuses.bad_request(f'cannot bind token to object of type {group}/{version}, Kind={kind}')
    key = BOUND[kind]
    found = state.store.get(key, '' if kind == 'Node' else namespace, ref_name)
    if found is None:
        raise statuses.not_found(key[1], '', key[1], ref_name)
    if kind == 'Pod' and (found.get('spec') or {}).get('serviceAccountName') != name:
        raise statuses.bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with different '
                                   'serviceaccount name.')
    uid = found['metadata'].get('uid', '')
    if ref.get('uid') and ref['uid'] != uid:
        raise statuses.conflict(kind, group, kind, ref_name, f'the UID in the bound object reference ({ref["uid"]}) '
                                'does not match the UID in record. The object might have been deleted and then '
                                'recreated')
    return {'kind': kind, 'name': ref_name, 'uid': uid}


def _invalid(name: str, field: str, message: str) -> statuses.ApiError:
    return statuses.invalid('TokenRequest', GROUP, name, [statuses.cause('FieldValueInvalid', field, message)])


def authenticate(state: State, token: str, now: float | None = None) -> User | None:
    """The ServiceAccount of a token issued here, if it is valid now and what it names still exists."""
    payload = satokens.claims_of(state.token_key, token, now if now is not None else time.time())
    if payload is None:
        return None
    for plural, namespace, name, uid in satokens.referenced(payload):
        found = state.store.get(('', plural), namespace, name)
        if found is None or found['metadata'].get('uid') != uid or found['metadata'].get('deletionTimestamp'):
            return None
    return satokens.user_of(payload)
