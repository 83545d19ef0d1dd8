"""The optional dependencies: what needs each, and the extra that installs it (docs/install.md lists them too).

Each one is imported only where it is used, so `import kopf` stays light. What needs one checks it when it
starts (an operator: after its startup handlers, before any watcher) and refuses with one line, the same for
all: `<what> needs <package>: pip install "kopf[<extra>]" (or pip install <package>).` (`needs()` makes it).
`orjson` (`kopf[fast]`) is the one that nothing needs: without it, JSON is encoded by the standard library.
"""
import dataclasses
import importlib
from typing import Any


@dataclasses.dataclass(frozen=True)
class Dependency:
    """One optional dependency as one feature needs it (one package may serve features of several extras)."""
    module: str     # what is imported, e.g. 'prometheus_client'
    package: str    # what pip installs, e.g. 'prometheus-client'
    extra: str      # kopf's extra that brings it, e.g. 'metrics'
    feature: str    # what needs it, in the words of the line, e.g. 'kopf.WebhookServer() without a certificate'


WEBHOOK_CERTIFICATES = Dependency('cryptography', 'cryptography', 'webhooks',
                                  'a self-signed webhook server (kopf.WebhookServer() & co. without certfile/pkeyfile)')
CLUSTER_TLS = Dependency('cryptography', 'cryptography', 'cluster',
                         "the local cluster's HTTPS mode (--tls, --tls-san, LocalCluster(tls=True))")
ENVTEST_PKI = Dependency('cryptography', 'cryptography', 'cluster', 'kopf.testing.EnvtestCluster (its certificates)')
NGROK = Dependency('pyngrok', 'pyngrok', 'dev', 'a webhook tunnel through ngrok (kopf.WebhookNgrokTunnel)')
METRICS = Dependency('prometheus_client', 'prometheus-client', 'metrics',
                     'Prometheus metrics (--metrics, settings.metrics)')
UVLOOP = Dependency('uvloop', 'uvloop', 'uvloop', '--uvloop')
PYKUBE = Dependency('pykube', 'pykube-ng', 'full-auth', 'kopf.login_via_pykube()')
KUBERNETES = Dependency('kubernetes', 'kubernetes', 'full-auth', 'kopf.login_via_client()')
KUBERNETES_ASYNCIO = Dependency('kubernetes_asyncio', 'kubernetes_asyncio', '', 'kopf.login_via_async_client()')

ALL = (WEBHOOK_CERTIFICATES, CLUSTER_TLS, ENVTEST_PKI, NGROK, METRICS, UVLOOP, PYKUBE, KUBERNETES, KUBERNETES_ASYNCIO)


def needs(*options: Dependency, what: str | None = None, otherwise: str | None = None) -> str:
    """The one line: `<what> needs <package>: pip install "kopf[<extra>]" (or pip install <package>).`

    Several options are alternatives (either will do: `WebhookAutoTunnel`); `otherwise` replaces the plain pip
    alternative (e.g. `run with --no-uvloop`).
    """
    what = what or options[0].feature
    packages = ' or '.join(dict.fromkeys(option.package for option in options))
    installs = ' or '.join(dict.fromkeys(f'pip install "kopf[{o.extra}]"' if o.extra else f'pip install {o.package}'
                                         for o in options))
    alternative = otherwise or ' or '.join(dict.fromkeys(f'pip install {option.package}' for option in options
                                                         if option.extra))
    return f'{what} needs {packages}: {installs}' + (f' (or {alternative}).' if alternative else '.')


def unmet_needs(thing: Any) -> str | None:
    """The line for the first need of the thing (e.g. a webhook server) whose alternatives are all missing."""
    wanted = getattr(thing, '_needs', None)
    for alternatives, what in wanted() if callable(wanted) else []:
        if len(missing(*alternatives)) == len(alternatives):
            return needs(*alternatives, what=what)
    return None


def missing(*options: Dependency) -> list[Dependency]:
    """Those of the options whose module cannot be imported (imported here: whoever asks is about to use it)."""
    absent = []
    for option in options:
        try:
            importlib.import_module(option.module)
        except ImportError:
            absent.append(option)
    return absent
