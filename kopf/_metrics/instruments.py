"""Pure parts of the metrics: the `[HOST:]PORT` address of the endpoint, the labels' bounds, the buckets.

Labels are bounded by construction: resources, top-level handler ids (never sub-handler ids, which
come from user data), HTTP verbs and codes, outcome kinds; never object names or bodies.
"""
import dataclasses
from collections.abc import Mapping
from typing import Any

from kopf._core import resources

DEFAULT_HOST = 'localhost'  # not reachable from outside unless an address is given (`0.0.0.0:PORT` in a pod)

# Seconds: handler durations and API latencies (sub-millisecond to a minute).
DURATION_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
# Seconds: the convergence lag (from an event seen to its handling complete: retries and delays included).
LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)
# Seconds: how late a timer fired after its due time.
LATENESS_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class AddressError(ValueError):
    """A metrics address that is not `[HOST:]PORT`."""


@dataclasses.dataclass(frozen=True)
class Address:
    host: str
    port: int

    @classmethod
    def parse(cls, text: str | int) -> 'Address':
        """`9090`, `:9090` → localhost:9090; `0.0.0.0:9090`; `[::1]:9090`; port 0 picks a free one."""
        raw = str(text).strip()
        host, sep, port = raw.rpartition(':')
        if not sep:
            host, port = '', raw
        bracketed = host.startswith('[') and host.endswith(']')
        host = host[1:-1] if bracketed else host
        if (':' in host and not bracketed) or not port.isdigit() or int(port) > 65535:
            raise AddressError(f'The metrics address must be [HOST:]PORT (e.g. 9090 or 0.0.0.0:9090): {text!r}')
        return cls(host=host or DEFAULT_HOST, port=int(port))


class Metrics:
    """Metrics off: every hook does nothing."""

    enabled = False
    address: Address | None = None

    def handled(self, resource: resources.Resource, handler: str, outcome: str, seconds: float, *, retry: bool) -> None:
        """A top-level handler's attempt ended with this outcome (`success`, `retry`, `failure`, `timeout`)."""

    def patched(self, resource: resources.Resource, result: str) -> None:
        """A cycle's patch was `sent`, `skipped` (nothing to write) or `refused` (over the annotations' budget)."""

    def converged(self, resource: resources.Resource, lag: float) -> None:
        """An object's handling is complete, `lag` seconds after its first unhandled event arrived."""

    def timer_fired(self, resource: resources.Resource, lateness: float) -> None:
        """A timer's call began `lateness` seconds after its due time."""

    def requested(self, verb: str, code: str, seconds: float) -> None:
        """An API request's attempt (the API client's observer): `WATCH` for opening a stream."""

    def watched(self, resource: str, what: str) -> None:
        """A watch stream was `connected` (first or again), or `expired` (a 410: re-listing)."""

    def observe(self, served: Mapping[resources.Resource, Any]) -> None:
        """The resources served (their contexts: records by uid), read at scrape time."""

    # -- set by the Lease leader election (`kopf._leases.holding`) and the shards (`kopf._shards.membership`) --

    def shards(self, held: int) -> None:
        """How many shards this replica holds."""

    def lease(self, name: str, held: bool) -> None:
        """Whether this replica holds the named Lease."""
