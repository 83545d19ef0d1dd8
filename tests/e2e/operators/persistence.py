"""An operator for the persistence end-to-end tests (run as `kopf run` in a subprocess).

Env: E2E_LOG (the file to record calls to), E2E_STORAGE (which storage configuration),
E2E_BLOCK (if set: `fn3` blocks forever after recording its start, so the test can SIGKILL us).
"""
import os
import time
from typing import Any

import kopf

LOG = os.environ['E2E_LOG']
STORAGES = {
    'annotations-progress': lambda s: setattr(s.persistence, 'progress_storage',
                                              kopf.AnnotationsProgressStorage(prefix='my-op.example.com')),
    'status-progress': lambda s: setattr(s.persistence, 'progress_storage',
                                         kopf.StatusProgressStorage(field='status.my-op')),
    'smart-progress': lambda s: setattr(s.persistence, 'progress_storage',
                                        kopf.SmartProgressStorage(prefix='my-op.example.com', field='status.my-op')),
    'annotations-diffbase': lambda s: setattr(s.persistence, 'diffbase_storage',
                                              kopf.AnnotationsDiffBaseStorage(prefix='my-op.example.com')),
    'status-diffbase': lambda s: setattr(s.persistence, 'diffbase_storage',
                                         kopf.StatusDiffBaseStorage(field='status.my-op-base')),
}
RESOURCES = [('kopf.dev', 'v1', 'kopfexamples'), ('kopf.dev', 'v1', 'kopfstricts'), ('v1', 'configmaps')]


def record(body: Any, what: str) -> None:
    with open(LOG, 'a') as f:
        f.write(f"{body['kind']}/{body['metadata']['name']} {what}\n")


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.execution.default_backoff = 0.3
    settings.networking.error_backoffs = (0.1, 0.3)
    settings.watching.reconnect_backoff = 0.1
    STORAGES[os.environ['E2E_STORAGE']](settings)


for resource in RESOURCES:
    @kopf.on.create(*resource, labels={'e2e': 'persistence'}, id='fn1')
    def fn1(body: Any, retry: int, reason: str, **_: Any) -> Any:
        if retry == 0:
            record(body, f'fn1 fail {reason}')
            raise kopf.TemporaryError('the first attempt fails', delay=0.3)
        record(body, f'fn1 success {reason}')
        return {'fn1': 1}

    @kopf.on.create(*resource, labels={'e2e': 'persistence'}, id='fn2')
    def fn2(body: Any, reason: str, **_: Any) -> Any:
        record(body, f'fn2 success {reason}')
        return {'fn2': 2}

    @kopf.on.create(*resource, labels={'e2e': 'persistence'}, id='fn3')
    def fn3(body: Any, reason: str, **_: Any) -> Any:
        record(body, f'fn3 start {reason}')
        if os.environ.get('E2E_BLOCK'):
            time.sleep(3600)  # killed here with SIGKILL by the test
        record(body, f'fn3 success {reason}')
        return {'fn3': 3}

    @kopf.on.update(*resource, labels={'e2e': 'persistence'}, id='upd')
    def upd(body: Any, reason: str, **_: Any) -> None:
        record(body, f'update {reason}')

    @kopf.on.event(*resource, labels={'e2e': 'persistence'}, id='seen')
    def seen(body: Any, **_: Any) -> None:  # the test's barriers wait for these (not calls of the handlers)
        record(body, f"seen {body['metadata']['resourceVersion']}")
