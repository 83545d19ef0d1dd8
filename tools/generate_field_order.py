"""Generate `field_order.json`: the JSON field order of the built-in kinds, as kube-apiserver writes them.

Run (needs Go and the Go module proxy once, to have the sources in the module cache)::

    python tools/generate_field_order.py [--version v0.34.4]

kube-apiserver encodes built-in objects with Go's `encoding/json`, which writes a struct's fields in their
declaration order (embedded `json:",inline"` structs in place) and a map's keys sorted. The order is read
from the Go sources of the API types (`k8s.io/api`, `k8s.io/apimachinery`'s meta/v1,
`k8s.io/apiextensions-apiserver`, `k8s.io/kube-aggregator`) at the version of the envtest binaries; the
output (package data, committed) is read by `kopf/_cluster/openapi/fieldorder.py`:

    {"types": [[name, [[json name, child], ...]], ...], "kinds": {"apps/v1/Deployment": index, ...}}

where a child is `null` (a scalar, or a value kept as sent), `i` (the struct `types[i]`, or a list of them:
a schema's `items`), `["list", i]`,
`["map", i]` (values of `types[i]`) or `["map", null]` (a map of scalars: keys sorted).
"""
import argparse
import json
import pathlib
import re
import subprocess
from typing import Any

OUTPUT = pathlib.Path(__file__).parent.parent / 'kopf' / '_cluster' / 'openapi' / 'data' / 'field_order.json'
SCHEMAS = pathlib.Path(__file__).parent.parent / 'kopf' / '_cluster' / 'openapi' / 'data' / 'builtin_schemas.json'
MODULES = ('k8s.io/api', 'k8s.io/apimachinery', 'k8s.io/apiextensions-apiserver', 'k8s.io/kube-aggregator')
#: Kinds the emulator writes that are no stored kind (their package is found by the same rule).
EXTRA = {'meta.k8s.io/v1/Table': 'k8s.io/apimachinery/pkg/apis/meta/v1.Table',
         'meta.k8s.io/v1/PartialObjectMetadata': 'k8s.io/apimachinery/pkg/apis/meta/v1.PartialObjectMetadata',
         'v1/Status': 'k8s.io/apimachinery/pkg/apis/meta/v1.Status',
         'v1/List': 'k8s.io/apimachinery/pkg/apis/meta/v1.List',
         'meta.k8s.io/v1/ObjectMeta': 'k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta'}
EXT = 'k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1.'
#: Types with their own MarshalJSON, written as another type: a schema, or a list of schemas, or a bool.
ALIASES = {EXT + 'JSONSchemaPropsOrArray': EXT + 'JSONSchemaProps',
           EXT + 'JSONSchemaPropsOrBool': EXT + 'JSONSchemaProps'}
STRUCT = re.compile(r'^type (\w+) struct \{\n(.*?)^\}', re.MULTILINE | re.DOTALL)
NAMED = re.compile(r'^type (\w+) ((?:map\[|\[\])[^\n{]+)$', re.MULTILINE)
FIELD = re.compile(r'^\s*(?:(\w+)\s+)?([\w.\[\]*]+)\s+`([^`]*)`')
IMPORT = re.compile(r'^\s*(?:(\w+)\s+)?"([^"]+)"$', re.MULTILINE)


def module_dir(module: str, version: str) -> pathlib.Path:
    found = subprocess.run(['go', 'mod', 'download', '-json', f'{module}@{version}'],
                           capture_output=True, text=True, check=True)
    return pathlib.Path(json.loads(found.stdout)['Dir'])


class Sources:
    """The Go packages of the API types: their structs and named map/slice types, parsed on demand."""

    def __init__(self, dirs: dict[str, pathlib.Path]) -> None:
        self.dirs = dirs
        self.structs: dict[str, list[tuple[str, str, str]]] = {}   # pkg.Type -> (json name | '' inline, type, pkg)
        self.named: dict[str, tuple[str, str]] = {}                 # pkg.Type -> (type expression, pkg)
        self.parsed: set[str] = set()

    def package(self, pkg: str) -> None:
        if pkg in self.parsed:
            return
        self.parsed.add(pkg)
        module = next((m for m in MODULES if pkg == m or pkg.startswith(m + '/')), None)
        if module is None:
            return
        folder = self.dirs[module] / pkg[len(module):].lstrip('/')
        for path in sorted(folder.glob('*.go')):
            if path.name.endswith('_test.go') or path.name.startswith('zz_generated'):
                continue
            text = re.sub(r'//[^\n]*', '', path.read_text())
            imports = {alias or target.rsplit('/', 1)[-1]: target for alias, target in IMPORT.findall(text)}
            for name, body in STRUCT.findall(text):
                fields = []
                for line in body.splitlines():
                    found = FIELD.match(line)
                    if found is None:
                        continue
                    go_name, type_expr, tags = found.groups()
                    tag = re.search(r'json:"([^"]*)"', tags)
                    if tag is None or tag.group(1) == '-':
                        continue
                    json_name, _, options = tag.group(1).partition(',')
                    inline = not json_name and 'inline' in options.split(',')
                    if not json_name and not inline:
                        json_name = go_name or type_expr.rsplit('.', 1)[-1]
                    fields.append((json_name, self.qualify(type_expr, pkg, imports), pkg))
                self.structs[f'{pkg}.{name}'] = fields
            for name, expr in NAMED.findall(text):
                self.named[f'{pkg}.{name}'] = (self.qualify(expr.strip(), pkg, imports), pkg)

    @staticmethod
    def qualify(expr: str, pkg: str, imports: dict[str, str]) -> str:
        """Type names made absolute: `metav1.ObjectMeta` -> `k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta`."""
        def one(found: re.Match[str]) -> str:
            word = found.group()
            if '.' in word:
                alias, _, name = word.partition('.')
                return f'{imports.get(alias, alias)}.{name}'
            if word in ('map', 'string', 'bool', 'byte', 'int', 'int32', 'int64', 'float64', 'uint64', 'uint8',
                        'interface', 'any'):
                return word
            return f'{pkg}.{word}'
        return re.sub(r'[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?', one, expr)

    def fields(self, qualified: str) -> list[tuple[str, str]] | None:
        """A struct's fields with inline ones expanded: (json name, child type expression); None if no struct."""
        self.package(qualified.rsplit('.', 1)[0])
        if qualified not in self.structs:
            return None
        result: list[tuple[str, str]] = []
        for json_name, type_expr, _ in self.structs[qualified]:
            if json_name:
                result.append((json_name, type_expr))
            else:
                result.extend(self.fields(type_expr.lstrip('*')) or [])
        return result


class Table:
    def __init__(self, sources: Sources) -> None:
        self.sources = sources
        self.index: dict[str, int] = {}
        self.types: list[list[Any]] = []

    def struct(self, qualified: str) -> int | None:
        if qualified in self.index:
            return self.index[qualified]
        fields = self.sources.fields(qualified)
        if fields is None:
            return None
        position = self.index[qualified] = len(self.types)
        entry: list[Any] = [qualified, []]
        self.types.append(entry)
        entry[1] = [[name, self.child(expr)] for name, expr in fields]
        return position

    def child(self, expr: str) -> Any:
        expr = expr.lstrip('*')
        if expr == '[]byte':
            return None
        if expr.startswith('[]'):
            inner = self.child(expr[2:])
            return ['list', inner] if isinstance(inner, int) else (['list', inner] if inner else None)
        if expr.startswith('map['):
            value = expr[expr.index(']') + 1:]
            inner = self.child(value)
            return ['map', inner if isinstance(inner, int) else None]
        expr = ALIASES.get(expr, expr)
        self.sources.package(expr.rsplit('.', 1)[0]) if '.' in expr else None
        if expr in self.sources.named:
            return self.child(self.sources.named[expr][0])
        return self.struct(expr)


def go_name(openapi: str) -> str:
    """`io.k8s.api.apps.v1.Deployment` -> `k8s.io/api/apps/v1.Deployment` (the type's Go package and name)."""
    rest = openapi.removeprefix('io.k8s.')
    module, _, path = rest.partition('.')
    *folders, name = path.split('.')
    return f'k8s.io/{module}/' + '/'.join(folders) + f'.{name}'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--version', default='v0.34.4', help='of the k8s.io staging modules')
    parser.add_argument('--output', type=pathlib.Path, default=OUTPUT)
    args = parser.parse_args()
    dirs = {m: module_dir(m, args.version) for m in MODULES}
    table = Table(Sources(dirs))
    kinds = {kind: go_name(name) for kind, name in json.loads(SCHEMAS.read_text())['kinds'].items()}
    kinds.update(EXTRA)
    indices: dict[str, int] = {}
    for kind, qualified in sorted(kinds.items()):
        found = table.struct(qualified)
        if found is None:
            raise SystemExit(f'{kind}: no Go struct {qualified}')
        indices[kind] = found
    args.output.write_text(json.dumps({'source': f'k8s.io staging modules {args.version}', 'types': table.types,
                                       'kinds': indices}, separators=(',', ':')) + '\n')
    print(f'{len(indices)} kinds, {len(table.types)} types -> {args.output}')


if __name__ == '__main__':
    main()
