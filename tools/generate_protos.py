"""Regenerate `messages.py`: the protobuf field tables of every built-in kind the emulator serves.

    python tools/generate_protos.py /path/to/kubectl > kopf/_cluster/web/protos/messages.py

kubectl sends create/replace bodies of built-in kinds as `application/vnd.kubernetes.protobuf`
(e.g. `kubectl create namespace`), so the emulator decodes them. Every Go binary built with
k8s.io/api embeds the gzipped `FileDescriptorProto` of each `generated.proto`; this script finds
them in a kubectl binary, parses them with a minimal wire decoder (no protobuf library needed),
and keeps the transitive closure of the served kinds (those of `kopf/_shared/data/`, whose
kubectl is best the envtest build's, of the same version): message -> [field number, JSON name, kind,
type, repeated]. kinds: string, bytes, int, sint, bool, double, float, message, map, inline (an embedded
struct whose fields JSON puts into the parent's).
"""
import json
import pathlib
import sys
import zlib
from typing import Any

from kopf._cluster.web.protobuf import fields as wire_fields
from kopf._cluster.web.protobuf import package_of

RESOURCES = pathlib.Path(__file__).parent.parent / 'kopf' / '_shared' / 'data' / 'builtin_resources.json'
SCHEMAS = RESOURCES.parent.parent.parent / '_cluster' / 'openapi' / 'data' / 'builtin_schemas.json'
EXTRA_ROOTS = ['k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions']


def roots() -> list[str]:
    """Every served built-in kind and every kind its subresources take (from the generated resource table)."""
    entries = json.loads(RESOURCES.read_text())['resources']
    found = set(EXTRA_ROOTS)
    for entry in entries:
        found.add(f'{package_of(_api_version(entry["group"], entry["version"]))}.{entry["kind"]}')
        for sub in entry['subresources']:
            kind = sub['kind']
            found.add(f'{package_of(_api_version(kind["group"], kind["version"]))}.{kind["kind"]}')
    return sorted(found)


def _api_version(group: str, version: str) -> str:
    return f'{group}/{version}' if group else version


SCALARS = {1: 'double', 2: 'float', 3: 'int', 4: 'int', 5: 'int', 8: 'bool', 9: 'string', 12: 'bytes',
           13: 'int', 17: 'sint', 18: 'sint'}
GZIP = b'\x1f\x8b\x08\x00\x00\x00\x00\x00'


def descriptors(binary: bytes) -> list[bytes]:
    found, pos = [], binary.find(GZIP)
    while pos >= 0:
        try:
            found.append(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(binary[pos:pos + 4_000_000]))
        except zlib.error:
            pass
        pos = binary.find(GZIP, pos + 1)
    return found


def messages(files: list[bytes]) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for raw in files:
        try:
            parsed = wire_fields(raw)
        except (IndexError, ValueError):
            continue
        package = next((v.decode() for n, v in parsed if n == 2), '')
        for number, value in parsed:
            if number == 4:
                _message(value, package, table)
    return table


def _message(raw: bytes, scope: str, table: dict[str, Any]) -> None:
    parsed = wire_fields(raw)
    name = f'{scope}.' + next(v.decode() for n, v in parsed if n == 1)
    is_map = any(n == 7 and any(k == 7 and v for k, v in wire_fields(o)) for n, o in parsed)
    table[name] = {'map': is_map, 'fields': []}
    for number, value in parsed:
        if number == 2:
            field = dict(wire_fields(value))
            kind = SCALARS.get(field.get(5, 0), 'message')
            type_name = field.get(6, b'').decode().lstrip('.')
            table[name]['fields'].append([field[3], field[1].decode(), kind, type_name, field.get(4) == 3])
        elif number == 3:
            _message(value, name, table)


def _schema(message: str, schemas: dict[str, Any]) -> dict[str, Any] | None:
    found: dict[str, Any] | None = schemas.get('io.k8s.' + message.removeprefix('k8s.io.'))
    return found


def _json_name(message: str, field: str, schemas: dict[str, Any]) -> str:
    """The JSON name as the schema spells it, where the proto name differs in case only (`Webhooks`)."""
    properties = (_schema(message, schemas) or {}).get('properties') or {}
    return next((p for p in properties if p.lower() == field.lower()), field) if field not in properties else field


def _inlined(message: str, field: str, schemas: dict[str, Any]) -> bool:
    """A Go struct embedded with `json:",inline"` (Volume's volumeSource, IngressRule's ingressRuleValue):
    a message field that the kind's JSON schema (`builtin_schemas.json`) does not name."""
    schema = _schema(message, schemas)
    return schema is not None and bool(schema.get('properties')) and field not in schema['properties']


def closure(table: dict[str, Any]) -> dict[str, list[list[Any]]]:
    schemas = json.loads(SCHEMAS.read_text())['definitions']
    result: dict[str, list[list[Any]]] = {}
    pending = [name for name in roots() if name in table]   # kinds of other packages (CRDs) have no protobuf
    while pending:
        name = pending.pop()
        if name in result:
            continue
        entry = table[name]
        fields = []
        for number, json_name, kind, type_name, repeated in entry['fields']:
            if kind == 'message' and table.get(type_name, {}).get('map'):
                key, value = sorted(table[type_name]['fields'])
                fields.append([number, json_name, 'map', [key[2], value[2], value[3]], False])
                if value[2] == 'message':
                    pending.append(value[3])
            else:
                json_name = _json_name(name, json_name, schemas)
                inline = kind == 'message' and _inlined(name, json_name, schemas)
                fields.append([number, json_name, 'inline' if inline else kind, type_name, repeated])
                if kind == 'message':
                    pending.append(type_name)
        result[name] = sorted(fields)
    return dict(sorted(result.items()))


def main() -> None:
    with open(sys.argv[1], 'rb') as file:
        table = closure(messages(descriptors(file.read())))
    print('"""Generated by `tools/generate_protos.py` from the descriptors embedded in kubectl: do not edit."""')
    print('# ruff: noqa: E501')
    print('from typing import Any\n')
    print('# message -> [[number, json name, kind, type (message name, or [key, value kind, value type]), repeated]]')
    print('MESSAGES: dict[str, list[list[Any]]] = {')
    for name, fields in table.items():
        print(f'    {name!r}: [')
        for field in fields:
            print(f'        {field!r},')
        print('    ],')
    print('}')


if __name__ == '__main__':
    main()
