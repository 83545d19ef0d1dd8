"""Credentials: `kopf.ConnectionInfo`, `kopf.AiohttpSession`, and the vault that hands them to requests.

The vault's rules:
- Requests take the credentials of the highest priority (a random one among equals); expired ones are dropped.
- A 401 invalidates the credentials it was sent with; when none are left, the login function runs
  exactly once for all waiting requests (a lock), and they continue with what it returned.
- Credentials that were already rejected are not accepted again from a re-login (else 401 loops forever):
  if a login returns nothing new, `AccessError` (a `LoginError`) is raised to every waiting request.
- A login that keeps returning fresh credentials which the server rejects before ever accepting them is
  retried after `relogin_delays` (a grace for tokens that take a moment to propagate), then given up with
  `AccessError`. A login after credentials that worked for a while (a rotation, an expiry) is immediate.
- A discarded transport (its session) is closed only when no request or watch is using it anymore
  (in-flight work on rejected credentials ends normally, e.g. a watch opened before a rotation streams on).
"""
import asyncio
import base64
import dataclasses
import datetime
import logging
import os
import ssl
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kopf._api import apierrors

if TYPE_CHECKING:
    import aiohttp

    from kopf._api import transports

logger = logging.getLogger('kopf._api.credentials')


def _utc(value: datetime.datetime | None) -> datetime.datetime | None:
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=datetime.UTC)  # naive means UTC
    return value


@dataclasses.dataclass(frozen=True, kw_only=True)
class ConnectionInfo:
    """How to reach and authenticate to one API server (what a login handler returns)."""

    server: str
    ca_path: str | None = None
    ca_data: bytes | None = None  # PEM
    insecure: bool | None = None
    username: str | None = None
    password: str | None = None
    scheme: str | None = None  # the Authorization scheme; `Bearer` when only a token is given
    token: str | None = None
    certificate_path: str | None = None
    certificate_data: bytes | None = None  # PEM
    private_key_path: str | None = None
    private_key_data: bytes | None = None  # PEM
    default_namespace: str | None = None
    proxy_url: str | None = None
    trust_env: bool = False
    priority: int = 0
    expiration: datetime.datetime | None = None  # naive means UTC

    def __post_init__(self) -> None:
        for a, b in [('ca_path', 'ca_data'), ('certificate_path', 'certificate_data'),
                     ('private_key_path', 'private_key_data')]:
            if getattr(self, a) is not None and getattr(self, b) is not None:
                raise ValueError(f'ConnectionInfo accepts either {a} or {b}, not both.')
        for name in ['ca_data', 'certificate_data', 'private_key_data']:
            value = getattr(self, name)
            if isinstance(value, str):  # tolerate PEM text where bytes are expected
                object.__setattr__(self, name, value.encode())
        object.__setattr__(self, 'expiration', _utc(self.expiration))

    def as_http_headers(self) -> dict[str, str]:
        """The Authorization header: `<scheme> <token>`, a bare token as Bearer, a bare scheme as is.

        Surrounding whitespace of both is stripped, as kubectl does (a kubeconfig's `token: |` block scalar
        or a token file ends with a newline); CR/LF/NUL inside them are refused by the client, not here.
        """
        scheme = self.scheme.strip() if self.scheme else None
        token = self.token.strip() if self.token else None
        if scheme and token:
            return {'Authorization': f'{scheme} {token}'}
        if scheme:
            return {'Authorization': scheme}
        if token:
            return {'Authorization': f'Bearer {token}'}
        return {}

    def as_aiohttp_basic_auth(self) -> 'aiohttp.BasicAuth | None':
        import aiohttp  # only for aiohttp's sessions

        if self.username is None and self.password is None:
            return None
        with warnings.catch_warnings():  # deprecated in aiohttp 3.14, but this is upstream's public helper
            warnings.simplefilter('ignore', DeprecationWarning)
            return aiohttp.BasicAuth(login=self.username or '', password=self.password or '')

    def as_basic_auth_header(self) -> dict[str, str]:
        """The `Authorization: Basic ...` header for username/password credentials (empty if none)."""
        if self.username is None and self.password is None:
            return {}
        raw = f'{self.username or ""}:{self.password or ""}'.encode()
        return {'Authorization': 'Basic ' + base64.b64encode(raw).decode()}

    def as_ssl_context(self) -> ssl.SSLContext:
        """A client TLS context: verification on unless `insecure`; the CA and the client certificate loaded."""
        context = ssl.create_default_context(
            purpose=ssl.Purpose.SERVER_AUTH,
            cafile=self.ca_path,
            cadata=self.ca_data.decode() if self.ca_data is not None else None,
        )
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.certificate_path or self.certificate_data:
            import tempfile  # only here: it loads shutil and random
            with tempfile.TemporaryDirectory(prefix='kopf-tls-') as tmpdir:
                certfile = self.certificate_path or _write(tmpdir, 'cert.pem', self.certificate_data)
                keyfile = self.private_key_path or _write(tmpdir, 'key.pem', self.private_key_data)
                context.load_cert_chain(certfile=certfile or '', keyfile=keyfile)
        return context

    def is_expired(self, now: datetime.datetime) -> bool:
        return self.expiration is not None and self.expiration <= now


def _write(tmpdir: str, name: str, data: bytes | None) -> str | None:
    if data is None:
        return None
    path = os.path.join(tmpdir, name)
    with open(path, 'wb') as f:
        f.write(data)
    return path


def decode_pem(value: str | bytes) -> bytes:
    """kubeconfig's `*-data` fields are base64 of PEM; tolerate plain PEM too."""
    raw = value.encode() if isinstance(value, str) else value
    if raw.lstrip().startswith(b'-----BEGIN'):
        return raw
    return base64.b64decode(b''.join(raw.split()), validate=True)


@dataclasses.dataclass(frozen=True)
class AiohttpSession:
    """Credentials as a ready aiohttp session made by a login handler (kopf adds its User-Agent if missing)."""

    server: str
    aiohttp_session: 'aiohttp.ClientSession'
    priority: int = 0
    default_namespace: str | None = None
    expiration: datetime.datetime | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, 'expiration', _utc(self.expiration))

    def is_expired(self, now: datetime.datetime) -> bool:
        return self.expiration is not None and self.expiration <= now


Credentials = ConnectionInfo | AiohttpSession
LoginFn = Callable[[], Awaitable[Iterable[Credentials] | Mapping[Any, Credentials] | Credentials | None]]


class _Borrowing:
    """`VaultItem.borrowed()`: counts the item's users; an error other than a 401 (or none) accepts it."""

    __slots__ = ('item',)

    def __init__(self, item: 'VaultItem') -> None:
        self.item = item

    def __enter__(self) -> 'VaultItem':
        self.item.users += 1
        return self.item

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: Any) -> None:
        item = self.item
        item.users -= 1
        if exc is None or (isinstance(exc, apierrors.APIError) and not isinstance(exc, apierrors.APIUnauthorizedError)):
            item.accepted = True


class VaultItem:
    """One set of credentials in the vault, with the transport the client makes for it (lazily)."""

    def __init__(self, credentials: Credentials) -> None:
        self.credentials = credentials
        self.transport: transports.Transport | None = None  # set by the client on first use
        self.accepted = False  # the server answered a request made with them other than with 401
        self.rejected = False  # the server answered 401 to them
        self.users = 0  # requests and watches in flight with them (their session is closed only when idle)

    def borrowed(self) -> '_Borrowing':
        """Mark the credentials as in use for a request; an answer other than 401 means they were accepted.

        A plain context manager (on the hot path: no generator, no coroutine per request).
        """
        return _Borrowing(self)

    @property
    def server(self) -> str:
        return self.credentials.server.rstrip('/')

    @property
    def default_namespace(self) -> str | None:
        return self.credentials.default_namespace

    def __repr__(self) -> str:
        return f'<VaultItem {self.server} priority={self.credentials.priority}>'


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class Vault:
    """The credentials in use; re-login on exhaustion, exactly once per exhaustion, for all waiters."""

    def __init__(self, login: LoginFn | None = None, *, relogin_delays: Sequence[float] = (0.5, 1, 2, 4)) -> None:
        self._login = login
        self._items: list[VaultItem] = []
        self._rejected: set[ConnectionInfo] = set()
        self._lock = asyncio.Lock()
        self._closing: list[VaultItem] = []
        self._batch: list[VaultItem] = []  # what the last login gave
        self._futile = 0  # logins in a row whose credentials were all rejected, none ever accepted
        self.relogin_delays = tuple(relogin_delays)
        self.logins = 0  # how many times the login function ran (for logs and tests)

    def populate(self, credentials: Iterable[Credentials]) -> list[VaultItem]:
        """Add credentials (e.g. from a login handler run elsewhere); previously rejected ones are skipped."""
        self._futile, self._batch = 0, []   # given from outside: a fresh start for the re-login's patience
        return self._add(credentials)

    def _add(self, credentials: Iterable[Credentials]) -> list[VaultItem]:
        added: list[VaultItem] = []
        for item in credentials:
            if isinstance(item, ConnectionInfo) and item in self._rejected:
                continue
            if not any(existing.credentials == item for existing in self._items):
                added.append(VaultItem(item))
                self._items.append(added[-1])
        return added

    def _valid(self) -> list[VaultItem]:
        for item in self._items:  # on every request: no clock reading unless some credentials can expire
            if item.credentials.expiration is not None:
                now = _utcnow()
                for expired in [item for item in self._items if item.credentials.is_expired(now)]:
                    self._discard(expired)
                break
        return self._items

    def _discard(self, item: VaultItem) -> None:
        if item in self._items:
            self._items.remove(item)
            self._closing.append(item)

    async def select(self) -> VaultItem:
        """The credentials to use now: the highest priority, random among equals; logs in if none are left."""
        items = self._valid()
        if not items:
            async with self._lock:
                items = self._valid()
                if not items:
                    await self._relogin()
                    items = self._valid()
        if self._closing:
            await self._close_discarded()
        if len(items) == 1:
            return items[0]
        import random  # only with several credentials at once (rare)
        top = max(item.credentials.priority for item in items)
        return random.choice([item for item in items if item.credentials.priority == top])

    async def _relogin(self) -> None:
        if self._login is None:
            raise apierrors.LoginError('No credentials are available and there is no way to log in.')
        batch, self._batch = self._batch, []
        futile = bool(batch) and not any(item.accepted for item in batch) and any(item.rejected for item in batch)
        self._futile = self._futile + 1 if futile else 0
        if self._futile > len(self.relogin_delays):
            count, self._batch, self._futile = self._futile, batch, self._futile - 1   # so for later requests too
            raise apierrors.AccessError(f'The server rejected (401) the credentials of {count} logins in a row '
                                     f'without ever accepting them; giving up.')
        if self._futile:
            delay = self.relogin_delays[self._futile - 1]
            logger.warning(f'The server rejected the fresh credentials of the last login (401); '
                           f'logging in again in {delay:g}s.')
            await asyncio.sleep(delay)
        self.logins += 1
        result = await self._login()
        if result is None:
            found: list[Credentials] = []
        elif isinstance(result, (ConnectionInfo, AiohttpSession)):
            found = [result]
        elif isinstance(result, Mapping):
            found = list(result.values())
        else:
            found = list(result)
        self._batch = self._add(found)
        if not self._valid():
            if found:
                raise apierrors.AccessError('Ran out of valid credentials: the re-login gave only rejected or '
                                         'expired ones.')
            raise apierrors.LoginError('Ran out of valid credentials: the login gave none.')

    def invalidate(self, item: VaultItem) -> None:
        """The server rejected these credentials (401): never use them again."""
        item.rejected = True
        if isinstance(item.credentials, ConnectionInfo):
            self._rejected.add(item.credentials)
        self._discard(item)

    async def _close_discarded(self, *, force: bool = False) -> None:
        closing = [item for item in self._closing if force or not item.users]
        self._closing = [item for item in self._closing if item not in closing]
        for item in closing:
            if item.transport is not None:
                await item.transport.close()  # it leaves the sessions of login handlers to them

    async def close(self) -> None:
        for item in list(self._items):
            self._discard(item)
        await self._close_discarded(force=True)
