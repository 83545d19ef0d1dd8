"""tools/envtest/build.sh and its go.mod, without Go: what `make envtest` does when the binaries are there or Go is not.

The replace lines are checked against the pinned k8s.io/kubernetes go.mod when the Go module cache
holds it (any machine that built the binaries once); their shape and version always.
"""
import os
import pathlib
import re
import subprocess

import pytest

TOOLS = pathlib.Path(__file__).parents[2] / 'tools' / 'envtest'
BUILD = TOOLS / 'build.sh'
VERSION = (TOOLS / 'VERSION').read_text().strip()
BINARIES = ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl')
NO_GO_PATH = '/usr/bin:/bin'   # bash and coreutils, not Go (it lives in /usr/local/go/bin or ~/go)


def _run(cache: pathlib.Path, path: str = NO_GO_PATH) -> subprocess.CompletedProcess[str]:
    env = {'PATH': path, 'HOME': str(cache.parent), 'KOPF_ENVTEST_CACHE': str(cache)}
    return subprocess.run(['bash', str(BUILD)], env=env, capture_output=True, text=True, timeout=60)


def test_present_binaries_are_not_built_again_and_the_dir_is_printed(tmp_path: pathlib.Path) -> None:
    out = tmp_path / 'cache' / VERSION.removeprefix('v')
    out.mkdir(parents=True)
    for name in BINARIES:
        (out / name).write_text('#!/bin/sh\n')
        (out / name).chmod(0o755)
    done = _run(tmp_path / 'cache')   # no Go on PATH: it would fail if it tried to build
    assert (done.returncode, done.stdout, done.stderr) == (0, f'{out}\n', '')


def test_a_missing_binary_without_go_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    out = tmp_path / 'cache' / VERSION.removeprefix('v')
    out.mkdir(parents=True)
    (out / 'etcd').write_text('#!/bin/sh\n')
    (out / 'etcd').chmod(0o755)
    done = _run(tmp_path / 'cache')
    assert done.returncode == 1 and done.stdout == ''
    assert done.stderr == f'make envtest: Go is not installed (needed to build {VERSION})\n'


def _replaces() -> dict[str, str]:
    text = (TOOLS / 'go.mod').read_text()
    block = re.search(r'^replace \((.*?)^\)', text, re.M | re.S)
    assert block is not None, 'tools/envtest/go.mod: no replace block'
    found = {}
    for line in block.group(1).strip().splitlines():
        source, arrow, target, version = line.split()
        assert (arrow, target) == ('=>', source), line
        found[source] = version
    return found


def test_replace_lines_have_the_shape_and_version_of_the_pin() -> None:
    replaces = _replaces()
    staging = 'v0.' + VERSION.removeprefix('v1.')
    assert set(replaces.values()) == {staging}
    assert {f'k8s.io/{m}' for m in ('api', 'apiextensions-apiserver', 'apimachinery', 'apiserver', 'client-go',
                                    'component-base', 'kube-aggregator', 'kubectl')} <= set(replaces)
    assert len(replaces) >= 25
    assert re.search(rf'^\s*k8s.io/kubernetes {re.escape(VERSION)}$', (TOOLS / 'go.mod').read_text(), re.M)


def test_replace_lines_cover_every_staging_module_of_the_pinned_go_mod() -> None:
    cache = pathlib.Path(os.environ.get('GOMODCACHE') or pathlib.Path.home() / 'go' / 'pkg' / 'mod')
    pinned = cache / 'cache' / 'download' / 'k8s.io' / 'kubernetes' / '@v' / f'{VERSION}.mod'
    if not pinned.exists():
        pytest.skip(f'the go.mod of k8s.io/kubernetes@{VERSION} is not in the Go module cache ({pinned})')
    staging = set(re.findall(r'^\s*(k8s\.io/\S+) => \./staging/', pinned.read_text(), re.M))
    assert staging and staging == set(_replaces())
