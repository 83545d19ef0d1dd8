"""The one comparison of the differential suite: two answers, normalized, flattened, diffed (no I/O).

An answer is what a step got back: the status code and the body (a JSON value), or for watches the
list of events. Normalized away: uids, timestamps, resourceVersion values, generated names, allocated
IPs, continue tokens, Table ages, ServiceAccount tokens (their audiences name the server; their ids
are random). `managedFields` are compared (their times normalized as all times are, so their entries
in no particular order: a real server orders them by time first). Compared exactly:
the code, `reason`, `details` (kind, group, name, causes' field and reason) and every stored field.
Messages are compared loosely: a different message is reported, never a failure.
"""
import fnmatch
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

DROPPED = {'selfLink'}
OPAQUE = {'uid': '<uid>', 'resourceVersion': '<rv>', 'continue': '<continue>', 'clusterIP': '<ip>',
          'clusterIPs': ['<ip>'], 'token': '<token>', 'audiences': ['<the server>'],
          'authentication.kubernetes.io/credential-id': ['<JTI>']}
TIMES = {'creationTimestamp', 'deletionTimestamp', 'lastTransitionTime', 'lastUpdateTime', 'lastHeartbeatTime',
         'firstTimestamp', 'lastTimestamp', 'eventTime', 'renewTime', 'acquireTime', 'time', 'lastProbeTime',
         'expirationTimestamp'}
MESSAGES = {'message'}
UID_IN_KEY = re.compile(r'"uid":"[^"]*"')
#: What a real cluster's controllers put into every namespace (known.FURNITURE): left out of lists.
FURNITURE = 'kube-root-ca.crt'


def normalize(value: Any) -> Any:
    """The answer with what legitimately differs between two servers replaced by placeholders."""
    if isinstance(value, list):
        return [normalize(item) for item in value]
    if not isinstance(value, dict):
        return value
    result: dict[str, Any] = {}
    for key, item in value.items():
        if key in DROPPED:
            continue
        if key.startswith('k:') and '"uid":"' in key:   # an ownerReference in managedFields: by its uid
            key = UID_IN_KEY.sub('"uid":"<uid>"', key)
        if key == 'managedFields' and isinstance(item, list):   # ordered by time first: times are normalized
            result[key] = sorted(normalize(item), key=lambda entry: json.dumps(entry, sort_keys=True))
        elif key in OPAQUE and item not in ('', None, []):
            result[key] = OPAQUE[key]
        elif key in TIMES and item not in ('', None):
            result[key] = '<time>'
        else:
            result[key] = normalize(item)
    if isinstance(result.get('items'), list):
        result['items'] = [i for i in result['items'] if not furniture(i)]
    if value.get('generateName') and 'name' in result:
        result['name'] = '<generated>'
    if value.get('kind') == 'Table':
        ages = [i for i, c in enumerate(value.get('columnDefinitions') or []) if c.get('name') == 'Age']
        for row in result.get('rows') or []:
            row['cells'] = ['<age>' if i in ages else cell for i, cell in enumerate(row.get('cells') or [])]
        result['rows'] = [row for row in result.get('rows') or [] if (row.get('cells') or [''])[0] != FURNITURE]
    return result


def furniture(obj: Any) -> bool:
    return isinstance(obj, dict) and (obj.get('metadata') or {}).get('name') == FURNITURE


def flatten(value: Any, prefix: str = '') -> dict[str, Any]:
    """{'a.b.0.c': leaf}; empty containers are leaves, so `{}` and an absent key differ."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items()
                for k, v in flatten(item, f'{prefix}.{key}' if prefix else key).items()}
    if isinstance(value, list) and value:
        return {k: v for i, item in enumerate(value) for k, v in flatten(item, f'{prefix}.{i}').items()}
    return {prefix: value}


#: CEL's names of a CRD schema's object types: a fresh one per compilation on both sides.
SELF_TYPE = re.compile(r'selfType\d+')


def view(code: int, body: Any) -> Any:
    """What is compared of one answer: a Status by its code/reason/details, anything else whole."""
    if isinstance(body, dict) and body.get('kind') == 'Status':
        message = body.get('message')
        if isinstance(message, str):
            body = {**body, 'message': SELF_TYPE.sub('selfType<N>', message)}
        details = dict(body.get('details') or {})
        details.pop('uid', None)
        details.pop('retryAfterSeconds', None)
        causes = sorted((c.get('field', ''), c.get('reason', '')) for c in details.pop('causes', None) or [])
        return {'code': code, 'status': {'status': body.get('status'), 'reason': body.get('reason', ''),
                                         'code': body.get('code'), 'details': details,
                                         'causes': [list(c) for c in causes], 'message': body.get('message')}}
    return {'code': code, 'body': normalize(body)}


def differences(left: Any, right: Any) -> tuple[list[str], list[str]]:
    """The flattened paths that differ: (exactly compared ones, loosely compared messages)."""
    a, b = flatten(left), flatten(right)
    paths = sorted(p for p in a.keys() | b.keys() if a.get(p, '<absent>') != b.get(p, '<absent>'))
    loose = [p for p in paths if p.rsplit('.', 1)[-1] in MESSAGES and p in a and p in b]
    return [p for p in paths if p not in loose], loose


def covered(paths: Iterable[str], patterns: Iterable[str]) -> bool:
    patterns = list(patterns)
    return all(any(fnmatch.fnmatchcase(p, pattern) for pattern in patterns) for p in paths)


def sample(left: Any, right: Any, paths: list[str], limit: int = 6) -> str:
    a, b = flatten(left), flatten(right)
    return '; '.join(f'{p}: emulator={a.get(p, "<absent>")!r} envtest={b.get(p, "<absent>")!r}'
                     for p in paths[:limit]) + (f' (+{len(paths) - limit} more)' if len(paths) > limit else '')


def known_patterns(ids: Iterable[str], known: Mapping[str, Any]) -> list[str]:
    return [pattern for i in ids for pattern in known[i].fields]
