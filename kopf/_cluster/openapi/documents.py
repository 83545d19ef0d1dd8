"""The OpenAPI documents the emulator serves: `/openapi/v2`, the `/openapi/v3` index and its documents.

Built-in documents are the real kube-apiserver's, as served (generated at build time into
`data/openapi.json.xz` by `tools/generate_builtin_resources.py`). Custom resources get theirs
from their CRDs, as the apiextensions server makes them: one document per served group-version,
from the template the same tool read from a real server (its paths, with or without `status` and
`scale`, and its shared schemas), with each version's `openAPIV3Schema` as the kind's schema.

kubectl reads these to explain kinds and fields (`kubectl explain`), and to decide about
validation: a group-version with its document (and its `fieldValidation` parameters) means
server-side validation, so documents are either complete or absent (404), never partial.

Usage::

    index = documents.v3_index(crds)                  # {'paths': {'api/v1': {'serverRelativeURL': ...}}}
    document = documents.v3_document('apis/apps/v1', crds)   # None if not served
    swagger = documents.v2_document(crds)

Pure functions over the stored CRDs (dicts); the package data is decompressed once, lazily.
"""
import copy
import functools
import hashlib
import importlib.resources
import json
import lzma
import re
from collections.abc import Iterable, Mapping
from typing import Any

from kopf._cluster.openapi import openapiv2

DATA_FILE = 'openapi.json.xz'
Obj = Mapping[str, Any]


@functools.cache
def _data() -> dict[str, Any]:
    raw = importlib.resources.files('kopf._cluster.openapi.data').joinpath(DATA_FILE).read_bytes()
    loaded: dict[str, Any] = json.loads(lzma.decompress(raw))
    return loaded


def _dumps(document: Any) -> bytes:
    return json.dumps(document, separators=(',', ':'), sort_keys=True).encode()


@functools.cache
def _builtin_hash(name: str) -> str:
    return _hash(_data()['v3'][name])


def _hash(document: Any) -> str:
    return hashlib.sha512(_dumps(document)).hexdigest().upper()


def served_versions(crd: Obj) -> list[tuple[str, Mapping[str, Any]]]:
    """(group-version path, version entry) of each version a CRD serves."""
    spec = crd.get('spec') or {}
    return [(f'apis/{spec.get("group")}/{v["name"]}', v) for v in spec.get('versions') or [] if v.get('served')]


def _custom_groups(crds: Iterable[Obj]) -> dict[str, list[tuple[Obj, Mapping[str, Any]]]]:
    found: dict[str, list[tuple[Obj, Mapping[str, Any]]]] = {}
    for crd in crds:
        if crd.get('metadata', {}).get('deletionTimestamp'):
            continue
        for name, version in served_versions(crd):
            found.setdefault(name, []).append((crd, version))
    return found


def v3_index(crds: Iterable[Obj]) -> dict[str, Any]:
    paths = {name: f'/openapi/v3/{name}?hash={_builtin_hash(name)}' for name in _data()['v3']}
    for name, served in _custom_groups(crds).items():
        if name not in paths:   # a CRD cannot redefine a built-in group
            paths[name] = f'/openapi/v3/{name}?hash={_hash(_custom_document(served))}'
    return {'paths': {name: {'serverRelativeURL': url} for name, url in sorted(paths.items())}}


def v3_document(name: str, crds: Iterable[Obj]) -> Any | None:
    """The document of one group-version (`api/v1`, `apis/apps/v1`, `apis/kopf.dev/v1`), None if not served."""
    builtin = _data()['v3'].get(name)
    if builtin is not None:
        return builtin
    served = _custom_groups(crds).get(name)
    return _custom_document(served) if served else None


def v2_document(crds: Iterable[Obj]) -> dict[str, Any]:
    """The built-ins' Swagger 2.0 document, with the definitions of the custom kinds added."""
    document = dict(_data()['v2'])
    definitions = dict(document['definitions'])
    for name, served in _custom_groups(crds).items():
        if name in _data()['v3']:
            continue
        schemas = _custom_document(served)['components']['schemas']
        for crd, version in served:   # the kinds' own schemas as the apiextensions server's v2 builder makes them
            key = _prefix(crd['spec'], version)
            schemas[key] = openapiv2.kind_schema(crd, version, schemas[key])
        for key, schema in schemas.items():
            if key not in definitions:
                text = json.dumps(schema).replace('#/components/schemas/', '#/definitions/')
                definitions[key] = json.loads(text)
    document['definitions'] = definitions
    return document


def _camel(text: str) -> str:
    return ''.join(part[:1].upper() + part[1:] for part in re.split(r'[.-]', text) if part)


def _token(tokens: Mapping[str, str], match: re.Match[str]) -> str:
    return tokens.get(match.group(), match.group())


def _custom_document(served: list[tuple[Obj, Mapping[str, Any]]]) -> dict[str, Any]:
    template = _data()['crd']
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = copy.deepcopy(template['components'])
    for crd, version in served:
        spec = crd['spec']
        group, kind, plural = spec['group'], spec['names']['kind'], spec['names']['plural']
        tokens = {'@REVERSED@': '.'.join(reversed(group.split('.'))), '@GROUP@': group,
                  '@GROUPCAMEL@': _camel(group), '@GROUPLOWER@': _camel(group)[:1].lower() + _camel(group)[1:],
                  '@VERSION@': version['name'], '@VERSIONCAMEL@': _camel(version['name']),
                  '@KIND@': kind, '@PLURAL@': plural}
        text = json.dumps(template['scopes'].get(spec.get('scope'), template['scopes']['Namespaced']))
        part = json.loads(re.sub(r'@[A-Z]+@', functools.partial(_token, tokens), text))
        subresources = version.get('subresources') or {}
        for path, item in part['paths'].items():
            sub = path.rsplit('/', 1)[-1]
            if sub in ('status', 'scale') and path.endswith('{name}/' + sub) and sub not in subresources:
                continue
            paths[path] = item
        prefix = _prefix(spec, version)
        schemas[prefix] = _kind_schema(part['kind'], (version.get('schema') or {}).get('openAPIV3Schema'))
        schemas[f'{prefix}List'] = part['list']
    return {'openapi': template['openapi'], 'info': template['info'], 'paths': dict(sorted(paths.items())),
            'components': {'schemas': dict(sorted(schemas.items()))}}


def _prefix(spec: Obj, version: Obj) -> str:
    return f'{".".join(reversed(spec["group"].split(".")))}.{version["name"]}.{spec["names"]["kind"]}'


def _kind_schema(template: Mapping[str, Any], schema: Any) -> dict[str, Any]:
    """The CRD's schema of a version, with apiVersion/kind/metadata and the GVK extension as the server adds them."""
    result: dict[str, Any] = copy.deepcopy(dict(schema)) if isinstance(schema, Mapping) else {'type': 'object'}
    properties = dict(result.get('properties') or {})
    properties.update(copy.deepcopy(template.get('properties') or {}))
    result['properties'] = properties
    result['x-kubernetes-group-version-kind'] = copy.deepcopy(template['x-kubernetes-group-version-kind'])
    result.setdefault('type', 'object')
    return result
