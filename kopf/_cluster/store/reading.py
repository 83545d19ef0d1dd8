"""GET and LIST: single objects, and collections with selectors and limit/continue paging."""
import base64
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.store import selection
from kopf._cluster.store.objectstore import Obj, Store

EXPIRED_CONTINUE = ('The provided continue parameter is too old to display a consistent list result. '
                    'You can start a new list without the continue parameter, or use the continue token '
                    'in this response to retrieve the remainder of the results. Continuing with the provided '
                    'token results in an inconsistent list - objects that were created, modified, or deleted '
                    'between the time the first chunk was returned and now may show up in the list.')


def get_object(store: Store, target: Target) -> Obj:
    resource = target.resource
    name = target.name or ''
    obj = store.get(resource.key, target.namespace or '', name)
    if obj is None:
        raise statuses.not_found(resource.qualified, resource.group, resource.plural, name)
    return as_version(obj, resource.api_version)


def as_version(obj: Obj, api_version: str) -> Obj:
    """Objects stored via another served version are served as the requested one (conversion: None)."""
    return obj if obj.get('apiVersion') == api_version else {**obj, 'apiVersion': api_version}


def object_matcher(target: Target, params: Mapping[str, str]) -> Any:
    labels = selection.parse_labels(params.get('labelSelector'))
    fields = selection.parse_fields(params.get('fieldSelector'), target.resource.selectable_fields())
    if target.name is not None:
        fields.append(selection.Requirement('metadata.name', '=', (target.name,)))
    return selection.matcher(labels, fields)


def list_objects(store: Store, target: Target, params: Mapping[str, str]) -> bytes:
    resource = target.resource
    items, list_meta = select(store, target, params)
    if not resource.custom:
        items = [{k: v for k, v in item.items() if k != 'kind' and k != 'apiVersion'} for item in items]
    body = {'kind': resource.list_kind, 'apiVersion': resource.api_version, 'metadata': list_meta, 'items': items}
    return jsoncodec.dumps(body)


def select(store: Store, target: Target, params: Mapping[str, str]) -> tuple[list[Obj], dict[str, Any]]:
    """The objects of one list page (selectors, limit, continue) and the list's metadata."""
    resource = target.resource
    match = object_matcher(target, params)
    limit = _int(params.get('limit'), 'limit')
    list_rv, start = _decode_continue(params.get('continue'))
    if start is not None and list_rv < store.compacted:
        raise statuses.expired(EXPIRED_CONTINUE)
    _check_exact(store, params)
    items: list[Obj] = []
    token = ''
    remaining = 0
    for obj in store.iterate(resource.key, target.namespace):
        meta = obj['metadata']
        if start is not None and (meta.get('namespace') or '', meta['name']) <= start:
            continue
        if not match(obj):
            continue
        if limit and len(items) >= limit:
            remaining += 1
            continue
        items.append(as_version(obj, resource.api_version))
    list_rv = list_rv or store.rv
    if remaining:
        last = items[-1]['metadata']
        token = _encode_continue(list_rv, (last.get('namespace') or '', last['name']))
    list_meta: dict[str, Any] = {'resourceVersion': str(list_rv)}
    if token:
        list_meta['continue'] = token
        list_meta['remainingItemCount'] = remaining
    return items, list_meta


def _check_exact(store: Store, params: Mapping[str, str]) -> None:
    """`resourceVersionMatch=Exact`: only the current state is kept, older snapshots are 410 Expired."""
    if params.get('resourceVersionMatch') != 'Exact':
        return
    rv = params.get('resourceVersion') or ''
    if not rv.isdigit() or rv == '0':
        raise statuses.bad_request('resourceVersionMatch=Exact requires a non-zero resourceVersion')
    if int(rv) != store.rv:
        raise statuses.expired(f'too old resource version: {rv} ({store.rv})')


def _int(value: str | None, name: str) -> int:
    if not value:
        return 0
    try:
        return max(0, int(value))
    except ValueError:
        raise statuses.bad_request(f'invalid value for {name}: {value!r}') from None


def _encode_continue(rv: int, start: tuple[str, str]) -> str:
    raw = jsoncodec.dumps({'rv': rv, 'start': list(start)})
    return base64.urlsafe_b64encode(raw).decode().rstrip('=')


def _decode_continue(token: str | None) -> tuple[int, tuple[str, str] | None]:
    if not token:
        return 0, None
    try:
        raw = base64.urlsafe_b64decode(token + '=' * (-len(token) % 4))
        data = jsoncodec.loads(raw)
        return int(data['rv']), (str(data['start'][0]), str(data['start'][1]))
    except (ValueError, KeyError, IndexError, TypeError):
        raise statuses.bad_request('continue key is not valid: invalid token') from None
