"""An operator written the way upstream Kopf 1.45 users annotate their handlers (our own code, not upstream's).

Annotations are evaluated when the module is imported (no `from __future__ import annotations`), so
every `kopf.*` type used here must exist. `test_upstream_style_types.py` imports it unchanged.
"""
from collections.abc import AsyncIterator
from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    if settings.admission.managed == 'auto':  # upstream-style: choose the server by a setting
        settings.admission.server = kopf.WebhookAutoTunnel(port=9443)


class CustomServer:
    """A user-written webhook server, as upstream allows: yields client configs."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def __call__(self, fn: kopf.WebhookFn) -> AsyncIterator[kopf.WebhookClientConfig]:
        service: kopf.WebhookClientConfigService = {'namespace': 'default', 'name': 'operator', 'port': 443}
        yield {'url': self.url}
        yield {'service': service}


def make_server(url: str) -> kopf.WebhookServerProtocol:
    return CustomServer(url)


@kopf.index('pods')
def pods_by_namespace(namespace: str | None, name: str | None, **_: Any) -> dict[str | None, str | None]:
    return {namespace: name}


@kopf.on.event('pods')
def event_fn(type: kopf.RawEventType, event: kopf.RawEvent, pods_by_namespace: kopf.Index[str, str],
             **_: Any) -> list[str]:
    return sorted(pods_by_namespace.get(event['object']['metadata']['namespace'], []))


def count_pods(store: kopf.Store[str]) -> int:
    return len(store)


@kopf.daemon('kopfexamples')
async def monitor(stopped: kopf.DaemonStopped, **_: Any) -> kopf.DaemonStoppingReason | None:
    while not stopped:
        await stopped.wait(10)
    return stopped.reason


@kopf.daemon('kopfexamples')
def sync_monitor(stopped: kopf.DaemonStopped, **_: Any) -> kopf.DaemonStoppingReason | None:
    while not stopped:
        stopped.wait(10)
    return stopped.reason


@kopf.daemon('kopfexamples')
async def old_monitor(stopped: kopf.AsyncDaemonStopperChecker, **_: Any) -> None:
    await stopped.wait(0)


@kopf.timer('kopfexamples', interval=10)
def old_timer(stopped: kopf.SyncDaemonStopperChecker, **_: Any) -> bool:
    return bool(stopped)
