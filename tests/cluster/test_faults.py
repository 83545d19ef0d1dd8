"""Injected faults with a seeded ratio: `fail(ratio=0.2, seed=7)` fails each matching request with that probability,
the same sequence of draws for the same seed; over real HTTP through `LocalCluster`, and its control API."""
import json
import urllib.request

import pytest

from kopf._cluster.web.faults import Faults, Rule
from kopf.testing import LocalCluster


def _outcomes(rule: Rule, n: int) -> list[bool]:
    faults = Faults()
    faults.add(rule)
    return [faults.find('PATCH', '/apis/kopf.dev/v1/namespaces/ns/kopfexamples/x') is not None for _ in range(n)]


def test_the_same_seed_draws_the_same_failures() -> None:
    first = _outcomes(Rule(method='PATCH', count=None, ratio=0.2, seed=7), 1000)
    again = _outcomes(Rule(method='PATCH', count=None, ratio=0.2, seed=7), 1000)
    other = _outcomes(Rule(method='PATCH', count=None, ratio=0.2, seed=8), 1000)
    assert first == again and first != other
    assert 150 <= sum(first) <= 250   # ~20% of 1,000 (seed 7 gives a fixed number in this range)


@pytest.mark.parametrize('ratio, expected', [(0.0, 0), (1.0, 100)])
def test_the_edges(ratio: float, expected: int) -> None:
    assert sum(_outcomes(Rule(count=None, ratio=ratio, seed=1), 100)) == expected


def test_a_count_with_a_ratio_counts_the_requests_considered() -> None:
    rule = Rule(count=50, ratio=0.5, seed=3)
    outcomes = _outcomes(rule, 100)
    assert not any(outcomes[50:])   # the rule is spent after 50 matching requests, failed or not
    assert rule.hits + rule.passed == 50 and rule.hits == sum(outcomes)


def test_a_ratio_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match='ratio must be from 0 to 1'):
        Rule(ratio=1.5)


def _statuses(cluster: LocalCluster, n: int) -> list[int]:
    codes = []
    for _ in range(n):
        try:
            with urllib.request.urlopen(f'{cluster.url}/api/v1/namespaces/default') as response:
                codes.append(response.status)
        except urllib.error.HTTPError as exc:
            codes.append(exc.code)
    return codes


def test_a_local_cluster_fails_the_seeded_share_until_cleared() -> None:
    with LocalCluster() as cluster:
        rule = cluster.fail('GET', '/api/v1/namespaces/*', 500, ratio=0.25, seed=11)   # count: all, until cleared
        codes = _statuses(cluster, 200)
        assert codes.count(500) == rule.hits and rule.hits + rule.passed == 200
        assert 30 <= rule.hits <= 70 and set(codes) == {200, 500}
        cluster.clear_faults()
        assert set(_statuses(cluster, 20)) == {200}
    with LocalCluster() as again:
        again.throttle('GET', '/api/v1/namespaces/*', ratio=0.25, seed=11)
        assert _statuses(again, 200).count(429) == codes.count(500)   # the same draws for the same seed


def test_the_control_api_takes_a_ratio_and_a_seed() -> None:
    with LocalCluster() as cluster:
        body = json.dumps({'method': 'GET', 'path': '/api/v1/namespaces/*', 'ratio': 0.5, 'seed': 2}).encode()
        request = urllib.request.Request(f'{cluster.url}/_emulator/faults', body, method='POST',
                                         headers={'Content-Type': 'application/json'})
        with urllib.request.urlopen(request) as response:
            assert response.status == 201
        codes = _statuses(cluster, 100)
        assert 25 <= codes.count(500) <= 75 and codes.count(500) + codes.count(200) == 100
        bad = urllib.request.Request(f'{cluster.url}/_emulator/faults', json.dumps({'ratio': 2}).encode(),
                                     method='POST', headers={'Content-Type': 'application/json'})
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(bad)
        assert info.value.code == 400
        assert json.loads(info.value.read()) == {'error': '"ratio" must be a number from 0 to 1 or null, not 2'}
