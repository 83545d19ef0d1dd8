"""ResourceQuota: quantities, costs, the admission check's refusals, and the status the controller computes."""
import datetime
from typing import Any

import pytest

from kopf._cluster.quotas import charging, evaluators, quantities, tally

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
PODS, CMS = ('', 'pods'), ('', 'configmaps')


@pytest.mark.parametrize('text, canonical', [
    ('1', '1'), ('1000m', '1'), ('1500m', '1500m'), ('1.5', '1500m'), ('2000', '2k'), ('1500', '1500'),
    ('64Mi', '64Mi'), ('1536Mi', '1536Mi'), ('1024Mi', '1Gi'), ('1023', '1023'), ('0.1', '100m'), ('0', '0'),
])
def test_quantities(text: str, canonical: str) -> None:
    assert quantities.canonical(text) == canonical


def test_sums_keep_the_first_format() -> None:
    parse = quantities.parse
    assert str(parse('64Mi') + parse('128Mi')) == '192Mi'   # type: ignore[operator]
    assert str(quantities.ZERO + parse('128Mi')) == '128Mi'   # type: ignore[operator]


def pod(name: str = 'p', cpu: str | None = None, limits: str | None = None, **spec: Any) -> dict[str, Any]:
    resources = {**({'requests': {'cpu': cpu}} if cpu else {}), **({'limits': {'cpu': limits}} if limits else {})}
    return {'metadata': {'name': name}, 'spec': {'containers': [{'name': 'app', 'resources': resources}], **spec}}


def quota(hard: dict[str, str], used: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    status = {'hard': hard, **({'used': used} if used is not None else {})}
    return {'metadata': {'name': 'q'}, 'spec': {'hard': hard, **spec}, 'status': status}


def test_pod_costs() -> None:
    cost = evaluators.usage(PODS, pod(cpu='250m', limits='1'), NOW)
    assert {k: str(v) for k, v in cost.items()} == {
        'count/pods': '1', 'pods': '1', 'cpu': '250m', 'requests.cpu': '250m', 'limits.cpu': '1'}
    done = {**pod(cpu='1'), 'status': {'phase': 'Succeeded'}}
    assert {k: str(v) for k, v in evaluators.usage(PODS, done, NOW).items()} == {'count/pods': '1'}


def test_charges_and_refusals() -> None:
    q = quota({'pods': '2', 'requests.cpu': '1'}, {'pods': '1', 'requests.cpu': '500m'})
    [(_, used)] = charging.charge([q], PODS, pod(cpu='500m'), None, '', NOW)
    assert used == {'pods': '2', 'requests.cpu': '1'}
    with pytest.raises(charging.Refusal) as refused:
        charging.charge([q], PODS, pod(cpu='600m'), None, '', NOW)
    assert str(refused.value) == 'exceeded quota: q, requested: requests.cpu=600m, used: requests.cpu=500m, ' \
                                 'limited: requests.cpu=1'
    with pytest.raises(charging.Refusal) as refused:
        charging.charge([q], PODS, pod(), None, '', NOW)
    assert str(refused.value) == 'failed quota: q: must specify requests.cpu for: app'
    with pytest.raises(charging.Refusal) as refused:
        charging.charge([quota({'count/configmaps': '1'})], CMS, {'metadata': {'name': 'c'}}, None, '', NOW)
    assert str(refused.value) == 'status unknown for quota: q, resources: count/configmaps'


def test_scopes_and_updates() -> None:
    scoped = quota({'pods': '1'}, {'pods': '1'}, scopes=['Terminating'])
    assert charging.charge([scoped], PODS, pod(), None, '', NOW) == []   # not terminating: not in scope
    with pytest.raises(charging.Refusal):
        charging.charge([scoped], PODS, pod(activeDeadlineSeconds=10), None, '', NOW)
    counted = quota({'configmaps': '5'}, {'configmaps': '1'})
    assert charging.charge([counted], CMS, {'metadata': {'name': 'c'}}, {'metadata': {'name': 'c'}}, '', NOW) == []


def test_the_controller_counts_what_is_there() -> None:
    q = quota({'pods': '10', 'requests.cpu': '2', 'count/configmaps': '3', 'secrets': '1'})
    objects = {PODS: [pod(cpu='250m'), pod('p2', cpu='1500m'), {**pod('p3', cpu='1'), 'status': {'phase': 'Failed'}}],
               CMS: [{'metadata': {'name': 'c'}}]}
    status = tally.status(q, lambda key: objects.get(key, []), NOW)
    assert status == {'hard': q['spec']['hard'], 'used': {'pods': '2', 'requests.cpu': '1750m',
                                                          'count/configmaps': '1', 'secrets': '0'}}
