"""The metrics object: a no-op when off; one registry per operator; the live counts read at scrape time;
the family the peering code will set; the whole output read back by prometheus_client's own parser."""
import sys
import types
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from kopf._core import handlers, records
from kopf._core.resources import Resource
from kopf._metrics import prometheus as metrics

KEX = Resource('kopf.dev', 'v1', 'kopfexamples')
PODS = Resource('', 'v1', 'pods')


def fake_ctx(**fields: Any) -> Any:
    return types.SimpleNamespace(**{'spawns': set(), 'indexing': None, **fields})


def samples(made: metrics.PrometheusMetrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of the whole output, as parsed by prometheus_client (so the output is valid as a whole)."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(made.exposition().decode()) for s in family.samples}


def value(found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str) -> float | None:
    return found.get((name, frozenset(labels.items())))


def test_off_is_a_no_op_of_every_hook() -> None:
    off = metrics.Metrics()
    assert not off.enabled
    off.handled(KEX, 'h', 'success', 0.1, retry=False)
    off.patched(KEX, 'sent')
    off.converged(KEX, 1.0)
    off.timer_fired(KEX, 0.01)
    off.requested('GET', '2xx', 0.01)
    off.watched('kopfexamples.kopf.dev', 'connected')
    off.observe({})
    off.shards(3)
    off.lease('kopf', True)


def test_the_hooks_count_by_bounded_labels() -> None:
    made = metrics.PrometheusMetrics(fake_ctx())
    made.handled(KEX, 'create_fn', 'success', 0.002, retry=False)
    made.handled(KEX, 'flaky', 'retry', 0.001, retry=False)
    made.handled(KEX, 'flaky', 'success', 0.001, retry=True)
    made.patched(KEX, 'sent')
    made.patched(KEX, 'skipped')
    made.converged(KEX, 0.2)
    made.converged(KEX, 40.0)
    made.timer_fired(PODS, -0.5)  # early (a sharp timer's rounding): counted as 0
    made.requested('PATCH', '2xx', 0.003)
    made.requested('PATCH', '409', 0.004)
    made.requested('WATCH', 'error', 0.5)
    made.watched('pods', 'connected')
    made.watched('pods', 'connected')
    made.watched('pods', 'expired')
    found = samples(made)
    kex = 'kopfexamples.kopf.dev'
    assert value(found, 'kopf_handler_calls_total', resource=kex, handler='flaky', outcome='retry') == 1
    assert value(found, 'kopf_handler_calls_total', resource=kex, handler='flaky', outcome='success') == 1
    assert value(found, 'kopf_handler_retries_total', resource=kex, handler='flaky') == 1
    assert value(found, 'kopf_handler_retries_total', resource=kex, handler='create_fn') is None
    assert value(found, 'kopf_handler_duration_seconds_count', resource=kex, handler='flaky') == 2
    assert value(found, 'kopf_patches_total', resource=kex, result='skipped') == 1
    assert value(found, 'kopf_convergence_lag_seconds_count', resource=kex) == 2
    assert value(found, 'kopf_convergence_lag_seconds_bucket', resource=kex, le='0.25') == 1
    assert value(found, 'kopf_convergence_lag_seconds_bucket', resource=kex, le='60.0') == 2
    assert value(found, 'kopf_timer_lateness_seconds_sum', resource='pods') == 0
    assert value(found, 'kopf_api_requests_total', verb='PATCH', code='409') == 1
    assert value(found, 'kopf_api_request_duration_seconds_count', verb='PATCH') == 2
    assert value(found, 'kopf_watch_connections_total', resource='pods') == 2
    assert value(found, 'kopf_watch_expired_total', resource='pods') == 1


def test_registries_are_per_operator() -> None:
    one, two = metrics.PrometheusMetrics(fake_ctx()), metrics.PrometheusMetrics(fake_ctx())
    one.patched(KEX, 'sent')
    assert value(samples(one), 'kopf_patches_total', resource='kopfexamples.kopf.dev', result='sent') == 1
    assert value(samples(two), 'kopf_patches_total', resource='kopfexamples.kopf.dev', result='sent') is None


def test_live_counts_are_read_at_scrape_time() -> None:
    def record(uid: str, phase: records.Phase) -> records.ObjectRecord:
        return records.ObjectRecord(uid=uid, memo=None, phase=phase)

    def spawn(handler_type: type, resource: Resource) -> Any:
        background = types.SimpleNamespace(rctx=types.SimpleNamespace(resource=resource))
        return types.SimpleNamespace(handler=handler_type.__new__(handler_type), background=background)

    index = {'key1': ['a'], 'key2': ['b', 'c']}
    ctx = fake_ctx(indexing=types.SimpleNamespace(indices={'by_label': index}))
    ctx.spawns = [spawn(handlers.DaemonHandler, KEX), spawn(handlers.TimerHandler, KEX),
                  spawn(handlers.TimerHandler, KEX)]
    made = metrics.PrometheusMetrics(ctx)
    phases = [records.Phase.QUEUED, records.Phase.QUEUED, records.Phase.RUNNING, records.Phase.WAITING,
              records.Phase.IDLE]
    rctx = types.SimpleNamespace(records={str(i): record(str(i), phase) for i, phase in enumerate(phases)})
    made.observe({KEX: rctx})
    found = samples(made)
    kex = 'kopfexamples.kopf.dev'
    assert value(found, 'kopf_objects', resource=kex) == 5
    assert value(found, 'kopf_queue_depth', resource=kex) == 2
    assert value(found, 'kopf_in_flight', resource=kex) == 1
    assert value(found, 'kopf_objects_waiting', resource=kex) == 1
    assert value(found, 'kopf_daemons_running', resource=kex) == 1
    assert value(found, 'kopf_timers_running', resource=kex) == 2
    assert value(found, 'kopf_index_keys', index='by_label') == 2
    rctx.records.clear()  # read anew at each scrape
    assert value(samples(made), 'kopf_objects', resource=kex) == 0


def test_paused_scopes_are_read_and_the_lease_family_is_exposed_for_the_lease_code_to_set() -> None:
    from kopf._engine import scopes
    ctx = fake_ctx(pausing=scopes.Pausing())
    made = metrics.PrometheusMetrics(ctx)
    assert value(samples(made), 'kopf_peering_shards_held') == 0
    ctx.pausing.pause('ns1', 'peering')
    ctx.pausing.pause(None, 'peering')
    ctx.pausing.pause('ns2', 'peering')
    ctx.pausing.resume('ns2', 'peering')
    made.shards(3)
    made.lease('kube-system/kopf', True)
    found = samples(made)
    assert value(found, 'kopf_peering_paused', scope='ns1') == 1
    assert value(found, 'kopf_peering_paused', scope='*') == 1
    assert value(found, 'kopf_peering_paused', scope='ns2') is None
    assert value(found, 'kopf_peering_shards_held') == 3
    assert value(found, 'kopf_peering_lease_held', lease='kube-system/kopf') == 1


def test_without_prometheus_client_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, 'prometheus_client', None)  # as if not installed
    with pytest.raises(metrics.MetricsError, match=r'pip install "kopf\[metrics\]"'):
        metrics.check('9090')


def test_a_bad_address_is_a_metrics_error() -> None:
    with pytest.raises(metrics.MetricsError, match="'nine'"):
        metrics.check('nine')
    assert metrics.check(None) is None
    assert metrics.check('0.0.0.0:9') == metrics.instruments.Address('0.0.0.0', 9)


def test_metrics_are_off_unless_asked() -> None:
    from kopf._core.settings import OperatorSettings
    ctx = fake_ctx(settings=OperatorSettings(), client=types.SimpleNamespace(observer=None),
                   metrics=metrics.Metrics())
    metrics.enable(ctx)
    assert not ctx.metrics.enabled and ctx.client.observer is None
    ctx.settings.metrics.enabled = True  # collected, served only on the liveness endpoint's server
    metrics.enable(ctx)
    assert ctx.metrics.enabled and ctx.metrics.address is None and ctx.client.observer is ctx.metrics


def test_the_docs_list_every_metric_and_no_other() -> None:
    import pathlib
    import re

    from kopf._engine import scopes
    made = metrics.PrometheusMetrics(fake_ctx(pausing=scopes.Pausing()))
    families = list(text_string_to_metric_families(made.exposition().decode()))
    exposed = {family.name + ('_total' if family.type == 'counter' else '') for family in families}
    page = (pathlib.Path(__file__).parent.parent.parent / 'docs' / 'metrics.md').read_text()
    documented = set(re.findall(r'^\| `(kopf_\w+)` \|', page, flags=re.MULTILINE))
    assert exposed == documented
    assert all(re.fullmatch(r'kopf_[a-z_]+', name) for name in exposed)  # the `kopf_` prefix, snake case
    assert all(family.name.endswith('_seconds') for family in families if family.type == 'histogram')  # base units
