"""Decoding kubectl's protobuf request bodies (hand-encoded here, so no kubectl is needed)."""
import pytest

from kopf._cluster import statuses
from kopf._cluster.web import protobuf


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str | int) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return b'k8s\x00' + _field(1, type_meta) + _field(2, raw)


def test_configmap() -> None:
    meta = _field(1, 'cm1') + _field(3, 'default') + _field(11, _field(1, 'app') + _field(2, 'x'))
    data, binary = _field(1, 'a') + _field(2, 'b'), _field(1, 'bin') + _field(2, b'\x00')
    raw = _field(1, meta) + _field(2, data) + _field(3, binary)
    assert protobuf.decode(_envelope('v1', 'ConfigMap', raw)) == {
        'apiVersion': 'v1', 'kind': 'ConfigMap',
        'metadata': {'name': 'cm1', 'namespace': 'default', 'labels': {'app': 'x'}},
        'data': {'a': 'b'}, 'binaryData': {'bin': 'AA=='},
    }


def test_deployment_with_int_or_string_and_zero_values_dropped() -> None:
    container = _field(1, 'c') + _field(2, 'nginx') + _field(6, _field(3, 8080))   # ports[].containerPort
    template = _field(1, b'') + _field(2, _field(2, container))
    strategy = _field(1, 'RollingUpdate') + _field(2, _field(1, _field(1, 1) + _field(3, '25%')))
    spec = _field(1, 3) + _field(3, template) + _field(4, strategy) + _field(7, 0)
    decoded = protobuf.decode(_envelope('apps/v1', 'Deployment', _field(1, _field(1, 'd1')) + _field(2, spec)))
    assert decoded['spec']['replicas'] == 3
    assert 'paused' not in decoded['spec']
    assert decoded['spec']['strategy'] == {'type': 'RollingUpdate', 'rollingUpdate': {'maxUnavailable': '25%'}}
    assert decoded['spec']['template'] == {'metadata': {}, 'spec': {'containers': [
        {'name': 'c', 'image': 'nginx', 'ports': [{'containerPort': 8080}]}]}}


def test_bad_bodies() -> None:
    with pytest.raises(statuses.ApiError) as exc:
        protobuf.decode(b'{"json": true}')
    assert exc.value.code == 400
    with pytest.raises(statuses.ApiError) as exc:
        protobuf.decode(_envelope('v1', 'NoSuchKind', b''))
    assert exc.value.code == 415


def _number(message: str, name: str) -> int:
    from kopf._cluster.web.protos.messages import MESSAGES
    return next(int(f[0]) for f in MESSAGES[message] if f[1] == name)


def test_custom_resource_definition_with_its_schema_unions() -> None:
    ext = 'k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.'
    props = ext + 'JSONSchemaProps'
    inner = _field(_number(props, 'type'), 'string')
    schema = (_field(_number(props, 'type'), 'object') +
              _field(_number(props, 'xKubernetesPreserveUnknownFields'), 1) +
              _field(_number(props, 'default'), _field(1, b'{"a": 0}')) +
              _field(_number(props, 'items'), _field(1, inner)) +
              _field(_number(props, 'additionalProperties'), _field(1, 0)))
    version = (_field(_number(ext + 'CustomResourceDefinitionVersion', 'name'), 'v1') +
               _field(_number(ext + 'CustomResourceDefinitionVersion', 'schema'), _field(1, schema)))
    spec = (_field(_number(ext + 'CustomResourceDefinitionSpec', 'group'), 'example.com') +
            _field(_number(ext + 'CustomResourceDefinitionSpec', 'versions'), version))
    body = protobuf.decode(_envelope('apiextensions.k8s.io/v1', 'CustomResourceDefinition',
                                     _field(1, _field(1, 'things.example.com')) + _field(2, spec)))
    assert body['metadata'] == {'name': 'things.example.com'}
    assert body['spec']['versions'][0]['schema']['openAPIV3Schema'] == {
        'type': 'object', 'x-kubernetes-preserve-unknown-fields': True, 'default': {'a': 0},
        'items': {'type': 'string'}, 'additionalProperties': False}
