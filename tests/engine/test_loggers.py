"""`kopf.configure()` as upstream 1.45.2's: each log format (a `kopf.LogFormat` or a %-style string), the
prefix, the reference key, the levels, and the errors of bad formats, line for line (modulo timestamps).

The same script runs in a process of ours and, where its throw-away venv is present (bench/.venvs), of
upstream's (as a black box); the expected lines were recorded from upstream's run.
"""
import gc
import json
import logging
import pathlib
import re
import subprocess
import sys
from typing import Any

import pytest

import kopf
from kopf._engine import loggers

ROOT = pathlib.Path(__file__).parent.parent.parent
UPSTREAM = ROOT / 'bench' / '.venvs' / 'upstream-1.45.2' / 'bin' / 'python'
SCRIPT = '''
import json, logging, sys
import kopf

BODY = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}}
for case in json.loads(sys.argv[1]):
    print('---', file=sys.stderr)
    fmt = case.pop('log_format')
    log_format = getattr(kopf.LogFormat, fmt[1:]) if isinstance(fmt, str) and fmt.startswith('=') else fmt
    try:
        kopf.configure(log_format=log_format, **case)
    except Exception as exc:
        print(f'{type(exc).__name__}: {exc}', file=sys.stderr)
        continue
    logger = kopf.LocalObjectLogger(body=BODY, settings=kopf.OperatorSettings())
    logger.info('About %s', 'it', extra={'custom': 'field'})
    logger.debug('Debug')
    logging.getLogger('plain').warning('A plain %s', 'line')
    print(f'handlers: {len(logging.getLogger().handlers)}', file=sys.stderr)
'''
REF = '{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "n", "uid": "u", "namespace": "ns"}'
CASES: list[tuple[dict[str, Any], list[str]]] = [  # `=NAME`: kopf.LogFormat.NAME
    ({'log_format': '=PLAIN'}, ['About it', 'A plain line']),
    ({'log_format': '=PLAIN', 'log_prefix': True}, ['[ns/n] About it', 'A plain line']),
    ({'log_format': '=PLAIN', 'log_prefix': None}, ['[ns/n] About it', 'A plain line']),
    ({'log_format': '=FULL'}, ['[TS] kopf.objects         [INFO    ] About it',
                               '[TS] plain                [WARNING ] A plain line']),
    ({'log_format': '=JSON'}, [
        f'{{"message": "About it", "custom": "field", "timestamp": "TS", "object": {REF}, "severity": "info"}}',
        '{"message": "A plain line", "timestamp": "TS", "severity": "warn"}']),
    ({'log_format': '=JSON', 'log_refkey': 'k8s', 'log_prefix': True}, [
        f'{{"message": "[ns/n] About it", "custom": "field", "timestamp": "TS", "k8s": {REF}, "severity": "info"}}',
        '{"message": "A plain line", "timestamp": "TS", "severity": "warn"}']),
    ({'log_format': '%(levelname)s %(name)s: %(message)s'}, ['INFO kopf.objects: About it',
                                                             'WARNING plain: A plain line']),
    ({'log_format': '%(levelname)s %(name)s: %(message)s', 'log_prefix': True}, [
        'INFO kopf.objects: [ns/n] About it', 'WARNING plain: A plain line']),
    ({'log_format': ''}, ['About it', 'A plain line']),  # logging's default: the message
    ({'log_format': '%(message)s', 'verbose': True}, ['About it', 'Debug', 'A plain line']),
    ({'log_format': '%(message)s', 'quiet': True}, ['A plain line']),
    ({'log_format': 'json'}, ["ValueError: Invalid format 'json' for '%' style"]),  # a string is a format
    ({'log_format': 'plain'}, ["ValueError: Invalid format 'plain' for '%' style"]),
    ({'log_format': '{levelname} {message}'}, ["ValueError: Invalid format '{levelname} {message}' for '%' style"]),
    ({'log_format': None}, ['ValueError: Unsupported log format: None']),
    ({'log_format': 5}, ['ValueError: Unsupported log format: 5']),
]
TIMESTAMP = re.compile(r'\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[.,]\d+(\+00:00)?')


def lines_of(python: str) -> list[list[str]]:
    """The lines of each case (its timestamps as TS; `handlers: 1`, one handler of ours at a time, dropped)."""
    result = subprocess.run([python, '-c', SCRIPT, json.dumps([case for case, _ in CASES])],
                            capture_output=True, text=True, timeout=60, check=True)
    blocks = TIMESTAMP.sub('TS', result.stderr).split('---\n')[1:]
    assert all('handlers: ' not in block or block.endswith('handlers: 1\n') for block in blocks), blocks
    return [[line for line in block.splitlines() if line != 'handlers: 1'] for block in blocks]


def test_ours_are_as_upstreams() -> None:
    assert lines_of(sys.executable) == [expected for _, expected in CASES]


@pytest.mark.skipif(not UPSTREAM.exists(), reason='no throw-away venv of upstream Kopf 1.45.2 (bench/.venvs)')
def test_upstream_still_writes_the_recorded_lines() -> None:
    assert lines_of(str(UPSTREAM)) == [expected for _, expected in CASES]


def test_a_plain_line_of_an_object_logger_leaves_no_garbage_cycle() -> None:
    """Its record is made directly (no `findCaller`); a frame kept in a local would be a cycle per line, held
    (with the line's arguments) until gc's next collection: +4 MB of idle RSS after a restart of 1,000 objects."""
    logger = loggers.ObjectLogger(body={'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}},
                                  settings=kopf.OperatorSettings())
    objects_logger = logging.getLogger('kopf.objects')
    level = objects_logger.level
    objects_logger.setLevel(logging.INFO)
    enabled = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for _ in range(10):
            logger.info('A plain %s', 'line')
        assert gc.collect() == 0
    finally:
        objects_logger.setLevel(level)  # else later tests in this process lose the objects' DEBUG lines
        if enabled:
            gc.enable()


# The plain route (`loggers.plain_route`): `kopf run`'s usual setup writes an object's line with no record made.
# Each line is written once by that route and once the usual way (a filter on the handler forces it): the same text.

BODY = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'n', 'namespace': 'ns', 'uid': 'u'}}
CLUSTER_BODY = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'metadata': {'name': 'c', 'uid': 'u'}}


class _Stream(list[str]):
    def write(self, text: str) -> None:
        self.append(text)

    def flush(self) -> None:
        self.append('<flush>')


@pytest.fixture()
def configured() -> Any:
    """`configure()` alone, as in `kopf run`: pytest's own capturing handlers are set aside meanwhile."""
    logger, root = logging.getLogger('kopf.objects'), logging.getLogger()
    level, root_level = logger.level, root.level
    yield
    loggers.deconfigure()
    logger.setLevel(level)
    root.setLevel(root_level)


def _configure(**kwargs: Any) -> None:
    """`kopf.configure()`, with pytest's capturing handlers (added around each test's call) set aside."""
    root = logging.getLogger()
    for handler in root.handlers[:]:
        if handler is not loggers._handler:
            root.removeHandler(handler)  # pytest's: it removes them itself afterwards (gone already is fine)
    logging.getLogger('kopf.objects').setLevel(logging.NOTSET)  # the root's level decides, as in `kopf run`
    kopf.configure(**kwargs)


def _both_ways(log: Any, **configure: Any) -> tuple[list[str], list[str]]:
    """The stream's writes of `log(logger)` by the plain route and the usual way, timestamps as TS."""
    _configure(**configure)
    handler = loggers._handler
    assert isinstance(handler, logging.StreamHandler)
    written: list[list[str]] = []
    for usual in (False, True):
        stream = _Stream()
        handler.setStream(stream)  # type: ignore[arg-type]
        if usual:
            handler.addFilter(lambda record: True)
        assert (loggers.plain_route(logging.getLogger('kopf.objects'), logging.INFO) is None) is usual
        log(loggers.ObjectLogger(body=BODY, settings=kopf.OperatorSettings()),
            loggers.ObjectLogger(body=CLUSTER_BODY, settings=kopf.OperatorSettings()))
        written.append([TIMESTAMP.sub('TS', text) for text in stream])
    return written[0], written[1]


def _lines(logger: Any, cluster: Any) -> None:
    logger.info('Handler %r succeeded.', 'fn')
    logger.info('Resuming is processed: 1 succeeded; 0 failed.')
    logger.warning('With an extra', extra={'kopf_handler_id': 'fn'})
    logger.debug('Not logged at INFO')
    logger.error(ValueError('not a string'))
    cluster.log(logging.INFO, 'A cluster-scoped one, 100%')
    logger.log(25, 'A custom level')


@pytest.mark.parametrize('configure', [
    {}, {'log_prefix': True}, {'log_prefix': None}, {'log_format': kopf.LogFormat.PLAIN},
    {'log_format': kopf.LogFormat.PLAIN, 'log_prefix': True}, {'verbose': True, 'log_prefix': True},
    {'log_format': '%(levelno)s|%(levelname)s|%(name)s|%(message)s|%(asctime)s'},
], ids=lambda c: repr(c))
def test_the_plain_route_writes_what_the_usual_way_writes(configured: None, configure: dict[str, Any]) -> None:
    plain, usual = _both_ways(_lines, **configure)
    assert plain == usual
    assert len(plain) == (14 if configure.get('verbose') else 12)  # the lines and their flushes


def test_the_plain_route_writes_a_time_as_the_formatter_does(configured: None) -> None:
    plain, usual = _both_ways(lambda logger, _: logger.info('x'), log_prefix=True)
    assert plain == usual
    assert re.fullmatch(r'\[TS\] kopf\.objects +\[INFO +\] \[ns/n\] x\n', plain[0])


def test_a_failed_write_is_the_handlers_error_either_way(configured: None, capsys: Any) -> None:
    plain, usual = _both_ways(lambda logger, _: logger.info('%d items', 'not a number'))
    assert plain == usual == []
    errors = capsys.readouterr().err
    assert errors.count('--- Logging error ---') == 2 and errors.count('TypeError') >= 2


def test_an_extra_with_a_records_field_raises_either_way(configured: None) -> None:
    _configure()
    logger = loggers.ObjectLogger(body=BODY, settings=kopf.OperatorSettings())
    assert loggers.plain_route(logging.getLogger('kopf.objects'), logging.INFO) is not None
    with pytest.raises(KeyError):
        logger.info('x', extra={'message': 'overwritten'})


@pytest.mark.parametrize('configure', [
    {'log_format': kopf.LogFormat.JSON}, {'log_format': '%(process)d %(message)s'},
    {'log_format': '%(funcName)s %(message)s'}, {'log_format': '{message}'},
], ids=lambda c: repr(c))
def test_no_plain_route_where_a_record_would_be_seen(configured: None, configure: dict[str, Any]) -> None:
    try:
        _configure(**configure)
    except ValueError:
        return  # not a format at all
    assert loggers.plain_route(logging.getLogger('kopf.objects'), logging.INFO) is None


def test_no_plain_route_with_another_handler_or_a_filter_on_the_way(configured: None) -> None:
    _configure()
    objects = logging.getLogger('kopf.objects')
    assert loggers.plain_route(objects, logging.INFO) is not None
    other = logging.NullHandler()
    logging.getLogger('kopf').addHandler(other)
    try:
        assert loggers.plain_route(objects, logging.INFO) is None
    finally:
        logging.getLogger('kopf').removeHandler(other)
    objects.addFilter(lambda record: True)
    try:
        assert loggers.plain_route(objects, logging.INFO) is None
    finally:
        objects.filters.clear()
    factory = logging.getLogRecordFactory()
    logging.setLogRecordFactory(lambda *a, **kw: factory(*a, **kw))
    try:
        assert loggers.plain_route(objects, logging.INFO) is None
    finally:
        logging.setLogRecordFactory(factory)
    assert loggers.plain_route(objects, logging.INFO) is not None
    loggers.deconfigure()
    assert loggers.plain_route(objects, logging.INFO) is None


def _cycle_lines(logger: Any, cluster: Any) -> None:
    """A cycle's lines as `processing.emit` writes them: in a row, the plain route found once (`hold_routes`)."""
    from kopf._core.outcomes import LogEntry
    from kopf._engine import processing
    processing.emit([
        LogEntry(logging.INFO, "Handler 'fn' succeeded.", extra={'kopf_handler_id': 'fn'}),
        LogEntry(logging.INFO, 'Resuming is processed: 1 succeeded; 0 failed.'),
        LogEntry(logging.DEBUG, 'Not logged at INFO'),
        LogEntry(logging.WARNING, 'A warning', exc_info=ValueError('boom')),
        LogEntry(logging.ERROR, 'An error 100%'),
    ], logger)
    assert loggers._held is None  # released after the lines


@pytest.mark.parametrize('configure', [{}, {'log_prefix': True}, {'verbose': True}], ids=lambda c: repr(c))
def test_a_cycles_lines_in_a_row_are_written_as_one_by_one(configured: None, configure: dict[str, Any]) -> None:
    plain, usual = _both_ways(_cycle_lines, **configure)
    assert plain == usual
    assert len(plain) == (10 if configure.get('verbose') else 8)  # the lines and their flushes


def test_the_routes_are_held_once_and_released(configured: None) -> None:
    assert loggers.hold_routes()
    try:
        assert not loggers.hold_routes()  # held already: the outer holder releases them
    finally:
        loggers.release_routes()
    assert loggers._held is None
