"""The control operations, in one table: injected faults, access rules, watch and history control, observation.

Each operation is one function over the emulator's parts (a `Controlled`), declared once in `Controls`.
The same declaration serves:

- the Python methods of `Emulator` and of `LocalCluster` (both are `Controls`; each says how a call runs:
  directly, or in the server's event loop thread), with the functions' own signatures and docstrings;
- the HTTP control API under `/_emulator/` (`control.serve`: an operation's `Route`, if it has one, says
  the method, the path, how the JSON body becomes arguments, and how the result becomes the answer);
- the list of those HTTP routes in `kopf cluster --help` (`routes_help()`).
"""
import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from kopf._cluster import statuses
from kopf._cluster.controllers.workloads import Workloads
from kopf._cluster.pipeline.state import State
from kopf._cluster.store.fanout import Hub
from kopf._cluster.web import faults
from kopf._cluster.web.accessrules import Access, Denial
from kopf._cluster.web.faults import Faults, Rule

P = ParamSpec('P')
R = TypeVar('R')
Body = Mapping[str, Any]
OK = (200, {'ok': True})


class Controlled(Protocol):
    """What control operations act on (the `Emulator` is one)."""

    state: State
    hub: Hub
    faults: Faults
    access: Access
    workloads: Workloads | None

    def rewrite_kubeconfig(self) -> None: ...


class BadBody(ValueError):
    """A control request's JSON body does not fit the operation (a 400 with this message)."""


@dataclasses.dataclass(frozen=True)
class Route:
    """How an operation is reached under `/_emulator/`: `args` turns the JSON body into keyword arguments."""

    methods: tuple[str, ...]
    path: str
    body: str = ''                                           # the body's shape, for the help text
    args: Callable[[Body], dict[str, Any]] = lambda body: {}
    answer: Callable[[Any], tuple[int, Any]] = lambda result: OK


class Operation(Generic[P, R]):
    """A control operation: a method of every `Controls` class, optionally with an HTTP route."""

    def __init__(self, fn: Callable[Concatenate[Controlled, P], R], route: Route | None = None) -> None:
        self.fn = fn
        self.route = route
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> 'Operation[P, R]': ...

    @overload
    def __get__(self, obj: 'Controls', owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: 'Controls | None', owner: type | None = None) -> 'Operation[P, R] | Callable[P, R]':
        if obj is None:
            return self
        fn = self.fn

        @functools.wraps(fn)
        def bound(*args: P.args, **kwargs: P.kwargs) -> R:
            return obj.run_control(fn, *args, **kwargs)

        return bound


# -- faults ---------------------------------------------------------------------------------------

def fail(emu: Controlled, method: str = '*', path: str = '*', status: int | None = 500, *, count: int | None = 1,
         retry_after: int | None = None, text: bool = False, message: str | None = None,
         latency: float = 0.0, drop: bool = False, agent: str = '*', ratio: float | None = None,
         seed: int | None = None) -> Rule:
    """Fail the next `count` requests matching method and path (glob, or `re:` regex) with `status`.

    A `re:` regex that does not match the path is tried on the path with its query too
    (`re:/kopfexamples\\?.*continue=`: the list requests of a paged listing but its first).

    `agent`: a glob of the User-Agent of the requests to fail (`'*'`: any client).
    `status=None` only delays them (by `latency` seconds); `drop=True` resets their connections instead
    of answering; `count=None` applies to every matching request until `clear_faults()`.
    `ratio`: fail each matching request with this probability (0..1), reproducibly with a `seed`; with a
    ratio, the rule holds for every matching request until cleared, unless a `count` other than 1 is given
    (then: that many matching requests are considered, failed or not).
    """
    if ratio is not None and count == 1:
        count = None
    return emu.faults.add(Rule(method=method, path=path, status=None if drop else status, count=count,
                               retry_after=retry_after, text=text, message=message, latency=latency, drop=drop,
                               agent=agent, ratio=ratio, seed=seed))


def drop(emu: Controlled, method: str = '*', path: str = '*', *, count: int | None = 1,
         ratio: float | None = None, seed: int | None = None) -> Rule:
    """Reset the connection of the next `count` matching requests without any answer (a connection error)."""
    return fail(emu, method, path, None, count=count, drop=True, ratio=ratio, seed=seed)


def throttle(emu: Controlled, method: str = '*', path: str = '*', *, count: int | None = 1,
             retry_after: int = 1, ratio: float | None = None, seed: int | None = None) -> Rule:
    """The plain-text 429 with `Retry-After` that real servers send under max-in-flight throttling."""
    return fail(emu, method, path, 429, count=count, retry_after=retry_after, text=True, ratio=ratio, seed=seed)


def delay(emu: Controlled, method: str = '*', path: str = '*', seconds: float = 1.0, *,
          count: int | None = 1, ratio: float | None = None, seed: int | None = None) -> Rule:
    """Answer the next `count` matching requests `seconds` later (cut with a 504 at the request's deadline)."""
    return fail(emu, method, path, None, count=count, latency=seconds, ratio=ratio, seed=seed)


def clear_faults(emu: Controlled) -> None:
    """Remove all injected faults (those not used up yet)."""
    emu.faults.clear()


def _fault_args(body: Body) -> dict[str, Any]:
    return {'method': arg(body, 'method', str, '*'), 'path': arg(body, 'path', str, '*'),
            'status': arg(body, 'status', int, 500, low=100, high=599, nullable=True),
            'count': arg(body, 'count', int, 1, low=1, nullable=True),
            'retry_after': arg(body, 'retryAfter', int, None, low=0, nullable=True),
            'text': arg(body, 'text', bool, False), 'message': arg(body, 'message', str, None, nullable=True),
            'latency': arg(body, 'latency', float, 0.0, low=0), 'drop': arg(body, 'drop', bool, False),
            'agent': arg(body, 'agent', str, '*'),
            'ratio': arg(body, 'ratio', float, None, low=0, high=1, nullable=True),
            'seed': arg(body, 'seed', int, None, nullable=True)}


_TYPE_NAMES = {str: 'a string', int: 'an integer', float: 'a number', bool: 'true or false'}


def arg(body: Body, key: str, kind: type, default: Any, *, low: float | None = None, high: float | None = None,
        nullable: bool = False, required: bool = False) -> Any:
    """One field of a control request's JSON body, checked: a `BadBody` (400) names the field and what it must be."""
    if key not in body:
        if required:
            raise BadBody(f'"{key}" is required')
        return default
    value = body[key]
    if value is None and nullable:
        return None
    number = kind in (int, float) and isinstance(value, int | float) and not isinstance(value, bool)
    fits = number and (kind is float or float(value).is_integer()) if kind in (int, float) else \
        isinstance(value, kind)
    bounded = fits and (low is None or value >= low) and (high is None or value <= high)
    if not bounded:
        limits = f' from {low}' if low is not None else ''
        limits += f' to {high}' if high is not None else ''
        raise BadBody(f'"{key}" must be {_TYPE_NAMES[kind]}{limits}{" or null" if nullable else ""}, '
                      f'not {value!r}'[:300])
    return kind(value)


# -- access ---------------------------------------------------------------------------------------

def forbid(emu: Controlled, verb: str = '*', resource: str = '*', *, group: str = '*', namespace: str | None = None,
           user: str = '*') -> Denial:
    """Deny matching requests with the exact 403 of a real server (until `allow_all()`)."""
    denial = Denial(verb=verb, resource=resource, group=group, namespace=namespace, user=user)
    emu.access.denials.append(denial)
    return denial


def allow_all(emu: Controlled) -> None:
    """Remove all `forbid()` rules."""
    emu.access.denials.clear()


def rotate_token(emu: Controlled, old: str, new: str | None) -> None:
    """Replace a bearer token by a new one of the same user (`new=None` revokes it): the old one gets 401.

    Open watches are not cut (a real server authenticates a request only when it starts).
    The kubeconfig written last is rewritten, so that a re-login from it finds the new token.
    """
    emu.access.rotate(old, new)
    emu.rewrite_kubeconfig()


def _token_args(body: Body) -> dict[str, Any]:
    new = body.get('new')
    if not isinstance(body.get('old'), str) or not (new is None or isinstance(new, str)):
        raise BadBody('expected {"old": "<token>", "new": "<token>" or null}')
    return {'old': body['old'], 'new': new}


# -- watches and history --------------------------------------------------------------------------

def close_watches(emu: Controlled, abort: bool = False) -> int:
    """End all watch streams: cleanly (the chunked body ends), or by resetting their connections."""
    return emu.hub.close_all(abort=abort)


def fail_watches(emu: Controlled, code: int = 410) -> int:
    """Send an ERROR event with a Status of `code` (410 Expired, 500 InternalError) to all watches and end them."""
    if code == 410:
        status = statuses.expired(f'too old resource version: 1 ({emu.state.store.rv})').status()
    else:
        status = statuses.ApiError(code, faults.REASONS.get(code, 'InternalError'),
                                   faults.MESSAGES.get(code, f'injected watch error {code}'), {}).status()
    status.pop('details', None)
    return emu.hub.error_all(status)


def compact_history(emu: Controlled, keep: int = 0) -> None:
    """Forget all but the last `keep` changes: watches from older resourceVersions get 410 Expired."""
    emu.state.store.compact(keep)


def set_bookmark_interval(emu: Controlled, seconds: float) -> None:
    """Send BOOKMARK events (to watches that allow them) every `seconds` from now on."""
    emu.hub.set_bookmark_interval(seconds)


# -- observation ----------------------------------------------------------------------------------

def counters(emu: Controlled) -> dict[str, int]:
    """Requests per verb and resource: `{"patch kopfexamples": 3, "get discovery": 1, ...}`."""
    return emu.faults.snapshot()


def reset_counters(emu: Controlled) -> None:
    """Start the per-verb request counters from zero."""
    emu.faults.counters.clear()


def event_log(emu: Controlled) -> list[tuple[str, str, str]]:
    """(uid, resourceVersion, type) of every persisted change, oldest first."""
    return list(emu.state.store.log)


def request_log(emu: Controlled) -> list[dict[str, Any]]:
    """The recent requests: method, path, query, content type, status code."""
    return list(emu.faults.requests)


# -- workloads ------------------------------------------------------------------------------------

def _workloads(emu: Controlled) -> Workloads:
    if emu.workloads is None:
        raise ValueError('the workload controllers are off in this local cluster (workloads=False)')
    return emu.workloads


def advance_clock(emu: Controlled, seconds: float) -> float:
    """Move the workload controllers' clock forward by `seconds` (start delays, back-offs, deadlines); its offset."""
    workloads = _workloads(emu)
    workloads.advance(seconds)
    return workloads.clock.offset


def set_node_ready(emu: Controlled, name: str = 'kopf-local-node', ready: bool = True) -> None:
    """Mark a fake node Ready or NotReady: the Pods on a NotReady node become unready, new ones are not bound."""
    _workloads(emu).set_node_ready(name, ready)


def set_workloads(emu: Controlled, *, start_delay: float | None = None, run_seconds: float | None = None,
                  failing_images: list[str] | None = None, crashing_images: list[str] | None = None) -> None:
    """How simulated Pods behave from now on: seconds until containers run, Job pods' run time, image globs
    whose pulls fail (ErrImagePull, ImagePullBackOff) or whose containers crash (CrashLoopBackOff)."""
    workloads = _workloads(emu)
    knobs = workloads.knobs
    if start_delay is not None:
        knobs.start_delay = start_delay
    if run_seconds is not None:
        knobs.run_seconds = run_seconds
    if failing_images is not None:
        knobs.failing_images = list(failing_images)
    if crashing_images is not None:
        knobs.crashing_images = list(crashing_images)
    workloads.touch_all_pods()


def _globs(body: Body, key: str) -> list[str] | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise BadBody(f'"{key}" must be a list of strings (image globs)')
    return value


def _workloads_args(body: Body) -> dict[str, Any]:
    return {'start_delay': arg(body, 'startDelay', float, None, low=0, nullable=True),
            'run_seconds': arg(body, 'runSeconds', float, None, low=0, nullable=True),
            'failing_images': _globs(body, 'failingImages'), 'crashing_images': _globs(body, 'crashingImages')}


def _answer(key: str) -> Callable[[Any], tuple[int, Any]]:
    return lambda result: (200, {key: result})


def _as_is(result: Any) -> tuple[int, Any]:
    return 200, result


class Controls:
    """The table: every control operation, as a method of the emulator and of `LocalCluster`."""

    fail = Operation(fail, Route(('POST',), '/faults', '{"method", "path", "status", "count", "retryAfter", '
                                                       '"text", "message", "latency", "drop", "agent", "ratio", '
                                                       '"seed"}',
                                 _fault_args, lambda rule: (201, {'ok': True})))
    drop = Operation(drop)
    throttle = Operation(throttle)
    delay = Operation(delay)
    clear_faults = Operation(clear_faults, Route(('DELETE',), '/faults'))
    forbid = Operation(forbid)
    allow_all = Operation(allow_all)
    rotate_token = Operation(rotate_token, Route(('POST',), '/tokens', '{"old": "t1", "new": "t2"}', _token_args))
    close_watches = Operation(close_watches, Route(('POST',), '/watches/close', '{"abort": false}',
                                                   lambda body: {'abort': arg(body, 'abort', bool, False)},
                                                   _answer('closed')))
    fail_watches = Operation(fail_watches, Route(('POST',), '/watches/fail', '{"code": 410}',
                                                 lambda body: {'code': arg(body, 'code', int, 410, low=400, high=599)},
                                                 _answer('failed')))
    compact_history = Operation(compact_history, Route(('POST',), '/history/compact', '{"keep": 0}',
                                                       lambda body: {'keep': arg(body, 'keep', int, 0, low=0)}))
    set_bookmark_interval = Operation(set_bookmark_interval,
                                      Route(('PUT', 'POST'), '/bookmark-interval', '{"seconds": 0.5}',
                                            lambda body: {'seconds': arg(body, 'seconds', float, None, low=0.001,
                                                                         required=True)}))
    counters = Operation(counters, Route(('GET',), '/counters', answer=_as_is))
    reset_counters = Operation(reset_counters, Route(('DELETE',), '/counters'))
    event_log = Operation(event_log, Route(('GET',), '/events',
                                           answer=lambda log: (200, [list(entry) for entry in log])))
    request_log = Operation(request_log, Route(('GET',), '/requests', answer=_as_is))
    advance_clock = Operation(advance_clock, Route(('POST',), '/clock/advance', '{"seconds": 30}',
                                                   lambda body: {'seconds': arg(body, 'seconds', float, None, low=0,
                                                                                required=True)},
                                                   _answer('offset')))
    set_node_ready = Operation(set_node_ready, Route(('POST',), '/nodes/ready', '{"name": "kopf-local-node", '
                                                                              '"ready": false}',
                                                     lambda body: {'name': arg(body, 'name', str, 'kopf-local-node'),
                                                                   'ready': arg(body, 'ready', bool, True)}))
    set_workloads = Operation(set_workloads, Route(('PUT', 'POST'), '/workloads', '{"startDelay", "runSeconds", '
                                                                                 '"failingImages", "crashingImages"}',
                                                   _workloads_args))

    def run_control(self, fn: Callable[Concatenate[Controlled, P], R], *args: P.args, **kwargs: P.kwargs) -> R:
        """Run one operation's function on the emulator (each `Controls` class says how)."""
        raise NotImplementedError


def operations() -> list[Operation[Any, Any]]:
    return [value for value in vars(Controls).values() if isinstance(value, Operation)]


def find(method: str, path: str) -> Operation[Any, Any] | None:
    """The operation with an HTTP route of this method and path (under `/_emulator`), if any."""
    for operation in operations():
        if operation.route is not None and path == operation.route.path and method in operation.route.methods:
            return operation
    return None


def routes_help() -> list[tuple[str, str]]:
    """(route, what it does) per HTTP route: `('POST /_emulator/watches/close', '{"abort": false} End all ...')`."""
    rows = []
    for operation in operations():
        if operation.route is not None:
            route = operation.route
            summary = (operation.__doc__ or operation.name.replace('_', ' ')).splitlines()[0]
            rows.append((f'{"|".join(route.methods)} /_emulator{route.path}', f'{route.body} {summary}'.lstrip()))
    return rows
