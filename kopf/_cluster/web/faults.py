"""Injected faults (fail or delay the next N matching requests, or a seeded share of them), counters, a request log."""
import collections
import dataclasses
import fnmatch
import random
import re
from typing import Any

from kopf._cluster import jsoncodec, statuses

THROTTLED_TEXT = 'Too many requests, please try again later.\n'
REASONS = {400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
           410: 'Expired', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError',
           503: 'ServiceUnavailable', 504: 'Timeout'}
MESSAGES = {500: 'Internal error occurred: injected fault', 503: 'the server is currently unable to handle the request',
            504: 'the server was unable to return a response in the time allotted, '
                 'but may still be processing the request'}


@dataclasses.dataclass
class Rule:
    """Fail (status) and/or delay (latency) the next `count` requests matching method and path.

    `path` is a glob (`/api/v1/namespaces/*/pods*`) or, prefixed with `re:`, a regular expression
    searched in the path. `count=None` means every matching request, until cleared.
    `text=True` with 429 gives the plain-text throttling answer; otherwise a Status body.
    `drop=True` resets the connection instead of answering (a connection error for the client).
    `agent` is a glob of the client's User-Agent (kopf sends `kopf/<version> (<identity>)`), so that
    only one client's requests fail (e.g. one replica's lease requests).
    `ratio` (0..1): each matching request fails with this probability, drawn from a generator seeded by
    `seed` (the same sequence of draws in every run; concurrent clients may still meet them in another
    order); `count` then counts the matching requests considered, failed or not.
    """

    method: str = '*'
    path: str = '*'
    status: int | None = 500
    count: int | None = 1
    retry_after: int | None = None
    latency: float = 0.0
    text: bool = False
    message: str | None = None
    drop: bool = False
    agent: str = '*'
    ratio: float | None = None
    seed: int | None = None
    hits: int = 0
    passed: int = 0   # matching requests that the ratio let through
    _draws: random.Random | None = dataclasses.field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.ratio is not None and not 0 <= self.ratio <= 1:
            raise ValueError(f'ratio must be from 0 to 1, not {self.ratio!r}')
        self._draws = random.Random(self.seed) if self.ratio is not None else None

    def matches(self, method: str, path: str, agent: str = '', query: str = '') -> bool:
        if self.count is not None and self.count <= 0:
            return False
        if self.agent != '*' and not fnmatch.fnmatchcase(agent, self.agent):
            return False
        if self.method != '*' and self.method.upper() != method.upper():
            return False
        if self.path.startswith('re:'):   # the path, or the path with its query (e.g. `\\?.*continue=`)
            pattern = self.path[3:]
            return re.search(pattern, path) is not None or (bool(query) and
                                                            re.search(pattern, f'{path}?{query}') is not None)
        return fnmatch.fnmatchcase(path, self.path)

    def consume(self) -> bool:
        """Count a matching request against the rule; whether it fails (always, unless a ratio lets it pass)."""
        if self.count is not None:
            self.count -= 1
        if self._draws is not None and self.ratio is not None and self._draws.random() >= self.ratio:
            self.passed += 1
            return False
        self.hits += 1
        return True

    def response(self) -> tuple[int, dict[str, str], bytes]:
        """The status code, headers and body of the injected failure."""
        code = self.status or 500
        headers = {'Retry-After': str(self.retry_after)} if self.retry_after is not None else {}
        if self.text:
            headers['Content-Type'] = 'text/plain; charset=utf-8'
            return code, headers, (self.message or THROTTLED_TEXT).encode()
        details: dict[str, Any] = {}
        if self.retry_after is not None:
            details['retryAfterSeconds'] = self.retry_after
        message = self.message or MESSAGES.get(code, f'injected fault with HTTP {code}')
        error = statuses.ApiError(code, REASONS.get(code, 'Unknown'), message, details)
        headers['Content-Type'] = 'application/json'
        return code, headers, jsoncodec.dumps(error.status())


class Faults:
    """The rule list, per-verb counters, and a bounded log of requests seen."""

    def __init__(self, log_size: int = 2000) -> None:
        self.rules: list[Rule] = []
        self.counters: collections.Counter[tuple[str, str]] = collections.Counter()
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=log_size)

    def add(self, rule: Rule) -> Rule:
        self.rules.append(rule)
        return rule

    def clear(self) -> None:
        self.rules.clear()

    def find(self, method: str, path: str, agent: str = '', query: str = '') -> Rule | None:
        for rule in self.rules:
            if rule.matches(method, path, agent, query) and rule.consume():
                return rule
        return None

    def count(self, verb: str, kind: str) -> None:
        self.counters[(verb, kind)] += 1

    def snapshot(self) -> dict[str, int]:
        """Counters as `{"<verb> <path kind>": n}`, e.g. `"patch kopfexamples"`, `"get discovery"`."""
        return {f'{verb} {kind}': n for (verb, kind), n in sorted(self.counters.items())}
