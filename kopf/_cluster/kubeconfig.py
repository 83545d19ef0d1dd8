"""Kubeconfig files for the emulator: context `kopf-local`, plain HTTP, no credentials."""
import os
import pathlib
import tempfile

import yaml

NAME = 'kopf-local'


def render(url: str, namespace: str = 'default') -> str:
    config = {
        'apiVersion': 'v1',
        'kind': 'Config',
        'clusters': [{'name': NAME, 'cluster': {'server': url}}],
        'users': [{'name': NAME, 'user': {}}],
        'contexts': [{'name': NAME, 'context': {'cluster': NAME, 'user': NAME, 'namespace': namespace}}],
        'current-context': NAME,
        'preferences': {},
    }
    return yaml.safe_dump(config, sort_keys=False)


def write(path: str | os.PathLike[str], url: str) -> pathlib.Path:
    """Write atomically (a reader never sees a half-written file); returns the absolute path."""
    target = pathlib.Path(path).absolute()
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix='.kubeconfig-', dir=target.parent)
    with os.fdopen(fd, 'w') as file:
        file.write(render(url))
    os.replace(tmp, target)
    return target
