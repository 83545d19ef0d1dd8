"""The files of an envtest cluster: where its binaries are, and the throw-away PKI it starts with.

The binaries come from an explicit directory, an explicit version's `~/.cache/kopf/envtest/<version>/`
(`$KOPF_ENVTEST_CACHE` instead of `~/.cache/kopf/envtest`; `tools/envtest/build.sh VERSION` builds
them there), `$KUBEBUILDER_ASSETS` (the directory `setup-envtest use -p path` prints), or that cache:
`DEFAULT_VERSION` first (what `make envtest` builds), else the newest.
A missing one is an `EnvtestError` that names it and says how to get it.
`cryptography` is imported only when the PKI is written. The kubeconfigs written from that PKI, and
the audit log (its policy, its events) are files of the cluster's data directory too.
"""
import base64
import json
import os
import pathlib
from typing import Any

import yaml

from kopf._shared import extras

#: The version `make envtest` builds (tools/envtest/VERSION); its binaries are looked up first.
DEFAULT_VERSION = '1.34.4'


class EnvtestError(Exception):
    """The envtest cluster cannot start: a missing binary, a process that exited, a timeout."""


def cache_root() -> pathlib.Path:
    return pathlib.Path(os.environ.get('KOPF_ENVTEST_CACHE') or pathlib.Path.home() / '.cache' / 'kopf' / 'envtest')


def find_assets(assets: str | os.PathLike[str] | None = None, version: str | None = None) -> pathlib.Path:
    """The directory with the binaries: explicit, `version`'s in the cache, `$KUBEBUILDER_ASSETS`, or the cache."""
    if assets is not None:
        return pathlib.Path(assets)
    if version is not None:   # `tools/envtest/build.sh VERSION` builds it there
        return cache_root() / version.removeprefix('v')
    if os.environ.get('KUBEBUILDER_ASSETS'):
        return pathlib.Path(os.environ['KUBEBUILDER_ASSETS'])
    root = cache_root()
    preferred = root / DEFAULT_VERSION
    if (preferred / 'kube-apiserver').exists():
        return preferred
    built = sorted((p for p in root.glob('*') if (p / 'kube-apiserver').exists()), key=_version_key)
    return built[-1] if built else preferred


def _version_key(path: pathlib.Path) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else -1 for part in path.name.split('.'))


def binary(assets: pathlib.Path, name: str) -> pathlib.Path:
    path = assets / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        version = assets.name if assets.parent == cache_root() and assets.name != DEFAULT_VERSION else ''
        how = (f'run `tools/envtest/build.sh {version}` in kopf\'s repository (it builds etcd and kube-apiserver '
               f'{version} from their Go modules)' if version else
               'run `make envtest` in kopf\'s repository (it builds etcd, kube-apiserver, kube-controller-manager '
               'and kubectl from their Go modules), or point $KUBEBUILDER_ASSETS at a directory of setup-envtest '
               'binaries')
        raise EnvtestError(f'{name} is not found in {assets}: {how}.')
    return path


def write_pki(pki: pathlib.Path, admin: str) -> None:
    """A CA; the apiserver's serving certificate; the admin's client certificate; the SA key pair."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
    except ImportError:
        raise EnvtestError(extras.needs(extras.ENVTEST_PKI)) from None

    from kopf._shared import certificates  # optional: `cryptography`

    made = certificates.make('localhost', '10.0.0.1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc')
    (pki / 'ca.crt').write_bytes(made.ca_pem)
    (pki / 'ca.key').write_bytes(made.ca_key_pem)
    (pki / 'serving.crt').write_bytes(made.cert_pem)
    (pki / 'serving.key').write_bytes(made.key_pem)
    cert, key = made.client(admin, ('system:masters',))
    (pki / 'admin.crt').write_bytes(cert)
    (pki / 'admin.key').write_bytes(key)

    pem, raw = serialization.Encoding.PEM, serialization.NoEncryption()
    sa_key = ec.generate_private_key(ec.SECP256R1())
    (pki / 'sa.key').write_bytes(sa_key.private_bytes(pem, serialization.PrivateFormat.TraditionalOpenSSL, raw))
    (pki / 'sa.pub').write_bytes(sa_key.public_key().public_bytes(
        pem, serialization.PublicFormat.SubjectPublicKeyInfo))


def write_kubeconfig(path: str | os.PathLike[str], url: str, pki: pathlib.Path, *, user: str, cert: str,
                     key: str) -> pathlib.Path:
    """A kubeconfig for this server and one of the identities in `pki` (private: mode 0600)."""
    def b64(name: str) -> str:
        return base64.b64encode((pki / name).read_bytes()).decode()
    config = {
        'apiVersion': 'v1', 'kind': 'Config', 'current-context': 'envtest', 'preferences': {},
        'clusters': [{'name': 'envtest', 'cluster': {'server': url, 'certificate-authority-data': b64('ca.crt')}}],
        'users': [{'name': user, 'user': {'client-certificate-data': b64(cert), 'client-key-data': b64(key)}}],
        'contexts': [{'name': 'envtest', 'context': {'cluster': 'envtest', 'user': user, 'namespace': 'default'}}],
    }
    path = pathlib.Path(path)
    path.write_text(yaml.safe_dump(config))
    path.chmod(0o600)
    return path


AUDIT_POLICY = {'apiVersion': 'audit.k8s.io/v1', 'kind': 'Policy', 'omitStages': ['RequestReceived'],
                'rules': [{'level': 'Metadata'}]}


def audit_flags(directory: pathlib.Path) -> list[str]:
    """kube-apiserver's flags to log every request (its metadata: URI, verb, user, status) to `audit.log`."""
    (directory / 'audit-policy.yaml').write_text(yaml.safe_dump(AUDIT_POLICY))
    return [f'--audit-policy-file={directory / "audit-policy.yaml"}', f'--audit-log-path={directory / "audit.log"}',
            '--audit-log-format=json', '--audit-log-mode=blocking']


def read_audit(path: pathlib.Path) -> list[dict[str, Any]]:
    """The audit events logged so far (JSON lines; a line being written is left for the next read)."""
    if not path.exists():
        return []
    events = []
    for line in path.read_text().splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            break
    return events


def version_flags(apiserver: pathlib.Path) -> list[str]:
    """Flags a kube-apiserver of this version needs on loopback: from 1.37 (measured; 1.34 does not), the endpoint
    reconciler refuses an advertise address in 127.0.0.0/8 ("may not be in the loopback range"): none is run."""
    import subprocess
    try:
        found = subprocess.run([str(apiserver), '--version'], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    numbers = found.strip().rpartition(' v')[2].split('.')
    minor = int(numbers[1]) if len(numbers) > 1 and numbers[1].isdigit() else 0
    return ['--endpoint-reconciler-type=none'] if minor >= 35 else []
