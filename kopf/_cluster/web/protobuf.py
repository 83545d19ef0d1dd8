"""Decoding `application/vnd.kubernetes.protobuf` request bodies of built-in kinds into JSON-like dicts.

kubectl sends protobuf for typed built-ins (`kubectl create namespace|configmap|secret|deployment`).
The body is `k8s\\x00` + a `runtime.Unknown` envelope {typeMeta{apiVersion, kind}, raw}; `raw` is the
typed message, decoded here by the field tables in `protos.messages` (generated from kubectl's own
descriptors). Zero scalars are dropped (Go's `omitempty`/nil pointers); nested messages are kept
even when empty (as Go's JSON does for struct fields); zero `Time` values are dropped (`null`).
"""
import base64
import datetime
import re
import struct
from collections.abc import Iterator
from typing import Any

from kopf._cluster import jsoncodec, statuses

MAGIC = b'k8s\x00'
META = 'k8s.io.apimachinery.pkg.apis.meta.v1.'
TIME, MICRO_TIME = META + 'Time', META + 'MicroTime'
QUANTITY = 'k8s.io.apimachinery.pkg.api.resource.Quantity'
INT_OR_STRING = 'k8s.io.apimachinery.pkg.util.intstr.IntOrString'
EXT = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.'
RAW_JSON = {'k8s.io.apimachinery.pkg.runtime.RawExtension', META + 'FieldsV1', EXT + 'JSON'}
#: A CRD schema's unions, written in JSON as one of their members: (the member message, the other member).
EITHER = {EXT + 'JSONSchemaPropsOrArray': 'schemas', EXT + 'JSONSchemaPropsOrBool': 'allows',
          EXT + 'JSONSchemaPropsOrStringArray': 'strings'}


def varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, pos


def iterate(data: bytes) -> Iterator[tuple[int, Any]]:
    """(field number, value) pairs: ints for varints/fixed, bytes for length-delimited fields."""
    pos = 0
    while pos < len(data):
        key, pos = varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(data, pos)
            yield number, value
        elif wire == 2:
            length, pos = varint(data, pos)
            yield number, data[pos:pos + length]
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            yield number, int.from_bytes(data[pos:pos + size], 'little')
            pos += size
        else:
            raise ValueError(f'unsupported protobuf wire type {wire}')


def fields(data: bytes) -> list[tuple[int, Any]]:
    return list(iterate(data))


#: The protobuf packages of the groups whose types are not in k8s.io/api.
PACKAGES = {'apiextensions.k8s.io': 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions',
            'apiregistration.k8s.io': 'k8s.io.kube_aggregator.pkg.apis.apiregistration'}


def package_of(api_version: str) -> str:
    group, _, version = api_version.rpartition('/')
    if group == 'meta.k8s.io':
        return META.rstrip('.')
    if group in PACKAGES:
        return f'{PACKAGES[group]}.{version}'

    return f'k8s.io.api.{group.split(".")[0] if group else "core"}.{version}'


def decode(data: bytes) -> dict[str, Any]:
    """A protobuf request body as the JSON object a client would have sent; 400 if undecodable."""
    from kopf._cluster.web.protos.messages import MESSAGES  # the generated tables: only for protobuf bodies
    if not data.startswith(MAGIC):
        raise statuses.bad_request('the protobuf body does not start with the k8s envelope magic')
    try:
        envelope = dict(iterate(data[4:]))
        type_meta = {n: v.decode() for n, v in iterate(envelope.get(1, b''))}
        api_version, kind = type_meta.get(1, ''), type_meta.get(2, '')
        name = f'{package_of(api_version)}.{kind}'
        if name not in MESSAGES:
            name = f'{META}{kind}'
        if name not in MESSAGES:
            raise statuses.unsupported_media(['application/json', 'application/yaml'])
        obj = message(envelope.get(2, b''), name, MESSAGES)
    except (ValueError, IndexError, KeyError, UnicodeDecodeError, struct.error) as exc:
        raise statuses.bad_request(f'error decoding protobuf body: {exc}') from None
    return {'apiVersion': api_version, 'kind': kind, **obj}


def message(data: bytes, name: str, table: dict[str, list[list[Any]]]) -> Any:
    special = _special(data, name)
    if special is not _NOT_SPECIAL:
        return special
    spec = {field[0]: field for field in table[name]}
    out: dict[str, Any] = {}
    kept: set[str] = set()   # values written as JSON whatever they are (`default: 0`, `additionalProperties: false`)
    for number, raw in iterate(data):
        field = spec.get(number)
        if field is None:
            continue
        _, key, kind, type_name, repeated = field
        if kind == 'inline':   # a Go struct embedded with `json:",inline"`: its fields are the parent's
            out.update(message(raw, type_name, table))
        elif kind == 'map':
            entry = dict(iterate(raw))
            key_kind, value_kind, value_type = type_name
            mapped = _value(key_kind, '', entry.get(1, b'' if key_kind in ('string', 'bytes') else 0), table)
            value = _value(value_kind, value_type, entry.get(2, b'' if value_kind != 'int' else 0), table)
            out.setdefault(key, {})[mapped] = value
        elif repeated:
            values = out.setdefault(key, [])
            if kind in ('int', 'sint', 'bool') and isinstance(raw, bytes):   # packed encoding
                values.extend(_value(kind, '', v, table) for _, v in iterate(_as_varints(raw)))
            else:
                values.append(_value(kind, type_name, raw, table))
        else:
            value = _value(kind, type_name, raw, table)
            if value is not None:
                out[key] = value
                if type_name in RAW_JSON or type_name in EITHER:
                    kept.add(key)
    result = {k: v for k, v in out.items() if k in kept or not _is_zero(v)}
    return _json_names(result) if name == EXT + 'JSONSchemaProps' else result


def _json_names(schema: dict[str, Any]) -> dict[str, Any]:
    """A CRD schema's JSON names where its protobuf names differ: `$ref`, `$schema`, `x-kubernetes-*`."""
    renamed = {}
    for key, value in schema.items():
        if key in ('ref', 'schema'):
            key = '$' + key
        elif key.startswith('xKubernetes'):
            key = 'x-kubernetes' + re.sub(r'[A-Z]', lambda m: '-' + m.group().lower(), key[len('xKubernetes'):])
        renamed[key] = value
    return renamed


_NOT_SPECIAL = object()


def _special(data: bytes, name: str) -> Any:
    if name in (TIME, MICRO_TIME):
        parts = dict(iterate(data))
        seconds, nanos = _signed(int(parts.get(1, 0))), int(parts.get(2, 0))
        if not seconds and not nanos:
            return None
        moment = datetime.datetime.fromtimestamp(seconds, datetime.UTC) + datetime.timedelta(microseconds=nanos // 1000)
        return moment.strftime('%Y-%m-%dT%H:%M:%S.%fZ' if name == MICRO_TIME else '%Y-%m-%dT%H:%M:%SZ')
    if name == QUANTITY:
        return dict(iterate(data)).get(1, b'').decode()
    if name == INT_OR_STRING:
        parts = dict(iterate(data))
        return parts.get(3, b'').decode() if parts.get(1) == 1 else _signed(int(parts.get(2, 0)))
    if name in RAW_JSON:
        raw = dict(iterate(data)).get(1, b'')
        return jsoncodec.loads(raw) if raw else None
    if name in EITHER:
        return _either(data, EITHER[name])
    return _NOT_SPECIAL


def _either(data: bytes, other: str) -> Any:
    """JSONSchemaPropsOrArray (a schema, or a list), OrBool (a schema, or a bool), OrStringArray (or strings)."""
    from kopf._cluster.web.protos.messages import MESSAGES
    schema = EXT + 'JSONSchemaProps'
    parts = list(iterate(data))
    if other == 'schemas' and any(number == 2 for number, _ in parts):
        return [message(raw, schema, MESSAGES) for number, raw in parts if number == 2]
    if other == 'allows' and not any(number == 2 for number, _ in parts):
        return bool(dict(parts).get(1, 0))
    if other == 'strings' and any(number == 2 for number, _ in parts):
        return [raw.decode() for number, raw in parts if number == 2]
    found = next((raw for number, raw in parts if number == (1 if other != 'allows' else 2)), b'')
    return message(found, schema, MESSAGES)


def _value(kind: str, type_name: str, raw: Any, table: dict[str, list[list[Any]]]) -> Any:
    if kind == 'string':
        return raw.decode()
    if kind == 'bytes':
        return base64.b64encode(raw).decode()
    if kind == 'int':
        return _signed(raw)
    if kind == 'sint':
        return (raw >> 1) ^ -(raw & 1)
    if kind == 'bool':
        return bool(raw)
    if kind == 'double':
        return struct.unpack('<d', raw.to_bytes(8, 'little'))[0]
    if kind == 'float':
        return struct.unpack('<f', raw.to_bytes(4, 'little'))[0]
    return message(raw, type_name, table)


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _as_varints(data: bytes) -> bytes:
    """Re-key a packed run of varints as consecutive field-1 varints, so `iterate` can read it."""
    out, pos = bytearray(), 0
    while pos < len(data):
        _, end = varint(data, pos)
        out += b'\x08' + data[pos:end]
        pos = end
    return bytes(out)


def _is_zero(value: Any) -> bool:
    return value is None or (not isinstance(value, (dict, list)) and not value)
