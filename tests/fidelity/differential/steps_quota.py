"""The quota category: ResourceQuotas' status as the controller computes it, and the admission check's
charges and refusals (object counts, compute resources, a scope), each as a real server answers it.

A quota refuses nothing until the controller has computed its status (a moment after it is made),
and gives back what is deleted only when the controller next counts: steps that need either wait
for it (`until`).
"""
from typing import Any

from .harness import Step

NS, SCOPED = 'd-quota', 'd-quota-scoped'
QUOTAS = f'/api/v1/namespaces/{NS}/resourcequotas'


def used(name: str, value: str) -> Any:
    """Until the quota's status says this usage (the controller's count, or the charges)."""
    return lambda code, body: code == 200 and ((body.get('status') or {}).get('used') or {}).get(name) == value


def quota(name: str, hard: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'ResourceQuota', 'metadata': {'name': name}, 'spec': {'hard': hard, **spec}}


def secret(name: str) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'Secret', 'metadata': {'name': name}, 'stringData': {'a': 'b'}}


def pod(name: str, requests: str | None = None, limits: str | None = None) -> dict[str, Any]:
    resources = {**({'requests': {'cpu': requests}} if requests else {}),
                 **({'limits': {'cpu': limits}} if limits else {})}
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': {'name': name},
            'spec': {'containers': [{'name': 'app', 'image': 'nginx:1.27', 'resources': resources}]}}


def service(name: str) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'Service', 'metadata': {'name': name},
            'spec': {'ports': [{'port': 80}], 'selector': {'app': name}}}


def core(plural: str, name: str = '', ns: str = NS) -> str:
    return f'/api/v1/namespaces/{ns}/{plural}' + (f'/{name}' if name else '')


POD = ('pod-admission',)   # what a real server's admission plugins add to a Pod
HARD = {'count/secrets': '2', 'pods': '2', 'requests.cpu': '1', 'limits.cpu': '2', 'services': '1'}
QUOTA_STEPS: list[Step] = [
    Step('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': NS}}),
    Step('POST', QUOTAS, quota('counts', HARD)),
    Step('GET', f'{QUOTAS}/counts', until=used('pods', '0')),
    Step('POST', core('secrets'), secret('s1')),
    Step('POST', core('secrets'), secret('s2')),
    Step('POST', core('secrets'), secret('s3')),
    Step('GET', f'{QUOTAS}/counts'),
    Step('POST', core('pods'), pod('bare'), known=POD),
    Step('POST', core('pods'), pod('half', requests='600m'), known=POD),
    Step('POST', core('pods'), pod('p1', requests='600m', limits='1'), known=POD),
    Step('POST', core('pods'), pod('p2', requests='600m', limits='1'), known=POD),
    Step('POST', core('pods'), pod('p3', requests='400m', limits='1500m'), known=POD),
    Step('GET', f'{QUOTAS}/counts'),
    Step('POST', core('services'), service('one')),
    Step('POST', core('services'), service('two')),
    Step('DELETE', core('secrets', 's1')),
    Step('GET', f'{QUOTAS}/counts', until=used('count/secrets', '1')),
    Step('POST', core('secrets'), secret('s4')),
    Step('GET', '/api/v1/namespaces', pick=lambda body: {'kind': body.get('kind')}),
    Step('POST', '/api/v1/namespaces', {'apiVersion': 'v1', 'kind': 'Namespace', 'metadata': {'name': SCOPED}}),
    Step('POST', core('resourcequotas', ns=SCOPED), quota('best-effort', {'pods': '1'}, scopes=['BestEffort'])),
    Step('GET', core('resourcequotas', 'best-effort', ns=SCOPED), until=used('pods', '0')),
    Step('POST', core('pods', ns=SCOPED), pod('be1'), known=POD),
    Step('POST', core('pods', ns=SCOPED), pod('be2'), known=POD),
    Step('POST', core('pods', ns=SCOPED), pod('burstable', requests='100m'), known=POD),
    Step('GET', core('resourcequotas', 'best-effort', ns=SCOPED)),
    Step('PUT', core('resourcequotas', 'best-effort', ns=SCOPED),
         {**quota('best-effort', {'pods': '3'}, scopes=['BestEffort']), 'metadata': {'name': 'best-effort'}}),
]
