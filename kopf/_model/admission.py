"""The typing side of admission webhooks (SPEC §8.5): client configs, the request callback, servers.

A webhook server (or tunnel) is a callable that gets the framework's request callback (`WebhookFn`)
and yields `WebhookClientConfig` dicts (how the API server reaches it) whenever that changes.
The server classes themselves are in `kopf._kits.webhooks`.
"""
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, Protocol, TypedDict

from kopf._model.kwargs import Headers, SSLPeer


class WebhookClientConfigService(TypedDict, total=False):
    """The `service` stanza of a webhook's `clientConfig` (a K8s ServiceReference)."""

    namespace: str | None
    name: str | None
    path: str | None
    port: int | None


class WebhookClientConfig(TypedDict, total=False):
    """A webhook's `clientConfig`: how the API server reaches the operator (a URL or a service)."""

    caBundle: str  # base64-encoded PEM (the K8s field name)
    url: str | None
    service: WebhookClientConfigService | None


class WebhookFn(Protocol):
    """The framework's callback that a server calls for every admission request it receives.

    `request` is the parsed AdmissionReview; `webhook` is the handler id hinted by the URL path;
    the result is the AdmissionReview response to send back.
    """

    def __call__(
            self,
            request: Mapping[str, Any],
            /, *,
            webhook: str | None = None,
            headers: Headers | None = None,
            sslpeer: SSLPeer | None = None,
    ) -> Awaitable[Mapping[str, Any]]: ...


class WebhookServerProtocol(Protocol):
    """A webhook server or tunnel: called with the request callback, yields the client configs."""

    def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]: ...
