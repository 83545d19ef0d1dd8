"""Small parts of running: flags, refused handler kinds, scopes, loading, lifecycles, object loggers."""
import asyncio
import concurrent.futures
import logging
import pathlib
import threading
from typing import Any

import pytest

import kopf
from kopf._admission import protocols
from kopf._core import resources
from kopf._engine import flags, loading, loggers, observing


@pytest.mark.parametrize('make', [asyncio.Event, threading.Event, concurrent.futures.Future,
                                  lambda: asyncio.get_running_loop().create_future()])
async def test_flags_are_raised_and_awaited(make: Any) -> None:
    flag = make()
    waiter = asyncio.create_task(flags.wait_flag(flag))
    await asyncio.sleep(0)
    assert not waiter.done()
    flags.raise_flag(flag)
    await asyncio.wait_for(waiter, timeout=1)


def test_admission_handlers_need_a_server_and_a_valid_managed_name() -> None:
    registry = kopf.OperatorRegistry()
    kopf.daemon('kex', id='d1', registry=registry)(lambda **_: None)
    kopf.timer('kex', id='t1', interval=1, registry=registry)(lambda **_: None)
    kopf.index('kex', id='i1', registry=registry)(lambda **_: None)
    kopf.on.create('kex', id='fine', registry=registry)(lambda **_: None)
    settings = kopf.OperatorSettings()
    protocols.check(registry, settings)  # daemons, timers, indices run
    kopf.on.validate('kex', id='v1', registry=registry)(lambda **_: None)
    with pytest.raises(protocols.UnsupportedHandlersError, match="Admission handlers \\('v1'\\) need a webhook server"):
        protocols.check(registry, settings)
    settings.admission.server = kopf.WebhookServer()
    protocols.check(registry, settings)
    settings.admission.managed = 'nodots'
    with pytest.raises(protocols.UnsupportedHandlersError, match='at least two dot-separated segments'):
        protocols.check(registry, settings)


def test_change_and_event_handlers_are_supported() -> None:
    registry = kopf.OperatorRegistry()
    kopf.on.create('kex', registry=registry)(lambda **_: None)
    kopf.on.event('kex', registry=registry)(lambda **_: None)
    kopf.on.startup(registry=registry)(lambda **_: None)
    protocols.check(registry, kopf.OperatorSettings())


NAMESPACED = resources.Resource('g', 'v', 'p', namespaced=True)
CLUSTERED = resources.Resource('g', 'v', 'c', namespaced=False)


def test_scopes() -> None:
    assert observing.Scope().watch_namespaces(NAMESPACED) == [None]
    exact = observing.Scope(clusterwide=False, patterns=['b,a', 'c'])
    assert exact.watch_namespaces(NAMESPACED) == ['a', 'b', 'c']
    assert exact.watch_namespaces(CLUSTERED) == [None]
    assert not exact.discovering
    globs = observing.Scope(clusterwide=False, patterns=['team-*,!team-x'])
    assert globs.discovering
    assert globs.watch_namespaces(NAMESPACED) == []
    assert globs.watch_namespaces(NAMESPACED, {'team-b', 'team-x', 'team-a', 'x'}) == ['team-a', 'team-b']
    assert globs.serves('team-a') and not globs.serves('team-x') and not globs.serves('other')
    assert globs.serves(None)


def test_loading_files_and_modules(tmp_path: pathlib.Path) -> None:
    (tmp_path / 'helper_mod_for_kopf_test.py').write_text('VALUE = 42\n')
    (tmp_path / 'main.py').write_text('import helper_mod_for_kopf_test\nLOADED = helper_mod_for_kopf_test.VALUE\n')
    loading.load([str(tmp_path / 'main.py')], ['json'])
    with pytest.raises(loading.LoadingError, match='ZeroDivisionError'):
        (tmp_path / 'bad.py').write_text('1/0\n')
        loading.load([str(tmp_path / 'bad.py')], [])


def test_default_lifecycle_is_settable() -> None:
    assert kopf.get_default_lifecycle() is kopf.lifecycles.asap
    try:
        kopf.set_default_lifecycle(kopf.lifecycles.all_at_once)
        assert kopf.get_default_lifecycle() is kopf.lifecycles.all_at_once
    finally:
        kopf.set_default_lifecycle(None)
    assert kopf.get_default_lifecycle() is kopf.lifecycles.asap


def test_object_loggers_prefix_and_post(caplog: pytest.LogCaptureFixture) -> None:
    body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}}
    settings = kopf.OperatorSettings()
    settings.posting.loggers = True
    posted: list[Any] = []

    class Poster:
        def enqueue(self, ref: Any, **kwargs: Any) -> None:
            posted.append((ref['name'], kwargs['type'], kwargs['reason'], kwargs['message']))

    token = loggers.events.poster_var.set(Poster())  # type: ignore[arg-type]
    try:
        with caplog.at_level(logging.DEBUG, logger='kopf.objects'):
            kopf.ObjectLogger(body=body, settings=settings).info('hello %s', 'world')
            kopf.ObjectLogger(body=body, settings=settings).debug('quiet')
            kopf.LocalObjectLogger(body=body, settings=settings).warning('local only')
    finally:
        loggers.events.poster_var.reset(token)
    assert '[ns/n] hello world' in caplog.messages
    assert '[ns/n] local only' in caplog.messages
    assert posted == [('n', 'Normal', 'Logging', 'hello world')]


def test_configure_json_without_prefix(capsys: pytest.CaptureFixture[str]) -> None:
    import json
    body = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}}
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        loggers.configure(log_format=kopf.LogFormat.JSON, log_refkey='k8s')
        kopf.LocalObjectLogger(body=body, settings=kopf.OperatorSettings()).info('hello')
        line = capsys.readouterr().err.strip().splitlines()[-1]
        record = json.loads(line)
        assert record['message'] == 'hello'
        assert record['k8s'] == {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'n', 'namespace': 'ns', 'uid': 'u'}
        loggers.configure(log_format=kopf.LogFormat.PLAIN, log_prefix=None)  # None: on for text
        kopf.LocalObjectLogger(body=body, settings=kopf.OperatorSettings()).info('hello')
        assert capsys.readouterr().err.strip().splitlines()[-1] == '[ns/n] hello'
        loggers.configure(log_format=kopf.LogFormat.PLAIN)  # off by default, as upstream's configure()
        kopf.LocalObjectLogger(body=body, settings=kopf.OperatorSettings()).info('hello')
        assert capsys.readouterr().err.strip().splitlines()[-1] == 'hello'
    finally:
        if loggers._handler is not None:
            root.removeHandler(loggers._handler)
            loggers._handler = None
        root.setLevel(level)
        root.handlers[:] = handlers


@pytest.mark.parametrize('with_handler', [False, True])
async def test_the_first_login_is_logged_as_upstream(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                                     with_handler: bool) -> None:
    from kopf._api import loginning
    from kopf._engine import activities, contexts

    info = kopf.ConnectionInfo(server='https://localhost')

    def login_with_kubeconfig(**_: Any) -> kopf.ConnectionInfo:
        return info

    monkeypatch.setattr(loginning, 'login_with_service_account', lambda **_: None)
    monkeypatch.setattr(loginning, 'login_with_kubeconfig', login_with_kubeconfig)
    monkeypatch.setattr(loginning.kubeconfig, 'missing', lambda: None)
    monkeypatch.setattr(loginning.kubeconfig, 'config_paths', lambda: [])
    registry = kopf.OperatorRegistry()
    if with_handler:
        @kopf.on.login(registry=registry, id='my_login')
        def my_login(**_: Any) -> kopf.ConnectionInfo:
            return info
    ctx = contexts.OperatorContext(settings=kopf.OperatorSettings(), registry=registry, client=None,  # type: ignore[arg-type]
                                   memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    login = activities.make_login(ctx)
    with caplog.at_level(logging.INFO, logger='kopf'):
        assert list(await login()) == [info]  # type: ignore[arg-type]
        assert list(await login()) == [info]  # type: ignore[arg-type]  # a re-login: not "initial"
    source = 'my_login' if with_handler else 'login_with_kubeconfig'
    assert [r.getMessage() for r in caplog.records] == [
        'Initial authentication has been initiated.', f"Activity '{source}' succeeded.",
        'Initial authentication has finished.',
        'Re-authentication has been initiated.', f"Activity '{source}' succeeded.",  # as upstream 1.45.2
        'Re-authentication has finished.']


@pytest.mark.parametrize('level, severity', [
    (1, 'debug'), (10, 'debug'), (11, 'info'), (20, 'info'), (21, 'warn'), (30, 'warn'), (31, 'error'),
    (40, 'error'), (41, 'fatal'), (50, 'fatal'),  # as upstream 1.45.2 names them (run as a black box)
])
def test_json_severities(level: int, severity: str) -> None:
    assert loggers.severity(level) == severity


def test_log_formats_as_upstream_takes_them(capsys: pytest.CaptureFixture[str]) -> None:
    import json
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    node = {'apiVersion': 'v1', 'kind': 'Node', 'metadata': {'name': 'n', 'uid': 'u'}}
    try:
        loggers.configure(log_format='%(levelname)s:%(message)s')  # a string is a %-style format
        logging.getLogger('x').warning('hello %s', 'w')
        assert capsys.readouterr().err.splitlines()[-1] == 'WARNING:hello w'
        for bad in ['json', '-json-', None, 5]:
            with pytest.raises(ValueError):
                loggers.configure(log_format=bad)  # type: ignore[arg-type]
        loggers.configure(log_format=kopf.LogFormat.JSON)
        kopf.LocalObjectLogger(body=node, settings=kopf.OperatorSettings()).info('cluster')
        record = json.loads(capsys.readouterr().err.splitlines()[-1])
        assert list(record) == ['message', 'timestamp', 'object', 'severity']
        assert record['object'] == {'apiVersion': 'v1', 'kind': 'Node', 'name': 'n', 'uid': 'u', 'namespace': None}
    finally:
        loggers.deconfigure()
        root.setLevel(level)
        root.handlers[:] = handlers


def test_object_loggers_keep_no_copies_and_read_the_body_they_were_given() -> None:
    """Tens of thousands live at once (a timer each): the reference and prefix are made per message."""
    body: dict[str, Any] = {'apiVersion': 'v1', 'kind': 'ConfigMap',
                            'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}}
    logger = kopf.ObjectLogger(body=body, settings=kopf.OperatorSettings())
    assert set(vars(logger)) == {'body', 'settings'}
    assert logger.prefix == '[ns/n]'
    ref = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'n', 'uid': 'u', 'namespace': 'ns'}
    assert logger.extra == {'k8s_ref': ref}
    assert logger.logger is logging.getLogger('kopf.objects')
    msg, kwargs = logger.process('hi', {'extra': {'a': 1}})
    assert msg == '[ns/n] hi' and kwargs['extra'] == {**logger.extra, 'a': 1}
