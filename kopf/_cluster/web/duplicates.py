"""Duplicate fields in a JSON request body (or keys in a YAML apply), as kube-apiserver's strict decoding reports them.

A real server decodes bodies with `sigs.k8s.io/json`, which notes every key an object repeats
(`duplicate field "spec.replicas"`): with `fieldValidation=Strict` it is a 400 beside the unknown
fields, otherwise a warning. A fast parser keeps the last value silently, so the body is looked at
again only when it may repeat a key: when it has more bytes than its own re-encoding once both lose
their whitespace (escapes and number spellings may also make it longer: then the slow look finds none).
"""
import json
from collections.abc import Callable
from typing import Any

WHITESPACE = b' \t\r\n'


def duplicates(raw: bytes, body: Any, dumps: Callable[[Any], bytes]) -> list[str]:
    """The paths (`spec.replicas`, `spec.containers[0].name`) of the keys an object of the body repeats."""
    if not isinstance(body, (dict, list)) or len(raw.translate(None, WHITESPACE)) <= len(
            dumps(body).translate(None, WHITESPACE)):
        return []
    try:   # objects as their lists of pairs, resolved into paths below
        tree = json.loads(raw, object_pairs_hook=lambda items: {'\0pairs': items})
    except ValueError:
        return []
    return list(dict.fromkeys(_walk(tree, '')))


def _walk(value: Any, path: str) -> list[str]:
    result: list[str] = []
    if isinstance(value, dict) and '\0pairs' in value:
        seen: set[str] = set()
        for key, item in value['\0pairs']:
            where = f'{path}.{key}' if path else key
            if key in seen:
                result.append(where)
            seen.add(key)
            result.extend(_walk(item, where))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            result.extend(_walk(item, f'{path}[{index}]'))
    return result


def yaml_duplicates(raw: bytes) -> list[str]:
    """go-yaml's strict errors of a YAML document: `line 9: key "foo" already set in map`, in document order."""
    import yaml  # only for server-side applies, which are YAML

    found: list[str] = []

    class Loader(yaml.SafeLoader):
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, (str, int, float, bool)) and key in seen:
                    found.append(f'line {key_node.start_mark.line + 1}: key {json.dumps(key)} already set in map')
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    try:
        yaml.load(raw, Loader=Loader)
    except yaml.YAMLError:
        return []
    return found
