"""`meta.k8s.io/v1 Table` (and v1beta1) answers for kubectl's `get` (Accept `...;as=Table;...`): columns and rows.

CRDs get Name plus their `additionalPrinterColumns` (or Age when they declare none — and only
then, as the real apiextensions server does), with cells typed as upstream's table convertor
types them: `string` columns print any value (maps and lists as compact JSON), `integer`,
`number`, `boolean` pass only values of that type (others become `<none>`), `date` columns
render timestamps as relative ages (`5m`, `3h20m`, `<invalid>`). `priority > 0` columns are sent
too; kubectl shows them only with `-o wide`. Built-ins get their usual columns (`printers.py`);
events (both groups) get the real server's: Last Seen, Type, Reason, Object, Message, and wide ones.

Each row carries its object as `?includeObject=` asks: `Metadata` (the default: a
PartialObjectMetadata), `Object` (the whole object: what `kubectl get --sort-by` sorts by), `None`.
"""
import datetime
import functools
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.openapi import fieldorder
from kopf._cluster.store.reading import LIST_META
from kopf._cluster.web import printers
from kopf._cluster.web.cells import AGE, NAME, Cell, age, human_duration, jsonpath
from kopf._shared.resourcetable import Resource

__all__ = ['negotiate', 'include_object', 'columns', 'table', 'partial', 'age', 'human_duration', 'jsonpath']
TABLE_VERSIONS = ('v1', 'v1beta1')
PLAIN = ('application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf',
         'application/json;stream=watch', 'application/vnd.kubernetes.protobuf;stream=watch')
INCLUDE_OBJECT = ('Metadata', 'Object', 'None')
COLUMN_FIELDS = ('name', 'type', 'format', 'description', 'priority')
DEFAULT_COLUMNS = [{'name': 'Age', 'type': 'date', 'jsonPath': '.metadata.creationTimestamp',
                    'description': AGE['description']}]


def negotiate(accept: str) -> str | None:
    """The Table version an Accept header asks for (`v1`, `v1beta1`), None for plain JSON, or a 406.

    The media ranges are taken in order, as a real server does: the first one it can serve wins; a
    Table of another group or version is skipped; when none is served (`application/xml`), a 406.
    """
    if not accept.strip():
        return None
    for entry in accept.split(','):
        mime, *rest = (part.strip() for part in entry.split(';'))
        params = dict(part.partition('=')[::2] for part in rest)
        if params.get('as') == 'Table':
            if params.get('g') == 'meta.k8s.io' and params.get('v') in TABLE_VERSIONS and _json(mime):
                return params['v']
        elif _json(mime) or mime in PLAIN:
            return None
    raise statuses.not_acceptable(PLAIN[:3])


def _json(mime: str) -> bool:
    return mime in ('application/json', 'application/*', '*/*', '*')


def include_object(params: Mapping[str, str]) -> str:
    """`?includeObject=`: what each row carries (`Metadata` by default); another value is the real server's 400."""
    value = params.get('includeObject') or 'Metadata'
    if value not in INCLUDE_OBJECT:
        raise statuses.bad_request(f'Unable to convert to Table as requested: includeObject: Invalid value: '
                                   f'"{value}": must be \'Metadata\', \'Object\', \'None\', or empty')
    return value


def columns(resource: Resource) -> list[tuple[dict[str, Any], Cell]]:
    if _is_event(resource):
        return _event_columns(resource.group)
    if not resource.custom:
        return printers.builtin_columns(resource.key)
    result: list[tuple[dict[str, Any], Cell]] = [(NAME, lambda obj: obj['metadata']['name'])]
    for column in resource.printer_columns or DEFAULT_COLUMNS:
        path = str(column.get('jsonPath', ''))
        description = column.get('description') or f'Custom resource definition column (in JSONPath format): {path}'
        definition = {'name': column.get('name', ''), 'type': column.get('type', 'string'),
                      'format': column.get('format', ''), 'description': description,
                      'priority': column.get('priority', 0)}
        result.append((definition, _printer_cell(path, str(column.get('type', 'string')))))
    return result


def _event_columns(group: str) -> list[tuple[dict[str, Any], Cell]]:
    """The real server's event columns (the same for both groups; from the generated table), with `event_cells`."""
    definitions = printers.builtin_columns((group, 'events'))
    return [(definition, _event_cell(group, index)) for index, (definition, _) in enumerate(definitions)]


def _event_cell(group: str, index: int) -> Cell:
    return lambda obj: event_cells(obj, group)[index]


def _is_event(resource: Resource) -> bool:
    return resource.plural == 'events' and resource.group in ('', 'events.k8s.io') and not resource.custom


def row_cells(resource: Resource) -> Callable[[Mapping[str, Any]], list[Any]]:
    """All cells of a row at once (events compute theirs together)."""
    if _is_event(resource):
        return functools.partial(event_cells, group=resource.group)
    cells = [cell for _, cell in columns(resource)]
    return lambda obj: [cell(obj) for cell in cells]


def event_cells(obj: Mapping[str, Any], group: str = '') -> list[Any]:
    """A row of an event as the real server prints it; events.k8s.io events are read by their own field names."""
    def get(core: str, new: str) -> Any:
        return jsonpath(obj, new if group else core)

    first = _event_age(get('.firstTimestamp', '.deprecatedFirstTimestamp')) or _event_age(obj.get('eventTime'))
    last = _event_age(get('.lastTimestamp', '.deprecatedLastTimestamp')) or first
    count = get('.count', '.deprecatedCount') or 1
    series = obj.get('series')
    if isinstance(series, Mapping):
        last, count = _event_age(series.get('lastObservedTime')) or '<unknown>', series.get('count') or count
    involved = get('.involvedObject', '.regarding') or {}
    involved = involved if isinstance(involved, Mapping) else {}
    kind, name = str(involved.get('kind') or '').lower(), involved.get('name')
    source = get('.source', '.deprecatedSource') or {}
    source = source if isinstance(source, Mapping) else {}
    component = source.get('component') or obj.get('reportingController' if group else 'reportingComponent') or ''
    host = source.get('host') or obj.get('reportingInstance') or ''
    message = get('.message', '.note')
    return [last or '<unknown>', obj.get('type') or '', obj.get('reason') or '', f'{kind}/{name}' if name else kind,
            involved.get('fieldPath') or '', ', '.join(part for part in (component, host) if part),
            message.strip() if isinstance(message, str) else '', first or '<unknown>',
            count if isinstance(count, int) else 1, obj['metadata'].get('name', '')]


def _event_age(timestamp: Any) -> str:
    return age(timestamp) if isinstance(timestamp, str) and timestamp else ''


def _printer_cell(path: str, kind: str) -> Cell:
    def cell(obj: Mapping[str, Any]) -> Any:
        value = jsonpath(obj, path)
        return None if value is None else typed_cell(kind, value)
    return cell


def typed_cell(kind: str, value: Any) -> Any:
    """A cell as upstream's `cellForJSONValue` (or jsonpath printing, for strings) makes it."""
    if kind == 'string':
        if isinstance(value, (dict, list)):
            return json.dumps(value, sort_keys=True, separators=(',', ':'))
        if isinstance(value, bool):
            return 'true' if value else 'false'
        return str(value)
    if kind == 'integer' and isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    if kind == 'number' and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == 'boolean' and isinstance(value, bool):
        return value
    if kind == 'date' and isinstance(value, str):
        if not re.fullmatch(r'\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)', value):
            return '<invalid>'
        try:
            datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))
        except ValueError:
            return '<invalid>'
        return age(value)
    return None


def table(resource: Resource, objects: Iterable[Mapping[str, Any]], list_meta: Mapping[str, Any],
          headers: bool = True, include: str = 'Metadata', version: str = 'v1') -> dict[str, Any]:
    """A Table of `meta.k8s.io/<version>` (v1beta1 is served as v1 with another apiVersion, as a real server does)."""
    cols = columns(resource)
    cells = row_cells(resource)
    rows = [{'cells': cells(obj), 'object': _row_object(resource, obj, include, version)} for obj in objects]
    meta = {key: list_meta[key] for key in LIST_META if key in list_meta}   # ListMeta's Go order
    body: dict[str, Any] = {'kind': 'Table', 'apiVersion': f'meta.k8s.io/{version}', 'metadata': meta}
    if headers:   # in TableColumnDefinition's Go order
        body['columnDefinitions'] = [{key: definition[key] for key in COLUMN_FIELDS if key in definition}
                                     for definition, _ in cols]
    body['rows'] = rows
    return body


def partial(obj: Mapping[str, Any], version: str = 'v1', custom: bool = False) -> dict[str, Any]:
    """A PartialObjectMetadata; a custom resource's metadata (stored with sorted keys) in ObjectMeta's Go order."""
    meta = obj['metadata']
    if custom:
        meta = jsoncodec.clone(meta)
        fieldorder.arrange_as(meta, 'meta.k8s.io/v1', 'ObjectMeta')
    return {'kind': 'PartialObjectMetadata', 'apiVersion': f'meta.k8s.io/{version}', 'metadata': meta}


def _row_object(resource: Resource, obj: Mapping[str, Any], include: str, version: str) -> dict[str, Any] | None:
    if include == 'Object':   # stored built-ins may lack their kind and apiVersion: a real server sends them
        whole = {'kind': resource.kind, 'apiVersion': resource.api_version, **obj}
        return dict(sorted(whole.items())) if resource.custom else whole
    return partial(obj, version, resource.custom) if include == 'Metadata' else None
