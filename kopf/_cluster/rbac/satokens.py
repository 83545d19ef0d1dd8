"""ServiceAccount tokens: issued by TokenRequest (`serviceaccounts/<name>/token`), accepted as bearer tokens.

A token is a JWT with the claims a kube-apiserver puts in (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`,
`jti`, and `kubernetes.io`: namespace, serviceaccount name and uid, the bound Pod or Secret), signed
with HS256 by a key of the local cluster (a real server signs with RS256; clients only decode).
It authenticates while it is unexpired, names the API server's audience, and its ServiceAccount
(and bound object) still exists with the same uid — as upstream's legacy-lookup validator checks.

    issue(key, claims) -> token;  claims_of(key, token, now) -> claims or None (pure: no I/O)
"""
import base64
import hashlib
import hmac
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kopf._cluster.rbac import subjects
from kopf._cluster.rbac.subjects import User

ISSUER = 'https://kubernetes.default.svc.cluster.local'
AUDIENCES = (ISSUER,)
DEFAULT_SECONDS = 3600
LEEWAY = 60   # seconds of clock skew tolerated, as upstream's validator


def _encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()


def _decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def claims(namespace: str, name: str, uid: str, audiences: Sequence[str], now: int, seconds: int,
           bound: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The token's claims; `bound`: {'kind': 'Pod'|'Secret', 'name', 'uid'} of the object it is bound to."""
    private: dict[str, Any] = {'namespace': namespace, 'serviceaccount': {'name': name, 'uid': uid}}
    if bound:
        private[str(bound['kind']).lower()] = {'name': bound['name'], 'uid': bound['uid']}
    return {'aud': list(audiences), 'exp': now + seconds, 'iat': now, 'iss': ISSUER, 'jti': str(uuid.uuid4()),
            'kubernetes.io': private, 'nbf': now, 'sub': subjects.service_account_name(namespace, name)}


def issue(key: bytes, payload: Mapping[str, Any]) -> str:
    header = _encode(json.dumps({'alg': 'HS256', 'typ': 'JWT'}, separators=(',', ':')).encode())
    body = _encode(json.dumps(payload, separators=(',', ':')).encode())
    signature = hmac.new(key, f'{header}.{body}'.encode(), hashlib.sha256).digest()
    return f'{header}.{body}.{_encode(signature)}'


def claims_of(key: bytes, token: str, now: float, audiences: Sequence[str] = AUDIENCES) -> dict[str, Any] | None:
    """The claims of a token this key signed, if it is valid now for these audiences (else None)."""
    parts = token.split('.')
    if len(parts) != 3:
        return None
    try:
        expected = hmac.new(key, f'{parts[0]}.{parts[1]}'.encode(), hashlib.sha256).digest()
        if not hmac.compare_digest(expected, _decode(parts[2])):
            return None
        payload = json.loads(_decode(parts[1]))
    except ValueError:
        return None
    if not isinstance(payload, dict) or payload.get('iss') != ISSUER:
        return None
    if not set(payload.get('aud') or ()) & set(audiences):
        return None
    if not (payload.get('nbf', 0) - LEEWAY <= now <= payload.get('exp', 0) + LEEWAY):
        return None
    return payload


def user_of(payload: Mapping[str, Any]) -> User:
    """The ServiceAccount's user, with the credential id (`JTI=…`) and the bound Pod as extras."""
    private = payload.get('kubernetes.io') or {}
    account = private.get('serviceaccount') or {}
    user = subjects.service_account(str(private.get('namespace') or ''), str(account.get('name') or ''),
                                    str(account.get('uid') or ''))
    extra: dict[str, tuple[str, ...]] = {}
    if payload.get('jti'):
        extra[subjects.CREDENTIAL_ID] = (f'JTI={payload["jti"]}',)
    pod = private.get('pod') or {}
    if pod.get('name') and pod.get('uid'):
        extra['authentication.kubernetes.io/pod-name'] = (str(pod['name']),)
        extra['authentication.kubernetes.io/pod-uid'] = (str(pod['uid']),)
    return User(user.name, user.groups, user.uid, tuple(sorted(extra.items())))


def referenced(payload: Mapping[str, Any]) -> list[tuple[str, str, str, str]]:
    """What must exist for the token to be valid: (plural, namespace, name, uid) of its account and bound object."""
    private = payload.get('kubernetes.io') or {}
    namespace = str(private.get('namespace') or '')
    account = private.get('serviceaccount') or {}
    found = [('serviceaccounts', namespace, str(account.get('name') or ''), str(account.get('uid') or ''))]
    for kind, plural in (('pod', 'pods'), ('secret', 'secrets')):
        bound = private.get(kind) or {}
        if bound.get('name'):
            found.append((plural, namespace, str(bound['name']), str(bound.get('uid') or '')))
    return found
