"""The built-in login functions: kubeconfig, in-cluster service account, pykube-ng, the `kubernetes` client.

They are plain sync functions (usable as, or inside, `@kopf.on.login()` handlers); each returns
`ConnectionInfo`, or None when its source is not available. `pykube` and `kubernetes` are imported
lazily, only when their login function is called: `import kopf` must not import them.
"""
import asyncio
import dataclasses
import importlib.util
import logging
import os
import pathlib
from typing import Any

from kopf._api import apierrors, credentials, kubeconfig
from kopf._shared import extras

logger = logging.getLogger('kopf._api.loginning')

SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount'
IN_CLUSTER_SERVER = 'https://kubernetes.default.svc'

# As upstream: in-cluster and pykube credentials win over kubeconfig and client-loaded ones.
PRIORITY_OF_PYKUBE = 20
PRIORITY_OF_CLIENT = 10
PRIORITY_OF_ASYNC_CLIENT = 15
PRIORITY_OF_KUBECONFIG = 10
PRIORITY_OF_SERVICE_ACCOUNT = 20


def login_with_kubeconfig(**_: Any) -> credentials.ConnectionInfo | None:
    """Credentials from `$KUBECONFIG` (merged files) or `~/.kube/config`; None if there is no such file."""
    paths = kubeconfig.config_paths()
    if not paths:
        return None
    return dataclasses.replace(kubeconfig.load(paths), priority=PRIORITY_OF_KUBECONFIG)


def login_with_service_account(*, directory: str = SERVICE_ACCOUNT_DIR, **_: Any) -> credentials.ConnectionInfo | None:
    """In-cluster credentials: the pod's service-account token, CA and namespace; None outside a cluster."""
    root = pathlib.Path(directory)
    token_path = root / 'token'
    if not token_path.is_file():
        return None
    ca_path = root / 'ca.crt'
    host = os.environ.get('KUBERNETES_SERVICE_HOST')
    port = os.environ.get('KUBERNETES_SERVICE_PORT', '443')
    if host:
        server = f'https://[{host}]:{port}' if ':' in host else f'https://{host}:{port}'
    else:
        server = IN_CLUSTER_SERVER
    return credentials.ConnectionInfo(
        server=server,
        ca_path=str(ca_path) if ca_path.is_file() else None,
        token=token_path.read_text().strip() or None,
        default_namespace=_namespace_in(root),
        priority=PRIORITY_OF_SERVICE_ACCOUNT,
    )


def login_via_pykube(**_: Any) -> credentials.ConnectionInfo | None:
    """Credentials as pykube-ng finds them (service account, then kubeconfig); None if pykube is absent."""
    try:
        import pykube
    except ImportError:  # the built-in fallbacks never call it then: a login handler of the operator did
        logger.warning(extras.needs(extras.PYKUBE) + ' Without it, it finds no credentials.')
        return None
    try:
        config = pykube.KubeConfig.from_env()
    except Exception as exc:
        raise apierrors.LoginError(f'pykube-ng could not load the credentials: {exc}') from exc
    cluster, user = config.cluster, config.user
    ca = cluster.get('certificate-authority')
    cert = user.get('client-certificate')
    key = user.get('client-key')
    return credentials.ConnectionInfo(
        server=cluster['server'],
        ca_path=ca.filename() if ca is not None else None,
        insecure=cluster.get('insecure-skip-tls-verify'),
        username=user.get('username'),
        password=user.get('password'),
        token=user.get('token'),
        certificate_path=cert.filename() if cert is not None else None,
        private_key_path=key.filename() if key is not None else None,
        default_namespace=config.namespace,
        proxy_url=cluster.get('proxy-url'),
        priority=PRIORITY_OF_PYKUBE,
    )


def login_via_client(**_: Any) -> credentials.ConnectionInfo | None:
    """Credentials as the `kubernetes` client loads them (in-cluster, then kubeconfig); None if it is absent."""
    try:
        import kubernetes
    except ImportError:  # the built-in fallbacks never call it then: a login handler of the operator did
        logger.warning(extras.needs(extras.KUBERNETES) + ' Without it, it finds no credentials.')
        return None
    config = kubernetes.client.Configuration()
    try:
        kubernetes.config.load_incluster_config(client_configuration=config)  # type: ignore[no-untyped-call]
        namespace = _namespace_in(pathlib.Path(SERVICE_ACCOUNT_DIR))
    except kubernetes.config.ConfigException:
        try:
            kubernetes.config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=_kubeconfig_file(), client_configuration=config)
        except kubernetes.config.ConfigException as exc:
            raise apierrors.LoginError(f'The kubernetes client could not load the credentials: {exc}') from exc
        namespace = _kubeconfig_namespace(kubernetes)
    if config.refresh_api_key_hook is not None:
        config.refresh_api_key_hook(config)
    return _from_client_config(config, namespace=namespace, priority=PRIORITY_OF_CLIENT)


def _from_client_config(config: Any, *, namespace: str | None, priority: int) -> credentials.ConnectionInfo:
    """Credentials from a `kubernetes` or `kubernetes_asyncio` client configuration (the same shape)."""
    header = config.api_key.get('BearerToken') or config.api_key.get('authorization')
    scheme, token = _split_header(header)
    return credentials.ConnectionInfo(
        server=config.host,
        ca_path=config.ssl_ca_cert,
        insecure=not config.verify_ssl,
        username=config.username or None,
        password=config.password or None,
        scheme=scheme,
        token=token,
        certificate_path=config.cert_file,
        private_key_path=config.key_file,
        default_namespace=namespace,
        proxy_url=config.proxy,
        priority=priority,
    )


def _split_header(header: str | None) -> tuple[str | None, str | None]:
    if not header:
        return None, None
    scheme, _, token = header.partition(' ')
    return (scheme, token) if token else ('Bearer', scheme)


def _namespace_in(directory: pathlib.Path) -> str | None:
    """The namespace of a service-account directory (the pod's own), if it has one."""
    path = directory / 'namespace'
    return path.read_text().strip() or None if path.is_file() else None


def _kubeconfig_file() -> str:
    """The kubeconfig the client libraries are pointed at: `$KUBECONFIG` now (not at import time), or the default."""
    return os.environ.get('KUBECONFIG') or kubeconfig.DEFAULT_PATH


def _kubeconfig_namespace(kubernetes: Any) -> str | None:
    try:
        _, active = kubernetes.config.list_kube_config_contexts(config_file=_kubeconfig_file())
    except Exception:
        return None
    namespace = (active or {}).get('context', {}).get('namespace')
    return namespace if isinstance(namespace, str) else None


async def login_via_async_client(**_: Any) -> credentials.ConnectionInfo | None:
    """Credentials as `kubernetes_asyncio` loads them (in-cluster, then kubeconfig); None if it is absent."""
    try:
        import kubernetes_asyncio
    except ImportError:  # the built-in fallbacks never call it: a login handler of the operator did
        logger.warning(extras.needs(extras.KUBERNETES_ASYNCIO) + ' Without it, it finds no credentials.')
        return None
    config = kubernetes_asyncio.client.Configuration()
    try:
        kubernetes_asyncio.config.load_incluster_config(client_configuration=config)
        namespace = _namespace_in(pathlib.Path(SERVICE_ACCOUNT_DIR))
    except kubernetes_asyncio.config.ConfigException:
        try:
            await kubernetes_asyncio.config.load_kube_config(config_file=_kubeconfig_file(),
                                                             client_configuration=config)
        except kubernetes_asyncio.config.ConfigException as exc:
            raise apierrors.LoginError(f'The kubernetes_asyncio client could not load the credentials: {exc}') from exc
        namespace = None
    return _from_client_config(config, namespace=namespace, priority=PRIORITY_OF_ASYNC_CLIENT)


async def login_by_defaults() -> list[credentials.ConnectionInfo]:
    """The built-in fallback when there are no `@kopf.on.login()` handlers.

    Kopf's own readers go first: the service account, else the kubeconfig (one identity, as the client
    libraries pick it: a 401 then means a re-login, never a silent switch to another cluster's user).
    pykube-ng and/or the `kubernetes` client, if installed, are used only
    when those find nothing or fail, or when the kubeconfig's user has a legacy `auth-provider` plugin
    (which the `kubernetes` client can refresh): so an installed client is not imported at every start
    when kopf can log in by itself. Upstream logs in through the installed
    clients first; the resulting credentials are the same.
    A client library that fails is logged and skipped. What is wrong with the kubeconfig is reported
    once, as the one error (the clients are not asked to read the same files): `$KUBECONFIG` set to
    files that do not exist, or a kubeconfig that cannot be used (`context 'x' is not defined in f`);
    unless its user has an `auth-provider` (the `kubernetes` client may still log in with it).
    """
    found, failed = await _login_with([login_with_service_account])
    if found:
        return found
    problem = kubeconfig.missing()
    if problem is not None:
        raise apierrors.LoginError(problem)  # once, and no client libraries asked to read the same nothing
    broken: apierrors.LoginError | None = None
    try:
        found, failed = await _login_with([login_with_kubeconfig], reraise=True)
    except apierrors.LoginError as exc:
        broken, failed = exc, True
    fns: list[Any] = []
    if importlib.util.find_spec('pykube') is not None:
        fns.append(login_via_pykube)
    if importlib.util.find_spec('kubernetes') is not None:
        fns.append(login_via_client)
    paths = kubeconfig.config_paths()
    if not fns or not paths:  # the clients read the same files (and service account): nothing more to find
        if broken is not None:
            raise broken
        return found or _nothing()
    if found and not failed and not _uses_auth_provider(paths):
        return found
    via_clients, _ = await _login_with(fns, quiet=broken is not None)
    if broken is not None:
        if not via_clients:
            raise broken  # what is wrong with the kubeconfig, once: not the clients' words for it too
        logger.warning(f'Login via login_with_kubeconfig failed: {broken}')
    return via_clients or found or _nothing()


def _nothing() -> list[credentials.ConnectionInfo]:
    raise apierrors.LoginError(f'no credentials found: no $KUBECONFIG, no {kubeconfig.DEFAULT_PATH}, '
                               'no service account (not in a cluster), and no @kopf.on.login() handlers')


def _uses_auth_provider(paths: list[pathlib.Path]) -> bool:
    try:
        return kubeconfig.uses_auth_provider(paths)
    except apierrors.LoginError:
        return False  # already reported by the kubeconfig login


async def _login_with(fns: list[Any], *, reraise: bool = False,
                      quiet: bool = False) -> tuple[list[credentials.ConnectionInfo], bool]:
    """The credentials the login functions find, and whether any of them failed (logged as a warning).

    `reraise`: a `LoginError` propagates instead (the caller reports it, once); `quiet`: failures are
    not logged (the caller reports its own). Any other error of a login function (e.g. a client
    library's KeyError on a file it cannot parse) is a failed login too.
    """
    found: list[credentials.ConnectionInfo] = []
    failed = False
    for fn in fns:
        try:
            info = await asyncio.to_thread(fn)
        except apierrors.LoginError as exc:
            if reraise:
                raise
            if not quiet:
                logger.warning(f'Login via {fn.__name__} failed: {exc}')
            failed = True
            continue
        except Exception as exc:
            if not quiet:
                logger.warning(f'Login via {fn.__name__} failed: {type(exc).__name__}: {exc}')
            failed = True
            continue
        if info is not None:
            found.append(info)
            _ACTIVITY_LOGGER.debug(f"Activity '{fn.__name__}' is invoked.")  # as upstream's built-in login handlers
            _ACTIVITY_LOGGER.info(f"Activity '{fn.__name__}' succeeded.")
    return found, failed


_ACTIVITY_LOGGER = logging.getLogger('kopf.activities.authentication')
