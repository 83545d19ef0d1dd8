"""Which local cluster this is: the host names by which local clusters' nodes reach the developer's machine.

The webhook servers advertise them (`kopf._admission.servers`); the local cluster resolves them to the loopback
when it calls webhooks (`kopf._cluster.admitting.calling`). Pure.
"""
from collections.abc import Iterable, Mapping
from typing import Any

# The host names by which the nodes of local clusters reach the developer's machine, by flavour.
K3D_HOST, MINIKUBE_HOST, DOCKER_DESKTOP_HOST = 'host.k3d.internal', 'host.minikube.internal', 'host.docker.internal'


def certificate_names(peercert: Mapping[str, Any]) -> list[str]:
    """The subject's and issuer's common names and the SANs of a certificate as `ssl.getpeercert()` gives it."""
    names: list[str] = []
    for field in ('subject', 'issuer'):
        for rdn in peercert.get(field) or ():
            names.extend(str(value) for key, value in rdn if key == 'commonName')
    names.extend(str(value) for _, value in peercert.get('subjectAltName') or ())
    return names


def guess_host(git_version: str | None, names: Iterable[str]) -> str | None:
    """The webhook host for the local cluster that the API server version and certificate names reveal, if any.

    K3s/K3d report `+k3s` in their version and name their certificates `k3s` (K3d's nodes `k3d-...`);
    Minikube's carry `minikube` (`minikubeCA`, `control-plane.minikube.internal`); Docker Desktop's carry
    `docker-for-desktop`/`docker-desktop` and `*.docker.internal`. Anything else: None (a plain server).
    """
    lowered = [name.lower() for name in names]
    if '+k3s' in (git_version or '') or any('k3s' in name or name.startswith('k3d-') for name in lowered):
        return K3D_HOST
    if any('minikube' in name for name in lowered):
        return MINIKUBE_HOST
    if any(name in ('docker-for-desktop', 'docker-desktop') or name.endswith('.docker.internal') for name in lowered):
        return DOCKER_DESKTOP_HOST
    return None
