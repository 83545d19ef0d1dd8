"""Generate `builtin_schemas.json`: compact OpenAPI schemas of the built-in kinds the emulator serves.

Run (needs network access to PyPI once, or a local copy of the schemas; nothing is installed)::

    python tools/generate_builtin_schemas.py                 # downloads kubernetes-validate into a temp dir
    python tools/generate_builtin_schemas.py --source DIR    # DIR = …/kubernetes-json-schema/v1.34.0-local

It writes `kopf/_cluster/openapi/data/builtin_schemas.json` (package data, committed).

Source: the JSON schemas shipped in the PyPI package `kubernetes-validate` (its `vX.Y.0-local/
_definitions.json`, a JSON-Schema rendering of the upstream OpenAPI definitions). Chosen over the
official `kubernetes` client's models because it carries what the models lose: `required`, enums,
`x-kubernetes-list-type`/`-list-map-keys`, and `x-kubernetes-patch-strategy`/`-patch-merge-key`
(needed for strategic-merge patches), and it names the kinds by group/version/kind explicitly.
The Kubernetes version matches the one the emulator reports (1.34); the kinds are those of
`kopf/_shared/data/builtin_resources.json` (`tools/generate_builtin_resources.py`).

Compaction rules (the output is read by `kopf._cluster.openapi.kindschemas` and pruned by `kopf._shared.schemas`):
- descriptions, `x-kubernetes-group-version-kind` and unions are dropped; `type: [T, "null"]`
  becomes `type: T` (the server's defaulting step drops non-nullable nulls, as Go decoding does);
- `required` and `enum` are dropped: built-ins are validated by hand-written Go code, not by their
  OpenAPI, and these lists are looser or stricter than it (e.g. `ContainerStatus` "requires"
  `imageID`, `ReplicaSetStatus` "requires" `replicas`, and a status write without them is fine);
  the schemas serve pruning, types, formats and strategic-merge metadata;
- references become `{"$ref": "<definition name>"}` (resolved into shared, possibly cyclic dicts
  at load time);
- `IntOrString` → `x-kubernetes-int-or-string: true`; `Quantity` → `format: quantity` (any scalar);
  `Time`/`MicroTime` → `type: string, format: date-time`;
- free-form values the API server keeps verbatim (`RawExtension`, `apiextensions/v1 JSON`,
  `FieldsV1`, the `JSONSchemaPropsOr*` unions) → `x-kubernetes-preserve-unknown-fields: true`.
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable
from typing import Any

PACKAGE = 'kubernetes-validate==1.37.0'
K8S_VERSION = 'v1.34.0'
OUTPUT = pathlib.Path(__file__).parent.parent / 'kopf' / '_cluster' / 'openapi' / 'data' / 'builtin_schemas.json'

RESOURCES = pathlib.Path(__file__).parent.parent / 'kopf' / '_shared' / 'data' / 'builtin_resources.json'


def served_kinds() -> list[tuple[str, str, str]]:
    """(group, version, kind) of every built-in the emulator serves (from the generated resource table), plus Scale."""
    entries = json.loads(RESOURCES.read_text())['resources']
    kinds = {(entry['group'], entry['version'], entry['kind']) for entry in entries}
    return sorted(kinds | {('autoscaling', 'v1', 'Scale')})


KINDS: list[tuple[str, str, str]] = served_kinds()

META = 'io.k8s.apimachinery.pkg.apis.meta.v1.'
EXT = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.'
PRESERVE: dict[str, Any] = {'x-kubernetes-preserve-unknown-fields': True}
INLINED: dict[str, dict[str, Any]] = {
    'io.k8s.apimachinery.pkg.util.intstr.IntOrString': {'x-kubernetes-int-or-string': True},
    'io.k8s.apimachinery.pkg.api.resource.Quantity': {'format': 'quantity'},
    META + 'Time': {'type': 'string', 'format': 'date-time'},
    META + 'MicroTime': {'type': 'string', 'format': 'date-time'},
    META + 'FieldsV1': PRESERVE,
    'io.k8s.apimachinery.pkg.runtime.RawExtension': PRESERVE,
    EXT + 'JSON': PRESERVE,
    EXT + 'JSONSchemaPropsOrArray': PRESERVE,
    EXT + 'JSONSchemaPropsOrBool': PRESERVE,
    EXT + 'JSONSchemaPropsOrStringArray': PRESERVE,
}
KEPT_KEYS = {
    'type', 'format', 'properties', 'additionalProperties', 'items', '$ref',
    'x-kubernetes-list-type', 'x-kubernetes-list-map-keys', 'x-kubernetes-map-type',
    'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key',
}


def fetch(workdir: pathlib.Path) -> pathlib.Path:
    """Download the kubernetes-validate wheel (no install, no dependencies) and unpack its schemas."""
    cmd = [sys.executable, '-m', 'pip', 'download', '--no-deps', '--quiet', '-d', str(workdir), PACKAGE]
    subprocess.run(cmd, check=True)
    [wheel] = workdir.glob('kubernetes_validate-*.whl')
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(workdir / 'unpacked')
    return workdir / 'unpacked' / 'kubernetes_validate' / 'kubernetes-json-schema' / f'{K8S_VERSION}-local'


def compact(node: Any) -> Any:
    if isinstance(node, list):
        return [compact(item) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get('$ref'), str):
        name = node['$ref'].rsplit('/', 1)[-1]
        return dict(INLINED[name]) if name in INLINED else {'$ref': name}
    result: dict[str, Any] = {}
    for key, value in node.items():
        if key not in KEPT_KEYS:
            continue
        if key == 'type' and isinstance(value, list):
            types = [t for t in value if t != 'null']
            value = types[0] if len(types) == 1 else types
        elif key == 'properties':
            value = {name: compact(sub) for name, sub in value.items()}
        elif key in ('items', 'additionalProperties'):
            value = compact(value)
        result[key] = value
    return result


def reachable(definitions: dict[str, Any], roots: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name in INLINED:
            continue
        seen.add(name)
        stack.extend(_refs(definitions[name]))
    return sorted(seen)


def _refs(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        if isinstance(node.get('$ref'), str):
            yield node['$ref'].rsplit('/', 1)[-1]
        for key, value in node.items():
            if key == 'properties':  # a map of names to schemas: a property may be called "$ref"
                for sub in value.values():
                    yield from _refs(sub)
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)


def generate(source: pathlib.Path) -> dict[str, Any]:
    definitions: dict[str, Any] = json.loads((source / '_definitions.json').read_text())['$defs']
    by_gvk = {
        (gvk['group'], gvk['version'], gvk['kind']): name
        for name, schema in definitions.items()
        for gvk in schema.get('x-kubernetes-group-version-kind', [])
    }
    kinds = {f'{group}/{version}/{kind}'.lstrip('/'): by_gvk[group, version, kind] for group, version, kind in KINDS}
    roots = set(kinds.values())
    names = reachable(definitions, roots)
    compacted = {name: compact(definitions[name]) for name in names}
    for name, schema in compacted.items():
        if schema.get('type') == 'object' and 'properties' not in schema and 'additionalProperties' not in schema:
            print(f'note: {name} is an empty object: all its content is pruned (right for empty Go structs only)')
    return {'source': f'{PACKAGE} ({K8S_VERSION}-local)', 'kinds': kinds, 'definitions': compacted}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--source', type=pathlib.Path, help=f'a kubernetes-validate {K8S_VERSION}-local directory')
    parser.add_argument('--output', type=pathlib.Path, default=OUTPUT)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        source = args.source or fetch(pathlib.Path(tmp))
        data = generate(source)
    args.output.write_text(json.dumps(data, separators=(',', ':'), sort_keys=True) + '\n')
    size = args.output.stat().st_size
    print(f'{args.output}: {len(data["kinds"])} kinds, {len(data["definitions"])} definitions, {size} bytes')


if __name__ == '__main__':
    main()
