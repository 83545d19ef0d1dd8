"""The local cluster's `--feature-gates`: parsed as kube-apiserver takes them, unknown ones refused, by version."""
import pytest

from kopf._cluster.control import featuregates
from kopf._cluster.control.featuregates import GateError


@pytest.mark.parametrize('text, gates', [
    ('', {}), ('ShardedListAndWatch=false', {'ShardedListAndWatch': False}),
    (' ShardedListAndWatch = true ,', {'ShardedListAndWatch': True}), ('A=1,B=F', {'A': True, 'B': False}),
])
def test_parsing(text: str, gates: dict[str, bool]) -> None:
    assert featuregates.parse(text) == gates


@pytest.mark.parametrize('text, message', [
    ('ShardedListAndWatch', "malformed pair, expect string=bool: 'ShardedListAndWatch'"),
    ('ShardedListAndWatch=yes', 'invalid value of ShardedListAndWatch=yes, err: strconv.ParseBool: parsing "yes": '
                                'invalid syntax'),
])
def test_bad_values(text: str, message: str) -> None:
    with pytest.raises(GateError) as err:
        featuregates.parse(text)
    assert str(err.value) == message


@pytest.mark.parametrize('gates, version, sharded', [
    ({}, None, True),                                     # the default: served, though the cluster poses as 1.34
    ({'ShardedListAndWatch': False}, None, False),
    ({}, 'v1.36.0', True), ({}, 'v1.37.2+k3s1', True),
    ({}, 'v1.35.3', False), ({}, 'v1.34.4', False),       # posing as a version without the gate: ignored
    ({'ShardedListAndWatch': False}, 'v1.36.0', False),
])
def test_sharded_lists_by_gate_and_version(gates: dict[str, bool], version: str | None, sharded: bool) -> None:
    assert featuregates.resolve(gates, version)['ShardedListAndWatch'] is sharded


@pytest.mark.parametrize('gates, version', [({'Nope': True}, None), ({'ShardedListAndWatch': True}, 'v1.35.0')])
def test_unknown_gates_are_refused(gates: dict[str, bool], version: str | None) -> None:
    with pytest.raises(GateError, match=f'^unrecognized feature gate: {next(iter(gates))}$'):
        featuregates.resolve(gates, version)
