"""Admission webhook servers and tunnels (SPEC §8.5): placeholders until admission is implemented.

They accept upstream's constructor parameters, so that code configuring them is valid, but
constructing any of them raises `NotImplementedError` naming the class: an operator must never
silently run without the webhooks it asked for.
"""
import os
import ssl
from collections.abc import AsyncIterator, Iterable
from typing import ClassVar, NoReturn

from kopf._model.admission import WebhookClientConfig, WebhookFn

PathLike = str | os.PathLike[str]


def _refuse(obj: object) -> NoReturn:
    raise NotImplementedError(
        f'kopf.{type(obj).__name__}: admission webhooks are not implemented yet in this version of kopf '
        '(@kopf.on.validate/@kopf.on.mutate handlers are registered but cannot be served).')


class _Placeholder:
    """The common part: satisfies `WebhookServerProtocol` in types, refuses to exist at runtime."""

    def __call__(self, fn: WebhookFn) -> AsyncIterator[WebhookClientConfig]:
        _refuse(self)


class WebhookServer(_Placeholder):
    """A local HTTPS server for admission requests (self-signed certificate unless one is given)."""

    DEFAULT_HOST: ClassVar[str | None] = None

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
            host: str | None = None,
            cadata: bytes | None = None,
            cafile: PathLike | None = None,
            cadump: PathLike | None = None,
            context: ssl.SSLContext | None = None,
            insecure: bool = False,
            certfile: PathLike | None = None,
            pkeyfile: PathLike | None = None,
            password: str | None = None,
            extra_sans: Iterable[str] = (),
            verify_mode: ssl.VerifyMode | None = None,
            verify_cafile: PathLike | None = None,
            verify_capath: PathLike | None = None,
            verify_cadata: str | bytes | None = None,
            file_check_interval: float = 60,
    ) -> None:
        _refuse(self)


class WebhookK3dServer(WebhookServer):
    """A local server reachable from a K3d cluster."""

    DEFAULT_HOST = 'host.k3d.internal'


class WebhookMinikubeServer(WebhookServer):
    """A local server reachable from a Minikube cluster."""

    DEFAULT_HOST = 'host.minikube.internal'


class WebhookDockerDesktopServer(WebhookServer):
    """A local server reachable from a Docker Desktop cluster."""

    DEFAULT_HOST = 'host.docker.internal'


class WebhookAutoServer(WebhookServer):
    """A local server for the detected local cluster (K3d/K3s, Minikube, Docker Desktop), else plain."""


class WebhookNgrokTunnel(_Placeholder):
    """A local HTTP server exposed to the cluster via an ngrok HTTPS tunnel."""

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
            token: str | None = None,
            region: str | None = None,
            binary: PathLike | None = None,
    ) -> None:
        _refuse(self)


class WebhookAutoTunnel(_Placeholder):
    """The auto server for a detected local cluster, else an ngrok tunnel."""

    def __init__(
            self,
            *,
            addr: str | None = None,
            port: int | None = None,
            path: str | None = None,
    ) -> None:
        _refuse(self)
