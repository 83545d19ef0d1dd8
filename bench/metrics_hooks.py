"""The cost of the metrics hooks per call, off (the no-op) and on (prometheus_client), in-process.

    .venv/bin/python bench/metrics_hooks.py

A create→delete lifecycle (create/delete handlers, as bench/operator.py's) calls ~12 hooks (counted from
/metrics over 100 lifecycles: 4 API requests, 2 handler attempts, 3 patches, 2.8 convergences):
multiply, and compare with its CPU per lifecycle
(`bench/run.py --metrics both`, whose own figures are within the host's noise). Printed, never asserted.
"""
import timeit
import types

from kopf._core.resources import Resource
from kopf._metrics import prometheus as metrics

RESOURCE = Resource('kopf.dev', 'v1', 'kopfbenches')
CALLS = 100_000


def cycle(m: metrics.Metrics) -> None:
    """Five hooks, as one cycle calls them: a handler, its patch, two API requests, the convergence."""
    m.handled(RESOURCE, 'create_fn', 'success', 0.001, retry=False)
    m.patched(RESOURCE, 'sent')
    m.requested('PATCH', '2xx', 0.002)
    m.requested('PATCH', '2xx', 0.002)
    m.converged(RESOURCE, 0.05)


def main() -> None:
    ctx = types.SimpleNamespace(spawns=set(), indexing=None)
    for name, made in (('off', metrics.Metrics()), ('on', metrics.PrometheusMetrics(ctx))):
        seconds = min(timeit.repeat(lambda m=made: cycle(m), number=CALLS, repeat=5))  # type: ignore[misc]
        per_hook = seconds / CALLS / 5 * 1e6
        print(f'metrics {name:3}: {per_hook:.2f} us per hook; ~12 hooks per lifecycle: {per_hook * 12:.0f} us')


if __name__ == '__main__':
    main()
