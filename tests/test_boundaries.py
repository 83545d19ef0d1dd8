"""The client layer's boundary: aiohttp's client is used only in `kopf/_api/`; `aiohttp.web` (the server side)
only in the emulator (`kopf/_cluster/`) and the reactor's probe (and webhook) servers.

Found by reading the code (AST), not by importing it: imports of aiohttp and its submodules, attribute uses
of the module (`aiohttp.ClientSession`, `aiohttp.web.Application`), string annotations, dynamic imports.
"""
import ast
import fnmatch
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).parent.parent / 'kopf'
CLIENT_ALLOWED = ['_api/*']
SERVER_ALLOWED = ['_cluster/*', '_engine/probing.py', '_metrics/prometheus.py', '_admission/servers.py']
_DOTTED = re.compile(r'\baiohttp((?:\.\w+)*)')


def _kind(dotted: str) -> str:
    """'server' for `aiohttp.web...`, else 'client' (everything else aiohttp offers is its client or shared)."""
    return 'server' if dotted == 'aiohttp.web' or dotted.startswith('aiohttp.web.') else 'client'


def uses(source: str) -> list[tuple[int, str, str]]:
    """(line, 'client'|'server', what) for every use of aiohttp in the source."""
    tree = ast.parse(source)
    found: list[tuple[int, str, str]] = []
    aliases: set[str] = set()   # names bound to the aiohttp module itself

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == 'aiohttp' or alias.name.startswith('aiohttp.'):
                    if alias.name == 'aiohttp' or alias.asname is None:
                        aliases.add(alias.asname or 'aiohttp')
                    if alias.name != 'aiohttp':
                        found.append((node.lineno, _kind(alias.name), f'import {alias.name}'))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None:
            if node.module == 'aiohttp':
                for alias in node.names:
                    found.append((node.lineno, _kind(f'aiohttp.{alias.name}'), f'from aiohttp import {alias.name}'))
            elif node.module.startswith('aiohttp.'):
                found.append((node.lineno, _kind(node.module), f'from {node.module} import ...'))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ''
            target = node.args[0].value
            dynamic = name in ('import_module', '__import__') and isinstance(target, str)
            if dynamic and isinstance(target, str) and target.split('.')[0] == 'aiohttp':
                found.append((node.lineno, _kind(target) if target != 'aiohttp' else 'client', f'{name}({target!r})'))

    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            found.append((node.lineno, _kind(f'aiohttp.{node.attr}'), f'{node.value.id}.{node.attr}'))

    annotations: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg) and node.annotation is not None:
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
    for annotation in annotations:
        for sub in ast.walk(annotation):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                for match in _DOTTED.finditer(sub.value):
                    if match.group(1):
                        found.append((annotation.lineno, _kind(match.group(0)), repr(sub.value)))
    return sorted(set(found))


def _allowed(relative: str, patterns: list[str]) -> bool:
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in patterns)


def _modules() -> list[pathlib.Path]:
    return sorted(ROOT.rglob('*.py'))


def test_aiohttp_client_only_in_the_api_layer_and_its_server_only_in_the_servers() -> None:
    violations: list[str] = []
    for path in _modules():
        relative = path.relative_to(ROOT).as_posix()
        for line, kind, what in uses(path.read_text()):
            allowed = CLIENT_ALLOWED if kind == 'client' else SERVER_ALLOWED
            if not _allowed(relative, allowed):
                violations.append(f'kopf/{relative}:{line}: aiohttp {kind} ({what})')
    assert violations == []


def test_the_scan_sees_the_layers_that_do_use_aiohttp() -> None:
    """Not vacuous: the client layer, the emulator and the probe server are found where they are."""
    by_file = {path.relative_to(ROOT).as_posix(): {kind for _, kind, _ in uses(path.read_text())}
               for path in _modules()}
    assert 'client' in by_file['_api/transports.py']
    assert 'server' in by_file['_cluster/web/dispatching.py']
    assert 'server' in by_file['_engine/probing.py']


@pytest.mark.parametrize('source, expected', [
    ('import aiohttp\naiohttp.ClientSession()', [(2, 'client', 'aiohttp.ClientSession')]),
    ('import aiohttp as h\nh.TCPConnector()', [(2, 'client', 'h.TCPConnector')]),
    ('from aiohttp import ClientSession', [(1, 'client', 'from aiohttp import ClientSession')]),
    ('from aiohttp import web', [(1, 'server', 'from aiohttp import web')]),
    ('import aiohttp.web\naiohttp.web.Application()', [(1, 'server', 'import aiohttp.web'),
                                                       (2, 'server', 'aiohttp.web')]),
    ('from aiohttp.web import Application', [(1, 'server', 'from aiohttp.web import ...')]),
    ('from aiohttp.client import ClientSession', [(1, 'client', 'from aiohttp.client import ...')]),
    ('import importlib\nimportlib.import_module("aiohttp")', [(2, 'client', "import_module('aiohttp')")]),
    ('def f(s: "aiohttp.ClientSession") -> None: ...', [(1, 'client', "'aiohttp.ClientSession'")]),
    ('x: "aiohttp.web.Request | None" = None', [(1, 'server', "'aiohttp.web.Request | None'")]),
    ('import logging\nlogging.getLogger("aiohttp")', []),   # a logger's name is no use of the library
    ('"""Built on aiohttp.ClientSession (a docstring)."""', []),
])
def test_the_scan_recognises_uses(source: str, expected: list[tuple[int, str, str]]) -> None:
    assert uses(source) == sorted(expected)
