"""`EnvtestCluster` without binaries: the error names what is missing and how to get it; nothing leaks.

(With binaries, the cluster itself is tested by tests/e2e/test_envtest.py under `--backend=envtest`.)
"""
import pathlib
import subprocess
import sys

import pytest

import kopf
from kopf._kits import envassets, envtest
from kopf.testing import EnvtestCluster


def test_missing_binary_is_named_with_make_envtest(tmp_path: pathlib.Path) -> None:
    with pytest.raises(envtest.EnvtestError, match=r'etcd is not found in .*make envtest.*KUBEBUILDER_ASSETS'):
        with EnvtestCluster(assets=tmp_path):
            pass


def test_the_error_is_one_class() -> None:
    assert envtest.EnvtestError is envassets.EnvtestError


def test_missing_apiserver_is_named(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'etcd').write_text('#!/bin/sh\n')
    (tmp_path / 'etcd').chmod(0o755)
    with pytest.raises(envtest.EnvtestError, match=r'^kube-apiserver is not found'):
        EnvtestCluster(assets=tmp_path).start()


def test_assets_from_kubebuilder_assets(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBEBUILDER_ASSETS', str(tmp_path))
    assert EnvtestCluster().assets == tmp_path


def test_assets_from_the_cache_newest_version_first(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('KUBEBUILDER_ASSETS', raising=False)
    monkeypatch.setenv('KOPF_ENVTEST_CACHE', str(tmp_path))
    for version in ['1.9.0', '1.33.2', '1.10.1']:
        (tmp_path / version).mkdir()
        (tmp_path / version / 'kube-apiserver').write_text('')
    assert EnvtestCluster().assets == tmp_path / '1.33.2'
    (tmp_path / envassets.DEFAULT_VERSION).mkdir()
    (tmp_path / envassets.DEFAULT_VERSION / 'kube-apiserver').write_text('')
    assert EnvtestCluster().assets == tmp_path / envassets.DEFAULT_VERSION


def test_a_version_takes_its_own_cache_directory(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KUBEBUILDER_ASSETS', str(tmp_path / 'elsewhere'))   # an explicit version wins over it
    monkeypatch.setenv('KOPF_ENVTEST_CACHE', str(tmp_path))
    assert EnvtestCluster(version='v1.37.2').assets == tmp_path / '1.37.2'
    assert EnvtestCluster(version='1.37.2').wanted_version == 'v1.37.2'


def test_a_missing_version_says_how_to_build_it(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv('KOPF_ENVTEST_CACHE', str(tmp_path))
    build = r'etcd is not found in .*1\.37\.2: run `tools/envtest/build.sh 1\.37\.2`'
    with pytest.raises(envtest.EnvtestError, match=build):
        EnvtestCluster(version='1.37.2').start()


@pytest.mark.parametrize('gates, flags', [
    ({}, []),
    ({'ShardedListAndWatch': True}, ['--feature-gates=ShardedListAndWatch=true']),
    ({'B': False, 'A': True}, ['--feature-gates=A=true,B=false']),
])
def test_feature_gates_are_one_flag(gates: dict[str, bool], flags: list[str]) -> None:
    assert envtest._gates(gates) == flags


def test_not_imported_by_import_kopf() -> None:
    assert kopf is not None
    code = 'import kopf, sys; assert not {"kopf._kits.envtest", "kopf._kits.envassets"} & set(sys.modules)'
    subprocess.run([sys.executable, '-c', code], check=True)
