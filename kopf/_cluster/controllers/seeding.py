"""What a cluster has before anyone writes: fake Ready nodes, the `kubernetes` Service, and per namespace
its `default` ServiceAccount and `kube-root-ca.crt` ConfigMap (as the service-account and root-CA
publisher controllers make them). Builders of the objects only; `workloads` creates the missing ones.
"""
from kopf._cluster.controllers.writeplans import Obj

DEFAULT_NODE = 'kopf-local-node'
KUBERNETES_IP = '10.96.0.1'
CAPACITY = {'cpu': '8', 'memory': '32Gi', 'pods': '110', 'ephemeral-storage': '100Gi'}
# Without TLS there is no CA: a syntactically plausible placeholder, as clients only mount and read it.
PLACEHOLDER_CA = ('-----BEGIN CERTIFICATE-----\n(the local cluster serves plain HTTP: no CA)\n'
                  '-----END CERTIFICATE-----\n')


def node_names(count: int) -> list[str]:
    return [DEFAULT_NODE if index == 0 else f'{DEFAULT_NODE}-{index + 1}' for index in range(count)]


def node(name: str, index: int, kubelet_version: str) -> Obj:
    address = f'172.18.0.{index + 2}'
    return {
        'apiVersion': 'v1', 'kind': 'Node',
        'metadata': {'name': name, 'labels': {
            'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': 'amd64',
            'beta.kubernetes.io/os': 'linux', 'beta.kubernetes.io/arch': 'amd64', 'type': 'kopf-local'}},
        'spec': {'podCIDR': f'10.244.{index}.0/24', 'podCIDRs': [f'10.244.{index}.0/24']},
        'status': {
            'capacity': dict(CAPACITY), 'allocatable': dict(CAPACITY),
            'addresses': [{'type': 'InternalIP', 'address': address}, {'type': 'Hostname', 'address': name}],
            'conditions': [ready_condition(True, '')],
            'daemonEndpoints': {'kubeletEndpoint': {'Port': 10250}},
            'nodeInfo': {'architecture': 'amd64', 'operatingSystem': 'linux', 'kubeletVersion': kubelet_version,
                         'kubeProxyVersion': kubelet_version, 'containerRuntimeVersion': 'containerd://2.1.0',
                         'osImage': 'kopf local cluster (simulated)', 'kernelVersion': '6.1.0',
                         'machineID': '', 'systemUUID': '', 'bootID': ''},
        },
    }


def ready_condition(ready: bool, now: str) -> Obj:
    cond: Obj = {'type': 'Ready', 'status': 'True' if ready else 'False',
                 'reason': 'KubeletReady' if ready else 'KubeletNotReady',
                 'message': 'kubelet is posting ready status' if ready else
                 'the node was marked NotReady by the local cluster'}
    if now:
        cond.update(lastHeartbeatTime=now, lastTransitionTime=now)
    return cond


def kubernetes_service() -> Obj:
    return {'apiVersion': 'v1', 'kind': 'Service',
            'metadata': {'name': 'kubernetes', 'namespace': 'default',
                         'labels': {'component': 'apiserver', 'provider': 'kubernetes'}},
            'spec': {'clusterIP': KUBERNETES_IP, 'type': 'ClusterIP', 'sessionAffinity': 'None',
                     'ports': [{'name': 'https', 'port': 443, 'protocol': 'TCP', 'targetPort': 6443}]}}


def service_account(namespace: str) -> Obj:
    return {'apiVersion': 'v1', 'kind': 'ServiceAccount', 'metadata': {'name': 'default', 'namespace': namespace}}


def root_ca(namespace: str, ca_pem: str | None) -> Obj:
    return {'apiVersion': 'v1', 'kind': 'ConfigMap',
            'metadata': {'name': 'kube-root-ca.crt', 'namespace': namespace,
                         'annotations': {'kubernetes.io/description': 'Contains a CA bundle that can be used to '
                                         'verify the kube-apiserver when using internal endpoints such as the '
                                         'internal service IP or kubernetes.default.svc. No other usage is '
                                         'guaranteed across distributions of Kubernetes clusters.'}},
            'data': {'ca.crt': ca_pem or PLACEHOLDER_CA}}
