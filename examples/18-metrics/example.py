"""Prometheus metrics: what the operator did, and how far behind it is (docs/metrics.md).

Run it with the metrics served on localhost:9090 (`pip install "kopf[metrics]"`):

    kopf run -A --local-cluster --apply examples/crd.yaml --apply examples/obj.yaml \\
        --metrics 9090 examples/18-metrics/example.py
    curl -s localhost:9090/metrics | grep -E '^kopf_(handler_calls|convergence_lag_seconds_count)'

`kopf_handler_calls_total` counts the handlers' attempts by top-level handler id and outcome (the
`flaky` handler fails once per object, so it shows a `retry` and then a `success`);
`kopf_convergence_lag_seconds` is the time from an object's new version seen to its handling done,
the retry's back-off included. In a pod, serve on all addresses (`--metrics 0.0.0.0:9090`) for
Prometheus to scrape it. A startup handler may turn them on instead: `settings.metrics.endpoint`.
"""
import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.execution.default_backoff = 0.5  # the retry of `flaky` comes soon


@kopf.on.create('kopfexamples')
def create_fn(spec, **_):
    return {'field': spec.get('field')}


@kopf.on.create('kopfexamples')
def flaky(retry, **_):
    if retry == 0:
        raise kopf.TemporaryError('Not yet: once more in a moment.', delay=0.5)
    return {'attempts': retry + 1}


@kopf.on.update('kopfexamples', field='spec.field')
def field_changed(old, new, **_):
    return {'from': old, 'to': new}
