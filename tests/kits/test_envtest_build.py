"""tools/envtest/build.sh and its go.mod files, without Go: what it does when the binaries are there or Go is not.

tools/envtest/<version>/ holds one Kubernetes version's modules: 1.34.4 (the default, tools/envtest/VERSION:
etcd, kube-apiserver, kube-controller-manager, kubectl) and 1.37.2 (etcd and kube-apiserver, for
the sharding tests). The replace lines are checked against the pinned k8s.io/kubernetes go.mod when
the Go module cache holds it (any machine that built the binaries once); their shape and version always.
"""
import os
import pathlib
import re
import subprocess

import pytest

TOOLS = pathlib.Path(__file__).parents[2] / 'tools' / 'envtest'
BUILD = TOOLS / 'build.sh'
DEFAULT = (TOOLS / 'VERSION').read_text().strip()
VERSIONS = {'v1.34.4': ('etcd', 'kube-apiserver', 'kube-controller-manager', 'kubectl'),
            'v1.37.2': ('etcd', 'kube-apiserver')}
NO_GO_PATH = '/usr/bin:/bin'   # bash and coreutils, not Go (it lives in /usr/local/go/bin or ~/go)


def _run(cache: pathlib.Path, *args: str, path: str = NO_GO_PATH) -> subprocess.CompletedProcess[str]:
    env = {'PATH': path, 'HOME': str(cache.parent), 'KOPF_ENVTEST_CACHE': str(cache)}
    return subprocess.run(['bash', str(BUILD), *args], env=env, capture_output=True, text=True, timeout=60)


def test_the_versions_are_those_in_the_folder() -> None:
    held = {'v' + p.name for p in TOOLS.iterdir() if (p / 'go.mod').exists()}
    assert held == set(VERSIONS) and DEFAULT in held
    for version, binaries in VERSIONS.items():
        mains = {p.parent.name for p in (TOOLS / version.removeprefix('v') / 'cmd').glob('*/main.go')}
        assert {'etcd', *mains} == set(binaries)


@pytest.mark.parametrize('version', [None, *VERSIONS])
def test_present_binaries_are_not_built_again_and_the_dir_is_printed(tmp_path: pathlib.Path,
                                                                     version: str | None) -> None:
    out = tmp_path / 'cache' / (version or DEFAULT).removeprefix('v')
    out.mkdir(parents=True)
    for name in VERSIONS[version or DEFAULT]:
        (out / name).write_text('#!/bin/sh\n')
        (out / name).chmod(0o755)
    done = _run(tmp_path / 'cache', *([version.removeprefix('v')] if version else []))   # no Go: it cannot build
    assert (done.returncode, done.stdout, done.stderr) == (0, f'{out}\n', '')


@pytest.mark.parametrize('version', VERSIONS)
def test_a_missing_binary_without_go_is_one_clear_error(tmp_path: pathlib.Path, version: str) -> None:
    out = tmp_path / 'cache' / version.removeprefix('v')
    out.mkdir(parents=True)
    (out / 'etcd').write_text('#!/bin/sh\n')
    (out / 'etcd').chmod(0o755)
    done = _run(tmp_path / 'cache', version)
    assert done.returncode == 1 and done.stdout == ''
    assert done.stderr == f'tools/envtest/build.sh: Go is not installed (needed to build {version})\n'


def test_an_unknown_version_is_one_clear_error(tmp_path: pathlib.Path) -> None:
    done = _run(tmp_path / 'cache', '1.99.0')
    assert done.returncode == 1 and done.stdout == ''
    assert done.stderr == ('tools/envtest/build.sh: no tools/envtest/1.99.0/go.mod '
                           '(make it with gen-gomod.sh v1.99.0)\n')


def _replaces(version: str) -> dict[str, str]:
    text = (TOOLS / version.removeprefix('v') / 'go.mod').read_text()
    block = re.search(r'^replace \((.*?)^\)', text, re.M | re.S)
    assert block is not None, f'tools/envtest/{version}/go.mod: no replace block'
    found = {}
    for line in block.group(1).strip().splitlines():
        source, arrow, target, pinned = line.split()
        assert (arrow, target) == ('=>', source), line
        found[source] = pinned
    return found


@pytest.mark.parametrize('version', VERSIONS)
def test_replace_lines_have_the_shape_and_version_of_the_pin(version: str) -> None:
    replaces = _replaces(version)
    staging = 'v0.' + version.removeprefix('v1.')
    assert set(replaces.values()) == {staging}
    assert {f'k8s.io/{m}' for m in ('api', 'apiextensions-apiserver', 'apimachinery', 'apiserver', 'client-go',
                                    'component-base', 'kube-aggregator', 'kubectl')} <= set(replaces)
    assert len(replaces) >= 25
    text = (TOOLS / version.removeprefix('v') / 'go.mod').read_text()
    assert re.search(rf'^\s*k8s.io/kubernetes {re.escape(version)}$', text, re.M)


@pytest.mark.parametrize('version', VERSIONS)
def test_replace_lines_cover_every_staging_module_of_the_pinned_go_mod(version: str) -> None:
    cache = pathlib.Path(os.environ.get('GOMODCACHE') or pathlib.Path.home() / 'go' / 'pkg' / 'mod')
    pinned = cache / 'cache' / 'download' / 'k8s.io' / 'kubernetes' / '@v' / f'{version}.mod'
    if not pinned.exists():
        pytest.skip(f'the go.mod of k8s.io/kubernetes@{version} is not in the Go module cache ({pinned})')
    staging = set(re.findall(r'^\s*(k8s\.io/\S+) => \./staging/', pinned.read_text(), re.M))
    assert staging and staging == set(_replaces(version))
