"""Which local cluster this is (for `WebhookAutoServer`): from the API server's version and certificate names."""
import pytest

from kopf._shared import localhosts

K3D, MINIKUBE, DOCKER = localhosts.K3D_HOST, localhosts.MINIKUBE_HOST, localhosts.DOCKER_DESKTOP_HOST


@pytest.mark.parametrize('version, names, expected', [
    ('v1.31.0+k3s1', [], K3D),
    ('v1.31.0', ['k3s', 'kubernetes', 'localhost'], K3D),
    (None, ['k3s-server-ca@1700000000'], K3D),
    ('v1.31.0', ['k3d-mycluster-server-0', '0.0.0.0'], K3D),
    ('v1.31.0', ['minikubeCA', 'control-plane.minikube.internal', 'kubernetes'], MINIKUBE),
    ('v1.31.0', ['docker-for-desktop', 'kubernetes.docker.internal', 'vm.docker.internal'], DOCKER),
    ('v1.31.0', ['Docker-Desktop'], DOCKER),
    ('v1.31.0', ['kopf-local', 'kopf-local-ca', 'localhost', '127.0.0.1'], None),
    ('v1.31.0-gke.100', ['kubernetes', 'kubernetes.default.svc'], None),
    (None, [], None),
])
def test_guess_host(version: str | None, names: list[str], expected: str | None) -> None:
    assert localhosts.guess_host(version, names) == expected


def test_certificate_names_from_a_peer_certificate() -> None:
    peercert = {
        'subject': ((('organizationName', 'k3s'),), (('commonName', 'k3s'),)),
        'issuer': ((('commonName', 'k3s-server-ca@1700000000'),),),
        'subjectAltName': (('DNS', 'kubernetes'), ('DNS', 'localhost'), ('IP Address', '127.0.0.1')),
    }
    assert localhosts.certificate_names(peercert) == [
        'k3s', 'k3s-server-ca@1700000000', 'kubernetes', 'localhost', '127.0.0.1']
    assert localhosts.certificate_names({}) == []  # an unverified connection reveals nothing
