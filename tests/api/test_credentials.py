import asyncio
import contextlib
import dataclasses
import datetime
import ssl

import pytest

from kopf._api import apierrors, credentials, transports
from kopf._api.credentials import ConnectionInfo, Vault

from .certs import issue, make_ca


def token(item: credentials.VaultItem) -> str | None:
    assert isinstance(item.credentials, ConnectionInfo)
    return item.credentials.token


def test_frozen_and_keyword_only() -> None:
    info = ConnectionInfo(server='https://x')
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.server = 'y'  # type: ignore[misc]
    with pytest.raises(TypeError):
        ConnectionInfo('https://x')  # type: ignore[call-arg]


@pytest.mark.parametrize('a, b', [('ca_path', 'ca_data'), ('certificate_path', 'certificate_data'),
                                  ('private_key_path', 'private_key_data')])
def test_exclusive_pairs(a: str, b: str) -> None:
    with pytest.raises(ValueError, match=f'{a} or {b}'):
        ConnectionInfo(server='https://x', **{a: '/p', b: b'data'})  # type: ignore[arg-type]


def test_naive_expiration_is_utc() -> None:
    info = ConnectionInfo(server='https://x', expiration=datetime.datetime(2030, 1, 1))
    assert info.expiration == datetime.datetime(2030, 1, 1, tzinfo=datetime.UTC)


@pytest.mark.parametrize('kwargs, headers', [
    ({}, {}),
    ({'token': 't'}, {'Authorization': 'Bearer t'}),
    ({'scheme': 'Bearer', 'token': 't'}, {'Authorization': 'Bearer t'}),
    ({'scheme': 'Digest', 'token': 't'}, {'Authorization': 'Digest t'}),
    ({'scheme': 'Negotiate'}, {'Authorization': 'Negotiate'}),
    ({'token': 'abc\n'}, {'Authorization': 'Bearer abc'}),  # a kubeconfig's `token: |` block scalar
    ({'scheme': ' Bearer ', 'token': '\tt \r\n'}, {'Authorization': 'Bearer t'}),
])
def test_http_headers(kwargs: dict[str, str], headers: dict[str, str]) -> None:
    assert ConnectionInfo(server='https://x', **kwargs).as_http_headers() == headers  # type: ignore[arg-type]


def test_basic_auth() -> None:
    assert ConnectionInfo(server='https://x').as_aiohttp_basic_auth() is None
    auth = ConnectionInfo(server='https://x', username='u', password='p').as_aiohttp_basic_auth()
    assert auth is not None and (auth.login, auth.password) == ('u', 'p')


def test_ssl_context_verifies_by_default() -> None:
    context = ConnectionInfo(server='https://x').as_ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname


def test_ssl_context_insecure() -> None:
    context = ConnectionInfo(server='https://x', insecure=True).as_ssl_context()
    assert context.verify_mode == ssl.CERT_NONE
    assert not context.check_hostname


def test_ssl_context_loads_ca_and_client_cert_from_data() -> None:
    ca, ca_key, ca_cert = make_ca()
    client = issue(ca_key, ca_cert, 'user', server=False)
    info = ConnectionInfo(server='https://x', ca_data=ca.cert_pem,
                          certificate_data=client.cert_pem, private_key_data=client.key_pem)
    context = info.as_ssl_context()
    assert any('kopf test CA' in str(c.get('subject')) for c in context.get_ca_certs())


def test_ssl_context_loads_from_paths(tmp_path: object) -> None:
    import pathlib
    root = pathlib.Path(str(tmp_path))
    ca, ca_key, ca_cert = make_ca()
    client = issue(ca_key, ca_cert, 'user', server=False)
    (root / 'ca').write_bytes(ca.cert_pem)
    (root / 'crt').write_bytes(client.cert_pem)
    (root / 'key').write_bytes(client.key_pem)
    info = ConnectionInfo(server='https://x', ca_path=str(root / 'ca'),
                          certificate_path=str(root / 'crt'), private_key_path=str(root / 'key'))
    assert info.as_ssl_context().get_ca_certs()


def test_decode_pem() -> None:
    import base64
    pem = b'-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n'
    assert credentials.decode_pem(base64.b64encode(pem).decode()) == pem
    assert credentials.decode_pem(pem.decode()) == pem


# The vault.

@pytest.mark.looptime
async def test_vault_logs_in_once_for_many_waiters() -> None:
    calls = 0

    async def login() -> list[ConnectionInfo]:
        nonlocal calls
        calls += 1
        await asyncio.sleep(1)
        return [ConnectionInfo(server='https://x', token=f't{calls}')]

    vault = Vault(login)
    items = await asyncio.gather(*[vault.select() for _ in range(10)])
    assert calls == 1
    assert {token(item) for item in items} == {'t1'}


async def test_vault_relogs_after_invalidation() -> None:
    tokens = iter(['t1', 't2'])

    async def login() -> ConnectionInfo:
        return ConnectionInfo(server='https://x', token=next(tokens))

    vault = Vault(login)
    item = await vault.select()
    vault.invalidate(item)
    vault.invalidate(item)  # twice, as from two concurrent requests: no harm
    assert token(await vault.select()) == 't2'
    assert vault.logins == 2


@pytest.mark.looptime
async def test_vault_refuses_rejected_credentials_again() -> None:
    async def login() -> ConnectionInfo:
        return ConnectionInfo(server='https://x', token='static')

    vault = Vault(login)
    vault.invalidate(await vault.select())
    with pytest.raises(apierrors.AccessError):
        await vault.select()


async def test_vault_without_login_and_credentials() -> None:
    with pytest.raises(apierrors.LoginError):
        await Vault().select()


async def test_vault_login_giving_nothing() -> None:
    async def login() -> None:
        return None

    with pytest.raises(apierrors.LoginError, match='gave none'):
        await Vault(login).select()


async def test_vault_prefers_the_highest_priority() -> None:
    vault = Vault()
    vault.populate([ConnectionInfo(server='https://low', priority=1),
                    ConnectionInfo(server='https://high', priority=5)])
    for _ in range(10):
        assert (await vault.select()).server == 'https://high'


async def test_vault_drops_expired_credentials() -> None:
    now = datetime.datetime.now(datetime.UTC)
    vault = Vault()
    vault.populate([ConnectionInfo(server='https://old', priority=9, expiration=now),
                    ConnectionInfo(server='https://new', expiration=now + datetime.timedelta(days=1))])
    assert (await vault.select()).server == 'https://new'


@pytest.mark.looptime
async def test_vault_gives_up_on_fresh_credentials_that_are_never_accepted() -> None:
    calls = 0

    async def login() -> ConnectionInfo:   # a fresh token every time, none of them valid
        nonlocal calls
        calls += 1
        return ConnectionInfo(server='https://x', token=f't{calls}')

    vault = Vault(login, relogin_delays=(1, 2))
    loop = asyncio.get_running_loop()
    start = loop.time()
    for _ in range(3):
        vault.invalidate(await vault.select())
    with pytest.raises(apierrors.AccessError, match='3 logins in a row'):
        await vault.select()
    assert calls == 3
    assert loop.time() - start == pytest.approx(3)   # the grace delays (looptime's clock)
    with pytest.raises(apierrors.AccessError):   # and it stays so: no login loop
        await vault.select()
    assert calls == 3


@pytest.mark.looptime
async def test_vault_counts_only_logins_never_accepted_in_a_row() -> None:
    calls = 0

    async def login() -> ConnectionInfo:
        nonlocal calls
        calls += 1
        return ConnectionInfo(server='https://x', token=f't{calls}')

    vault = Vault(login, relogin_delays=(1,))
    for _ in range(5):   # each token works for a while, then is rotated away: never futile
        item = await vault.select()
        with item.borrowed():
            pass
        vault.invalidate(item)
    vault.invalidate(await vault.select())   # one futile login is within the grace
    item = await vault.select()
    assert calls == 7 and token(item) == 't7'


@pytest.mark.parametrize('error, accepted', [
    (None, True),
    (apierrors.APINotFoundError(status=404), True),
    (apierrors.APIServerError(status=500), True),
    (apierrors.APIUnauthorizedError(status=401), False),
    (ConnectionError('reset'), False),
])
async def test_borrowed_credentials_learn_acceptance(error: Exception | None, accepted: bool) -> None:
    vault = Vault()
    vault.populate([ConnectionInfo(server='https://x')])
    item = await vault.select()
    with pytest.raises(type(error)) if error is not None else contextlib.nullcontext():
        with item.borrowed():
            assert item.users == 1
            if error is not None:
                raise error
    assert item.users == 0
    assert item.accepted is accepted


async def test_vault_closes_a_rejected_transport_only_when_unused() -> None:
    vault = Vault()
    vault.populate([ConnectionInfo(server='https://a', priority=2), ConnectionInfo(server='https://b')])
    item = await vault.select()
    transport = item.transport = transports.DirectTransport(ConnectionInfo(server='https://a'), limit=1)
    with item.borrowed():   # a request or a watch in flight when the server rejects the credentials
        vault.invalidate(item)
        assert (await vault.select()).server == 'https://b'
        assert not transport.session.closed
    await vault.select()
    assert transport.session.closed
