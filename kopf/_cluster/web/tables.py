"""`meta.k8s.io/v1 Table` answers for kubectl's `get` (Accept `...;as=Table;...`): columns and rows.

CRDs get Name plus their `additionalPrinterColumns` (or Age when they declare none — and only
then, as the real apiextensions server does), with cells typed as upstream's table convertor
types them: `string` columns print any value (maps and lists as compact JSON), `integer`,
`number`, `boolean` pass only values of that type (others become `<none>`), `date` columns
render timestamps as relative ages (`5m`, `3h20m`, `<invalid>`). `priority > 0` columns are sent
too; kubectl shows them only with `-o wide`. Built-ins get their usual columns (`printers.py`).
"""
import datetime
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kopf._cluster.apis.resourcetable import Resource
from kopf._cluster.web import printers
from kopf._cluster.web.printers import AGE, NAME, Cell, age, jsonpath

__all__ = ['wants_table', 'columns', 'table', 'partial', 'age', 'human_duration', 'jsonpath']
DEFAULT_COLUMNS = [{'name': 'Age', 'type': 'date', 'jsonPath': '.metadata.creationTimestamp',
                    'description': AGE['description']}]


def wants_table(accept: str) -> bool:
    return 'as=Table' in accept


def human_duration(seconds: float) -> str:
    return printers.human_duration(seconds)


def columns(resource: Resource) -> list[tuple[dict[str, Any], Cell]]:
    if not resource.custom:
        return printers.builtin_columns(resource.key)
    result: list[tuple[dict[str, Any], Cell]] = [(NAME, lambda obj: obj['metadata']['name'])]
    if resource.custom:
        for column in resource.printer_columns or DEFAULT_COLUMNS:
            path = str(column.get('jsonPath', ''))
            description = column.get('description') or f'Custom resource definition column (in JSONPath format): {path}'
            definition = {'name': column.get('name', ''), 'type': column.get('type', 'string'),
                          'format': column.get('format', ''), 'description': description,
                          'priority': column.get('priority', 0)}
            result.append((definition, _printer_cell(path, str(column.get('type', 'string')))))
    return result


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
          headers: bool = True) -> dict[str, Any]:
    cols = columns(resource)
    rows = [{'cells': [cell(obj) for _, cell in cols], 'object': partial(obj)} for obj in objects]
    body: dict[str, Any] = {'kind': 'Table', 'apiVersion': 'meta.k8s.io/v1', 'metadata': dict(list_meta)}
    if headers:
        body['columnDefinitions'] = [definition for definition, _ in cols]
    body['rows'] = rows
    return body


def partial(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {'kind': 'PartialObjectMetadata', 'apiVersion': 'meta.k8s.io/v1', 'metadata': obj['metadata']}
