"""Kubeconfig files for the emulator: context `kopf-local`; plain HTTP, or HTTPS with its CA; a token if any."""
import base64
import os
import pathlib
import tempfile
from typing import Any

import yaml

NAME = 'kopf-local'


def render(url: str, namespace: str = 'default', ca_pem: bytes | None = None, token: str | None = None,
           client: tuple[bytes, bytes] | None = None, impersonate: tuple[str, list[str]] | None = None) -> str:
    cluster: dict[str, str] = {'server': url}
    if ca_pem is not None:
        cluster['certificate-authority-data'] = base64.b64encode(ca_pem).decode()
    config = {
        'apiVersion': 'v1',
        'kind': 'Config',
        'clusters': [{'name': NAME, 'cluster': cluster}],
        'users': [{'name': NAME, 'user': _user(token, client, impersonate)}],
        'contexts': [{'name': NAME, 'context': {'cluster': NAME, 'user': NAME, 'namespace': namespace}}],
        'current-context': NAME,
        'preferences': {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def _user(token: str | None, client: tuple[bytes, bytes] | None,
          impersonate: tuple[str, list[str]] | None = None) -> dict[str, Any]:
    if token and impersonate:   # client-go sends no credentials over plain HTTP, but impersonates
        return {'token': token, 'as': impersonate[0], **({'as-groups': impersonate[1]} if impersonate[1] else {})}
    if token:
        return {'token': token}
    if client is not None:
        return {'client-certificate-data': base64.b64encode(client[0]).decode(),
                'client-key-data': base64.b64encode(client[1]).decode()}
    return {}


def write(path: str | os.PathLike[str], url: str, ca_pem: bytes | None = None, token: str | None = None,
          client: tuple[bytes, bytes] | None = None, impersonate: tuple[str, list[str]] | None = None) -> pathlib.Path:
    """Write atomically (a reader never sees a half-written file); returns the absolute path."""
    target = pathlib.Path(path).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.kubeconfig-', dir=target.parent)
    with os.fdopen(fd, 'w') as file:
        file.write(render(url, ca_pem=ca_pem, token=token, client=client, impersonate=impersonate))
    os.replace(tmp, target)
    return target
