"""Objects in kube-apiserver's field order (Go structs' declaration order, maps sorted), and Go's escaping."""
import json
from typing import Any

import pytest

from kopf._cluster import jsoncodec
from kopf._cluster.openapi import fieldorder


def test_a_builtin_in_its_go_struct_order() -> None:
    pod: dict[str, Any] = {
        'status': {'phase': 'Running', 'conditions': [{'status': 'True', 'type': 'Ready'}]},
        'spec': {'restartPolicy': 'Never', 'containers': [{'image': 'x', 'name': 'c',
                                                           'ports': [{'protocol': 'TCP', 'containerPort': 80}]}],
                 'volumes': [{'emptyDir': {}, 'name': 'v'}], 'nodeSelector': {'z': '1', 'a': '2'}},
        'metadata': {'uid': 'u', 'name': 'p', 'labels': {'b': '1', 'a': '2'}, 'namespace': 'ns',
                     'ownerReferences': [{'uid': 'o', 'kind': 'Job', 'apiVersion': 'batch/v1', 'name': 'j'}]},
        'apiVersion': 'v1', 'kind': 'Pod',
    }
    fieldorder.arrange(pod)
    assert list(pod) == ['kind', 'apiVersion', 'metadata', 'spec', 'status']
    assert list(pod['metadata']) == ['name', 'namespace', 'uid', 'labels', 'ownerReferences']
    assert list(pod['metadata']['labels']) == ['a', 'b']
    assert list(pod['metadata']['ownerReferences'][0]) == ['apiVersion', 'kind', 'name', 'uid']
    assert list(pod['spec']) == ['volumes', 'containers', 'restartPolicy', 'nodeSelector']
    assert list(pod['spec']['volumes'][0]) == ['name', 'emptyDir']   # VolumeSource is inline, after the name
    assert list(pod['spec']['containers'][0]) == ['name', 'image', 'ports']
    assert list(pod['spec']['containers'][0]['ports'][0]) == ['containerPort', 'protocol']
    assert list(pod['spec']['nodeSelector']) == ['a', 'z']
    assert list(pod['status']['conditions'][0]) == ['type', 'status']


def test_a_custom_resource_with_sorted_keys_and_whole_floats_as_integers() -> None:
    obj: dict[str, Any] = {'spec': {'b': [2.0, {'y': 0.5, 'x': 1e20}], 'a': 1}, 'metadata': {'uid': 'u', 'name': 'n'},
                           'kind': 'Thing', 'apiVersion': 'example.com/v1'}
    fieldorder.arrange(obj)
    assert json.dumps(obj) == ('{"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "n", '
                               '"uid": "u"}, "spec": {"a": 1, "b": [2, {"x": 100000000000000000000, "y": 0.5}]}}')


def test_values_kept_as_sent_keep_their_order() -> None:
    crd: dict[str, Any] = {'apiVersion': 'apiextensions.k8s.io/v1', 'kind': 'CustomResourceDefinition',
                           'spec': {'versions': [{'schema': {'openAPIV3Schema': {
                               'type': 'object', 'default': {'z': 1, 'a': 2}}}, 'name': 'v1'}]}}
    fieldorder.arrange(crd)
    version = crd['spec']['versions'][0]
    assert list(version) == ['name', 'schema']
    assert list(version['schema']['openAPIV3Schema']) == ['type', 'default']   # JSONSchemaProps: id, $schema, ...
    assert list(version['schema']['openAPIV3Schema']['default']) == ['z', 'a']


def test_a_status_as_go_writes_it() -> None:
    status = {'code': 404, 'details': {'kind': 'pods', 'name': 'x'}, 'reason': 'NotFound', 'message': 'm',
              'status': 'Failure', 'metadata': {}, 'apiVersion': 'v1', 'kind': 'Status'}
    fieldorder.arrange_as(status, 'v1', 'Status')
    assert list(status) == ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code']
    assert list(status['details']) == ['name', 'kind']


@pytest.mark.parametrize('text, escaped', [
    ('<a href="x">&</a>', '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"'),
    ('line\u2028sep\u2029para', '"line\\u2028sep\\u2029para"'),
    ('plain ünïcode', '"plain ünïcode"'),
])
def test_strings_escaped_as_go_escapes_them(text: str, escaped: str) -> None:
    assert jsoncodec.dumps(text).decode() == escaped
    assert jsoncodec.loads(jsoncodec.dumps(text)) == text


def test_parts_shared_with_an_arranged_object_are_not_walked_again() -> None:
    stored: dict[str, Any] = {'apiVersion': 'example.com/v1', 'kind': 'Thing', 'metadata': {'name': 'n'},
                              'spec': {'a': 1, 'b': {'x': 1, 'y': 2}}}
    fieldorder.arrange(stored)
    shared = stored['spec']['b']
    shared['z'] = shared.pop('x')   # out of order on purpose: shared parts are taken as arranged, not checked
    new = {**stored, 'status': {'y': 1.0, 'x': {'d': 1, 'c': 2}}, 'spec': {'c': 3, **stored['spec']}}
    fieldorder.arrange(new, like=stored)
    assert list(new['status']) == ['x', 'y'] and list(new['status']['x']) == ['c', 'd']
    assert new['status']['y'] == 1 and type(new['status']['y']) is int
    assert list(new['spec']) == ['a', 'b', 'c'] and new['spec']['b'] is shared and list(shared) == ['y', 'z']


def test_a_builtins_parts_shared_with_an_arranged_object_are_not_walked_again() -> None:
    stored: dict[str, Any] = {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': 'p'},
                              'spec': {'containers': [{'name': 'a', 'image': 'x'}, {'name': 'b', 'image': 'y'}]}}
    fieldorder.arrange(stored)
    first = stored['spec']['containers'][0]
    first['name'] = first.pop('name')   # out of order on purpose, as above
    new = {**stored, 'spec': {'containers': [first, {'image': 'z', 'name': 'b'}]}}
    fieldorder.arrange(new, like=stored)
    assert list(new['spec']['containers'][0]) == ['image', 'name']   # the very same item: not walked
    assert list(new['spec']['containers'][1]) == ['name', 'image']   # a new one: arranged


def test_sorting_leaves_empty_maps_and_lists_and_shared_parts_as_they_are() -> None:
    shared = {'z': 1.0, 'a': {}}   # not in order: as stored before (arranged already), it is left so
    like = {'kept': shared}
    obj: dict[str, Any] = {'b': [], 'a': {}, 'kept': shared, 'new': {'y': [2.0, {'d': 1, 'c': 1.5}], 'x': {}}}
    fieldorder.sort_keys(obj, like)
    assert json.dumps(obj) == ('{"a": {}, "b": [], "kept": {"z": 1.0, "a": {}}, '
                               '"new": {"x": {}, "y": [2, {"c": 1.5, "d": 1}]}}')


def test_a_settled_value_is_not_walked_again() -> None:
    settled: dict[str, Any] = {'f:b': {}, 'f:a': {}}   # out of order on purpose: skipped, so it stays so
    fieldorder.settle(settled)
    try:
        obj: dict[str, Any] = {'kind': 'X', 'apiVersion': 'g/v1', 'spec': {'z': settled, 'y': {'b': 1, 'a': 2}}}
        fieldorder.arrange(obj)
        assert list(obj['spec']) == ['y', 'z'] and list(obj['spec']['y']) == ['a', 'b']
        assert list(settled) == ['f:b', 'f:a']
    finally:
        fieldorder.unsettle(settled)
    fieldorder.arrange(obj)
    assert list(settled) == ['f:a', 'f:b']


@pytest.mark.parametrize('text', ['a<b>c&d', 'line\u2028sep\u2029par', 'plain', 'é\u00e2', '\u2028<'])
def test_go_escapes_with_and_without_the_line_separators(text: str) -> None:
    expected = json.dumps(text, ensure_ascii=False).replace('<', '\\u003c').replace('>', '\\u003e').replace(
        '&', '\\u0026').replace('\u2028', '\\u2028').replace('\u2029', '\\u2029')
    assert jsoncodec.dumps(text) == expected.encode()
