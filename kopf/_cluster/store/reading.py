"""GET and LIST: single objects, and collections with selectors and limit/continue paging."""
import base64
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.store import selection, shardselectors
from kopf._cluster.store.objectstore import Obj, Store
from kopf._shared.resourcetable import Resource

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


def object_matcher(target: Target, params: Mapping[str, str], shards: bool = False) -> Any:
    """The predicate of the query's selectors; with `shards` (the gate is on), `shardSelector=` too."""
    labels = selection.parse_labels(params.get('labelSelector'))
    fields = selection.parse_fields(params.get('fieldSelector'), target.resource.selectable_fields())
    if target.name is not None:
        fields.append(selection.Requirement('metadata.name', '=', (target.name,)))
    match = selection.matcher(labels, fields)
    sharded = shard_selector(params) if shards else None
    if sharded is None:
        return match
    return lambda obj: sharded.matches(obj) and match(obj)


def shard_selector(params: Mapping[str, str]) -> shardselectors.Selector | None:
    """The query's `shardSelector` (absent or empty: none); a bad one is the real server's 500."""
    text = params.get('shardSelector')
    if not text:
        return None
    try:
        return shardselectors.parse(text)
    except shardselectors.ShardSelectorError as exc:
        raise statuses.ApiError(500, '', f'invalid shard selector: {exc}') from None


def list_objects(store: Store, target: Target, params: Mapping[str, str], shards: bool = False) -> bytes:
    resource = target.resource
    items, list_meta = select(store, target, params, shards)
    if resource.custom:
        list_meta.setdefault('continue', '')  # as a real server's lists of custom resources have it
    elif shards and params.get('shardSelector'):   # custom resources' lists have no place for it (unstructured)
        list_meta['shardInfo'] = {'selector': str(shard_selector(params))}
    return jsoncodec.dumps(listing(resource, items, list_meta))


LIST_META = ('selfLink', 'resourceVersion', 'continue', 'remainingItemCount', 'shardInfo')  # ListMeta's Go order


def listing(resource: Resource, items: list[Obj], list_meta: dict[str, Any]) -> dict[str, Any]:
    """A list's body: built-ins' items without their apiVersion and kind, as a real server lists them."""
    if resource.custom:   # as Go encodes an unstructured list: keys sorted
        return {'apiVersion': resource.api_version, 'items': items, 'kind': resource.list_kind,
                'metadata': dict(sorted(list_meta.items()))}
    items = [{k: v for k, v in item.items() if k != 'kind' and k != 'apiVersion'} for item in items]
    meta = {key: list_meta[key] for key in LIST_META if key in list_meta}
    return {'kind': resource.list_kind, 'apiVersion': resource.api_version, 'metadata': meta, 'items': items}


def select(store: Store, target: Target, params: Mapping[str, str],
           shards: bool = False) -> tuple[list[Obj], dict[str, Any]]:
    """The objects of one list page (selectors, limit, continue) and the list's metadata."""
    resource = target.resource
    match = object_matcher(target, params)
    limit = _int(params.get('limit'), 'limit')
    if shards and params.get('shardSelector'):   # parsed by the storage: after the handler's checks
        match = object_matcher(target, params, shards)
    list_rv, start = _decode_continue(params.get('continue'))
    if start is not None and 0 < list_rv < store.compacted:   # -1: the inconsistent continuation of a 410
        inconsistent = {'continue': _encode_continue(-1, start)}
        raise statuses.ApiError(410, 'Expired', EXPIRED_CONTINUE, list_meta=inconsistent)
    _check_exact(store, params)
    items: list[Obj] = []
    token = ''
    following = 0  # objects after a full page, matching or not: a real server's etcd paging sees them all
    keys = store.keys(resource.key, target.namespace, after=start)
    bucket = store.objects[resource.key]
    for index, objkey in enumerate(keys):
        if limit and len(items) >= limit:
            following = len(keys) - index
            break
        obj = bucket[objkey]
        if match(obj):
            items.append(as_version(obj, resource.api_version))
    list_rv = list_rv if list_rv > 0 else store.rv
    if following:
        last = items[-1]['metadata']
        token = _encode_continue(list_rv, (last.get('namespace') or '', last['name']))
    list_meta: dict[str, Any] = {'resourceVersion': str(list_rv)}
    if token:
        list_meta['continue'] = token
        if not (params.get('labelSelector') or params.get('fieldSelector') or target.name is not None
                or (shards and params.get('shardSelector'))):
            list_meta['remainingItemCount'] = following  # a real server counts only unfiltered lists
    return items, list_meta


def _check_exact(store: Store, params: Mapping[str, str]) -> None:
    """A list's resourceVersion options; `Exact`: only the current state is kept, older ones are 410 Expired."""
    match, rv = params.get('resourceVersionMatch'), params.get('resourceVersion') or ''
    if rv and not rv.isdigit():
        raise statuses.bad_request(f'invalid resource version: resourceVersion: Invalid value: "{rv}": '
                                   f'strconv.ParseUint: parsing "{rv}": invalid syntax')
    if match and not rv:
        raise list_options_invalid('resourceVersionMatch is forbidden unless resourceVersion is provided')
    if match != 'Exact':
        return
    if rv == '0':
        raise list_options_invalid('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    if not rv.isdigit():
        raise statuses.bad_request('resourceVersionMatch=Exact requires a non-zero resourceVersion')
    if int(rv) != store.rv:
        raise statuses.expired(f'too old resource version: {rv} ({store.rv})')


def list_options_invalid(text: str, field: str = 'resourceVersionMatch') -> statuses.ApiError:
    return statuses.invalid('ListOptions', 'meta.k8s.io', '', [statuses.cause('FieldValueForbidden', field,
                                                                               f'Forbidden: {text}')])


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
