"""Discovery: which resources the cluster serves (all groups), cached; selectors resolved against them.

Rules:
- `/api` and `/apis` list the group-versions; each group-version lists its resources; entries named
  `plural/sub` become the `subresources` of `plural` and are not resources themselves.
- A group-version answering 404 is empty (the last CRD of a group was deleted meanwhile).
- An API group-version `/apis/<group>/<version>` answering 5xx (an aggregated API whose extension
  server is down, e.g. a broken metrics-server answering 503) is skipped as kubectl does: not retried,
  one warning naming it (until it answers again), its resources simply not found this time; `failing`
  names such group-versions until a rescan finds them answering (`take_recovered()` then names them
  once), or their group stops listing them. Transport errors and 429s are retried as usual; so is everything of the
  core group (`/api/<version>`: the API server's own) and of the group lists `/api`, `/apis`.
- `preferred` marks the group's preferred version; selectors without a version match only those.
- The cache is refreshed when asked (e.g. when a CRD appears) or when a selector finds nothing.
- A selector naming its group (and not a callable) needs only that group: before (or without) a full
  scan, `select()` reads just `/apis/<group>` and its versions (core: `/api`, `/api/<version>`), in
  one round trip when the version is given; a full scan serves all groups from then on. If the
  group's list (`/apis/<group>`) fails or is not found but the selector's group-version answers
  (seen on proxies and minimal API servers), that group-version's resources are served.
- CRD schemas (`openAPIV3Schema` of the served version) are fetched on demand and cached.
"""
import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from kopf._api import apierrors
from kopf._api import client as client_
from kopf._core import resources, selectors

logger = logging.getLogger('kopf._api.discovery')

CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'


def parse_resource_list(payload: Mapping[str, Any], group: str, version: str, *, preferred: bool,
                        ) -> list[resources.Resource]:
    """The resources of one APIResourceList (pure)."""
    entries = [entry for entry in payload.get('resources') or [] if isinstance(entry, Mapping)]
    subresources: dict[str, set[str]] = {}
    for entry in entries:
        plural, _, sub = str(entry.get('name', '')).partition('/')
        if sub:
            subresources.setdefault(plural, set()).add(sub)
    return [
        resources.Resource(
            group=group, version=version, plural=entry['name'],
            kind=entry.get('kind'),
            singular=entry.get('singularName') or str(entry.get('kind', '')).lower() or None,
            shortcuts=frozenset(entry.get('shortNames') or ()),
            categories=frozenset(entry.get('categories') or ()),
            subresources=frozenset(subresources.get(entry['name'], ())),
            namespaced=bool(entry.get('namespaced')),
            preferred=preferred,
            verbs=frozenset(entry.get('verbs') or ()),
        )
        for entry in entries if '/' not in str(entry.get('name', '/'))
    ]


class Discovery:
    """The cluster's resources as last scanned; `select()` resolves handler selectors to them."""

    def __init__(self, client: client_.APIClient) -> None:
        self._client = client
        self._resources: list[resources.Resource] | None = None
        self._groups: dict[str, list[resources.Resource]] = {}  # scanned one by one, until a full scan
        self._schemas: dict[resources.Resource, Mapping[str, Any] | None] = {}
        self._failing: set[tuple[str, str]] = set()  # (group, version) skipped (and warned about) while failing
        self._recovered: list[tuple[str, str]] = []  # (group, version) answering again, until taken
        self._lock = asyncio.Lock()

    @property
    def failing(self) -> frozenset[tuple[str, str]]:
        """The (group, version) pairs skipped by the latest scans because they answered 5xx."""
        return frozenset(self._failing)

    def take_recovered(self) -> list[tuple[str, str]]:
        """The (group, version) pairs that answer again after being skipped; each is named once."""
        recovered, self._recovered = self._recovered, []
        return recovered

    async def scan(self, *, refresh: bool = False) -> list[resources.Resource]:
        """All served resources of all groups and versions (cached unless `refresh`)."""
        async with self._lock:
            if self._resources is None or refresh:
                self._resources = await self._scan()
                self._groups.clear()
                self._schemas.clear()
            return self._resources

    async def scan_group(self, group: str, version: str | None = None, *,
                         refresh: bool = False) -> list[resources.Resource]:
        """The served resources of one group ('' is the core group), all its versions; cached.

        With the version known, its resource list is read along with the group's version list (whose
        preferred version marks `preferred`), so one round trip does. A group not served is empty.
        """
        async with self._lock:
            if refresh or (self._resources is None and group not in self._groups):
                fresh = await self._scan_group(group, version)
                self._schemas = {r: schema for r, schema in self._schemas.items() if r.group != group}
                if self._resources is None:
                    self._groups[group] = fresh
                else:  # keep the full scan whole: only this group's part is replaced
                    self._resources = [r for r in self._resources if r.group != group] + fresh
            if self._resources is not None:
                return [resource for resource in self._resources if resource.group == group]
            return self._groups[group]

    async def _scan_group(self, group: str, version: str | None) -> list[resources.Resource]:
        path = f'/apis/{group}' if group else '/api'
        guessed = [self._get_group_version(group, version)] if version else []
        answers = await asyncio.gather(self._client.request('GET', path), *guessed, return_exceptions=True)
        if version and isinstance(answers[0], apierrors.APIError) and isinstance(answers[1], Mapping) and answers[1]:
            # Proxies and minimal API servers: the group does not answer, its group-version does.
            return parse_resource_list(answers[1], group, version, preferred=True)
        for answer in answers:
            if isinstance(answer, BaseException) and not isinstance(answer, apierrors.APINotFoundError):
                raise answer
        listing, *lists = answers
        if isinstance(listing, BaseException):
            self._failing = {gv for gv in self._failing if gv[0] != group}
            return []  # the group is not served (yet)
        lists = [answer if isinstance(answer, Mapping) else None for answer in lists]  # None: 404
        if group:
            preferred = (listing.get('preferredVersion') or {}).get('version')
            versions = [item['version'] for item in listing.get('versions', [])]
        else:
            preferred = 'v1'
            versions = list(listing.get('versions', []))
        self._failing = {gv for gv in self._failing if gv[0] != group or gv[1] in versions}  # gone: forgotten
        found: list[resources.Resource] = []
        if version is not None and version in versions and lists and lists[0] is not None:
            found = parse_resource_list(lists[0], group, version, preferred=version == preferred)
            versions.remove(version)
        chunks = await asyncio.gather(*[self._scan_group_version(group, other, other == preferred)
                                        for other in versions])
        return found + [resource for chunk in chunks for resource in chunk]

    async def _scan(self) -> list[resources.Resource]:
        core, groups = await asyncio.gather(self._client.request('GET', '/api'), self._client.request('GET', '/apis'))
        jobs: list[tuple[str, str, bool]] = [('', version, version == 'v1') for version in core.get('versions', [])]
        for group in groups.get('groups', []):
            preferred = (group.get('preferredVersion') or {}).get('version')
            for version in group.get('versions', []):
                jobs.append((group['name'], version['version'], version['version'] == preferred))
        self._failing &= {(group, version) for group, version, _ in jobs}  # not listed anymore: forgotten
        found = await asyncio.gather(*[self._scan_group_version(*job) for job in jobs])
        return [resource for chunk in found for resource in chunk]

    async def _scan_group_version(self, group: str, version: str, preferred: bool) -> list[resources.Resource]:
        payload = await self._get_group_version(group, version)
        return parse_resource_list(payload, group, version, preferred=preferred) if payload is not None else []

    async def _get_group_version(self, group: str, version: str) -> Mapping[str, Any] | None:
        """The APIResourceList of a group-version; None if not served (404); empty if skipped (5xx)."""
        if not group:  # the core group: the API server's own, retried and raised as any request
            try:
                payload: Mapping[str, Any] = await self._client.request('GET', f'/api/{version}')
            except apierrors.APINotFoundError:
                return None
            return payload
        path = f'/apis/{group}/{version}'
        try:
            try:
                payload = await self._client.request('GET', path, backoffs=None)  # a 5xx is not retried
            except apierrors.APIServerError:
                raise
            except Exception as exc:
                if not apierrors.is_retriable(exc):
                    raise
                payload = await self._client.request('GET', path)  # transport errors, 429: as usual
        except apierrors.APINotFoundError:
            return None
        except apierrors.APIServerError as exc:
            if (group, version) not in self._failing:
                self._failing.add((group, version))
                logger.warning(f'Discovery skips the API {group}/{version}: it fails with {exc} (an aggregated '
                               f'API whose server is down?); its resources are not found until it answers.')
            return {}
        if (group, version) in self._failing:
            self._failing.discard((group, version))
            self._recovered.append((group, version))
        return payload

    async def select(self, selector: selectors.Selector, *, rescan: bool = True) -> set[resources.Resource]:
        """The resources that the selector means; re-scans once (if `rescan`) if the cache has none of them."""
        if selector.group is not None and selector.callable is None:  # one group is enough
            group, version = selector.group, selector.version
            selected = selector.select(await self.scan_group(group, version))
            if not selected and selector.is_specific and rescan:
                selected = selector.select(await self.scan_group(group, version, refresh=True))
            return selected
        selected = selector.select(await self.scan())
        if not selected and selector.is_specific and rescan:
            selected = selector.select(await self.scan(refresh=True))
        return selected

    async def schema(self, resource: resources.Resource) -> Mapping[str, Any] | None:
        """The structural schema (`openAPIV3Schema`) of a custom resource's version; None for built-ins."""
        if resource not in self._schemas:
            try:
                crd = await self._client.request('GET', f'{CRD_PATH}/{resource.plural}.{resource.group}')
            except apierrors.APINotFoundError:
                crd = None
            self._schemas[resource] = _schema_of(crd, resource.version)
        return self._schemas[resource]


def _schema_of(crd: Mapping[str, Any] | None, version: str) -> Mapping[str, Any] | None:
    if not crd:
        return None
    versions: Sequence[Mapping[str, Any]] = (crd.get('spec') or {}).get('versions') or []
    for item in versions:
        if item.get('name') == version:
            schema = (item.get('schema') or {}).get('openAPIV3Schema')
            return schema if isinstance(schema, Mapping) else None
    return None
