"""kopf.WebhookServer on its own: TLS from given files (re-read when they change), from a self-signed CA, or none."""
import asyncio
import base64
import json
import os
import pathlib
import ssl
from typing import Any

import kopf
from kopf._shared import certificates

REVIEW = {'apiVersion': 'admission.k8s.io/v1', 'kind': 'AdmissionReview',
          'request': {'uid': 'u', 'operation': 'CREATE', 'object': {},
                      'resource': {'group': 'g', 'version': 'v', 'resource': 'r'}}}


async def answer(payload: Any, /, **_: Any) -> dict[str, Any]:
    return {'apiVersion': payload['apiVersion'], 'kind': 'AdmissionReview',
            'response': {'uid': payload['request']['uid'], 'allowed': True}}


async def served_certificate(url: str, ca_pem: bytes) -> bytes:
    host_port = url.split('://', 1)[1].split('/', 1)[0]
    host, port = host_port.rsplit(':', 1)
    context = ssl.create_default_context(cadata=ca_pem.decode())
    _, writer = await asyncio.open_connection(host, int(port), ssl=context, server_hostname=host)
    der = writer.get_extra_info('ssl_object').getpeercert(binary_form=True)
    writer.close()
    return bytes(der)


async def post(url: str, ca_pem: bytes | None, body: bytes) -> tuple[int, Any]:
    rest = url.split('://', 1)[1]
    host_port, path = rest.split('/', 1) if '/' in rest else (rest, '')
    host, port = host_port.rsplit(':', 1)
    context = ssl.create_default_context(cadata=ca_pem.decode()) if ca_pem else None
    reader, writer = await asyncio.open_connection(host, int(port), ssl=context,
                                                   server_hostname=host if context else None)
    writer.write(f'POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n'
                 f'Content-Length: {len(body)}\r\nConnection: close\r\n\r\n'.encode() + body)
    raw = await reader.read()
    writer.close()
    head, _, rest = raw.partition(b'\r\n\r\n')
    status = int(head.split()[1])
    try:
        return status, json.loads(rest)
    except ValueError:
        return status, None


async def test_a_self_signed_server_gives_its_ca_and_answers_reviews(tmp_path: pathlib.Path) -> None:
    server = kopf.WebhookServer(addr='127.0.0.1', host='127.0.0.1', cadump=tmp_path / 'ca.pem')
    configs = server(answer)
    config = await configs.__anext__()
    try:
        ca_pem = base64.b64decode(config['caBundle'])
        assert (tmp_path / 'ca.pem').read_bytes() == ca_pem
        status, body = await post(str(config['url']) + '/some-id', ca_pem, json.dumps(REVIEW).encode())
        assert status == 200 and body['response'] == {'uid': 'u', 'allowed': True}
        status, _ = await post(str(config['url']) + '/some-id', ca_pem, b'{not json')
        assert status == 400
    finally:
        await configs.aclose()


async def test_an_insecure_server_speaks_plain_http() -> None:
    configs = kopf.WebhookServer(addr='127.0.0.1', insecure=True)(answer)
    config = await configs.__anext__()
    try:
        assert str(config['url']).startswith('http://') and 'caBundle' not in config
        status, body = await post(str(config['url']), None, json.dumps(REVIEW).encode())
        assert status == 200 and body['response']['allowed'] is True
    finally:
        await configs.aclose()


async def test_given_certificate_files_are_re_read_when_they_change(tmp_path: pathlib.Path) -> None:
    first = certificates.make('127.0.0.1')
    certfile, keyfile = tmp_path / 'tls.crt', tmp_path / 'tls.key'
    certfile.write_bytes(first.cert_pem)
    keyfile.write_bytes(first.key_pem)
    server = kopf.WebhookServer(addr='127.0.0.1', host='127.0.0.1', certfile=certfile, pkeyfile=keyfile,
                                cadata=first.ca_pem, file_check_interval=0.05)
    configs = server(answer)
    config = await configs.__anext__()
    serving = asyncio.ensure_future(configs.__anext__())  # the server goes on (checking its files) meanwhile
    try:
        assert base64.b64decode(config['caBundle']) == first.ca_pem
        before = await served_certificate(str(config['url']), first.ca_pem)
        second = certificates.make('127.0.0.1')
        keyfile.write_bytes(second.key_pem)
        certfile.write_bytes(second.cert_pem)
        os.utime(certfile, (1, 1))  # a different mtime even within the filesystem's resolution
        served: list[bytes] = []

        async def check() -> None:
            try:
                served.append(await served_certificate(str(config['url']), second.ca_pem))
            except ssl.SSLError:
                pass  # still the old certificate, which the new CA does not trust

        for _ in range(100):
            await check()
            if served and served[-1] != before:
                break
            await asyncio.sleep(0.05)
        assert served and served[-1] != before
    finally:
        serving.cancel()
        await asyncio.gather(serving, return_exceptions=True)


async def test_other_paths_and_methods_and_oversized_bodies_are_refused() -> None:
    class Small(kopf.WebhookServer):
        MAX_BODY = 1000

    configs = Small(addr='127.0.0.1', path='/hooks', insecure=True)(answer)
    config = await configs.__anext__()
    try:
        base = str(config['url'])
        assert base.endswith('/hooks')
        status, body = await post(base + '/some%2Fid', None, json.dumps(REVIEW).encode())
        assert status == 200 and body['response']['allowed'] is True
        status, _ = await post(base.removesuffix('/hooks') + '/elsewhere', None, json.dumps(REVIEW).encode())
        assert status == 404
        status, _ = await post(base + '/id', None, b'x' * 1001)
        assert status == 413
        host, port = base.split('://', 1)[1].split('/', 1)[0].rsplit(':', 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b'GET /hooks/id HTTP/1.1\r\nConnection: close\r\n\r\n')
        assert (await reader.read()).startswith(b'HTTP/1.1 405 ')
        writer.close()
    finally:
        await configs.aclose()


async def test_the_webhook_id_comes_unquoted_from_the_path() -> None:
    seen: list[Any] = []

    async def remember(payload: Any, /, **kwargs: Any) -> dict[str, Any]:
        seen.append(kwargs['webhook'])
        return await answer(payload)

    configs = kopf.WebhookServer(addr='127.0.0.1', insecure=True)(remember)
    config = await configs.__anext__()
    try:
        for path in ('/create_fn%2Fitem1', '', '/'):
            status, _ = await post(str(config['url']) + path, None, json.dumps(REVIEW).encode())
            assert status == 200
        assert seen == ['create_fn/item1', None, None]
    finally:
        await configs.aclose()


def operator_admission(registry: kopf.OperatorRegistry) -> Any:
    from kopf._admission import answering
    from kopf._core import progress, resources, settings
    from kopf._engine import contexts

    ctx = contexts.OperatorContext(settings=settings.OperatorSettings(), registry=registry, client=None,  # type: ignore[arg-type]
                                   memo=kopf.Memo(), lifecycle=progress.all_at_once)
    served = answering.Admission(ctx)
    served.resources = {resources.Resource('g', 'v', 'r'): None}
    return served


async def test_outcome_lines_are_logged_once_the_answer_is_written(caplog: Any) -> None:
    from kopf._admission import httpserving, servers

    registry = kopf.OperatorRegistry()

    @kopf.on.validate('g', 'v', 'r', id='check', registry=registry)
    def check(logger: Any, **_: Any) -> None:
        logger.info('In the handler.')

    served = operator_admission(registry)
    request = httpserving.Request('POST', '/check', {}, json.dumps(REVIEW).encode(), {})
    caplog.set_level('INFO')
    answer = await servers._serve_review(served.review, '', request)
    assert answer[0] == 200 and json.loads(answer[1])['response'] == {'uid': 'u', 'allowed': True}
    assert messages(caplog) == ['In the handler.']  # the handler's own lines: at once
    answer[2]()  # the server calls it once the answer is written
    assert messages(caplog) == ['In the handler.', "Webhook 'check' succeeded."]

    caplog.clear()  # called by another server (no deferral): logged at once, as always
    await served.review(REVIEW, webhook='check')
    assert messages(caplog) == ['In the handler.', "Webhook 'check' succeeded."]


def messages(caplog: Any) -> list[str]:
    return [r.getMessage().split('] ', 1)[-1] for r in caplog.records]  # without the `[namespace/name]` prefix
