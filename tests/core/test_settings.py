import concurrent.futures
import dataclasses
import logging
import pathlib
import re
import warnings
from typing import Any

import pytest

import kopf
from kopf._core import settings as settings_module


@pytest.mark.parametrize('path, default', [
    ('process.ultimate_exiting_timeout', 600.0),
    ('posting.enabled', True),
    ('posting.loggers', False),
    ('posting.level', logging.INFO),
    ('posting.reporting_component', 'kopf'),
    ('posting.reporting_instance', 'dev'),
    ('posting.event_name_prefix', 'kopf-event-'),
    ('posting.default_backoffs', (1, 1, 2, 3, 5, 8, 13, 21)),
    ('posting.logging_backoffs', (1, 1, 2, 3, 5)),
    ('posting.worker_limit', None),
    ('posting.idle_timeout', 1.0),
    ('peering.name', 'default'),
    ('peering.priority', 0),
    ('peering.lifetime', 60),
    ('peering.mandatory', False),
    ('peering.standalone', False),
    ('peering.stealth', False),
    ('peering.clusterwide', False),
    ('peering.namespaced', True),
    ('watching.server_timeout', None),
    ('watching.client_timeout', None),
    ('watching.connect_timeout', None),
    ('watching.reconnect_backoff', 0.1),
    ('watching.inactivity_timeout', 70.0),
    ('watching.chunk_size', 500),
    ('watching.initial_streaming', False),
    ('watching.label_selectors', {}),
    ('watching.field_selectors', {}),
    ('watching.shard_selectors', {}),
    ('queueing.worker_limit', None),
    ('queueing.idle_timeout', 5.0),
    ('queueing.exit_timeout', 2.0),
    ('queueing.error_delays', (1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610)),
    ('scanning.disabled', False),
    ('admission.server', None),
    ('admission.managed', None),
    ('execution.default_backoff', 60),
    ('execution.max_workers', None),
    ('networking.request_timeout', 300),
    ('networking.connect_timeout', None),
    ('networking.error_backoffs', (1, 1, 2, 3, 5, 8, 13, 21)),
    ('networking.enforce_retry_after', False),
    ('networking.trust_env', False),
    ('persistence.finalizer', 'kopf.zalando.org/KopfFinalizerMarker'),
    ('persistence.consistency_timeout', 5.0),
    ('background.cancellation_polling', 60),
    ('background.instant_exit_timeout', None),
    ('background.instant_exit_zero_time_cycles', 10),
])
def test_defaults(path: str, default: Any) -> None:
    value: Any = kopf.OperatorSettings()
    for part in path.split('.'):
        value = getattr(value, part)
    assert value == default


def test_default_storages_and_executor() -> None:
    s = kopf.OperatorSettings()
    assert isinstance(s.persistence.progress_storage, kopf.SmartProgressStorage)
    assert isinstance(s.persistence.diffbase_storage, kopf.AnnotationsDiffBaseStorage)
    assert isinstance(s.execution.executor, concurrent.futures.ThreadPoolExecutor)
    assert s.execution.executor is not kopf.OperatorSettings().execution.executor  # one per operator


def test_old_names() -> None:
    assert kopf.OperatorConfig is kopf.OperatorSettings
    assert settings_module.BatchingSettings is settings_module.QueueingSettings


def test_batching_is_queueing_with_a_deprecation_warning() -> None:
    s = kopf.OperatorSettings()
    with pytest.warns(DeprecationWarning, match='queueing'):
        batching = s.batching
    assert batching is s.queueing
    with pytest.warns(DeprecationWarning):
        s.batching.worker_limit = 3
    assert s.queueing.worker_limit == 3


def test_batch_window_is_a_deprecated_no_op() -> None:
    s = kopf.OperatorSettings()
    with pytest.warns(DeprecationWarning):
        assert s.queueing.batch_window == 0.1
    with pytest.warns(DeprecationWarning):
        s.queueing.batch_window = 5
    with pytest.warns(DeprecationWarning):
        assert s.queueing.batch_window == 0.1


def test_max_workers_resizes_the_executor() -> None:
    s = kopf.OperatorSettings()
    s.execution.max_workers = 3
    assert s.execution.max_workers == 3
    assert s.execution.executor._max_workers == 3  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        s.execution.max_workers = 0


def test_max_workers_on_an_unsupported_executor() -> None:
    class Custom(concurrent.futures.Executor):
        pass

    s = kopf.OperatorSettings()
    s.execution.executor = Custom()
    with pytest.raises(TypeError):
        s.execution.max_workers = 2


def test_namespaced_is_the_inverse_of_clusterwide() -> None:
    s = kopf.OperatorSettings()
    s.peering.namespaced = False
    assert s.peering.clusterwide is True
    s.peering.clusterwide = False
    assert s.peering.namespaced is True


def test_no_warnings_for_the_new_names() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        s = kopf.OperatorSettings()
        s.queueing.worker_limit = 1
        s.watching.label_selectors['pods'] = 'app=x'
        s.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix='my-op.example.com')
        s.persistence.diffbase_storage = kopf.StatusDiffBaseStorage(field='status.my-op-base')


def test_sections_are_independent_between_instances() -> None:
    a, b = kopf.OperatorSettings(), kopf.OperatorSettings()
    a.watching.label_selectors['pods'] = 'x'
    a.posting.enabled = False
    assert b.watching.label_selectors == {} and b.posting.enabled is True


def _fields_of_the_settings(section: Any = None, prefix: str = '') -> dict[str, Any]:
    """Every field with its default, as `section.field`; nested sections flattened: `peering.lease.name`."""
    section = kopf.OperatorSettings() if section is None else section
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(section):
        value = getattr(section, field.name)
        if dataclasses.is_dataclass(value):
            fields.update(_fields_of_the_settings(value, f'{prefix}{field.name.lstrip("_")}.'))
        else:
            fields[f'{prefix}{field.name.lstrip("_")}'] = value
    return fields


def test_every_field_is_in_the_docs_table() -> None:
    """docs/settings.md maps every field to the test proving its effect, or says why it has none."""
    root = pathlib.Path(__file__).parent.parent.parent
    sections = {field.name for field in dataclasses.fields(kopf.OperatorSettings())}
    rows, defaults = {}, {}
    for line in (root / 'docs' / 'settings.md').read_text().splitlines():
        match = re.match(r'\| `([a-z_]+)\.([a-z_.]+)` \| ([^|]*) \|.*\| ([^|]+) \|$', line)
        if match and match.group(1) in sections:
            rows[f'{match.group(1)}.{match.group(2)}'] = match.group(4).strip()
            defaults[f'{match.group(1)}.{match.group(2)}'] = match.group(3).strip()
    fields = _fields_of_the_settings()
    missing = [name for name in fields if name not in rows]
    assert not missing, f'docs/settings.md has no row for: {missing}'
    peering = {name for name in rows if name.startswith('peering.')}  # a row per field, with its default
    assert peering == {name for name in fields if name.startswith('peering.')}
    for name in peering & set(fields):
        assert defaults[name].strip('`') == str(fields[name]), f'{name}: the documented default is not the default'
    for name, proof in rows.items():
        refs = re.findall(r'`(tests/[^`:]+)::(test_\w+)`', proof)
        assert refs or proof.startswith(('no effect', 'no separate effect')), f'{name}: no test named: {proof}'
        for path, test in refs:
            text = (root / path).read_text()
            assert re.search(rf'^(async )?def {test}\(', text, re.MULTILINE), f'{name}: {path}::{test} does not exist'
