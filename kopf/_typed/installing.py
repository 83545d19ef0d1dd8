"""`kopf run --install-crds`: create or update the CRDs of the declared classes at startup, and wait for them.

`plan()` is the decision (pure): create an absent CRD; leave one that already says what the models say;
replace the spec of one that differs (`PUT` with its `resourceVersion`: a concurrent change is a conflict,
never overwritten unseen); refuse to drop a version that the cluster still stores objects in
(`status.storedVersions`), naming the CRD and the version. `install()` does it through the API client and
waits until each CRD is Established (so the first watch of its resource finds it served).
"""
import asyncio
import dataclasses
import logging
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from kopf._api import apierrors
from kopf._api import client as client_

CRDS_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions'
ESTABLISHED_TIMEOUT = 30.0

Obj = dict[str, Any]


class InstallError(Exception):
    """A CRD that cannot be installed as the models say: the message names it and says what to do."""


@dataclasses.dataclass(frozen=True)
class Action:
    verb: Literal['create', 'update', 'keep']
    body: Obj | None   # what to POST or PUT


def plan(desired: Obj, existing: Obj | None) -> Action:
    if existing is None:
        return Action('create', desired)
    name = desired['metadata']['name']
    declared = {version['name'] for version in desired['spec']['versions']}
    stored = (existing.get('status') or {}).get('storedVersions') or []
    dropped = [version for version in stored if version not in declared]
    if dropped:
        listed = ', '.join(dropped)
        raise InstallError(f'The CRD {name} still stores objects in {listed} (status.storedVersions), which the '
                           f'models no longer declare: declare it again (served=False is fine), or migrate the '
                           f'stored objects to another version and remove {listed} from status.storedVersions.')
    if _contains(existing.get('spec') or {}, desired['spec']):
        return Action('keep', None)
    metadata = {**existing['metadata'], **desired['metadata']}
    body = {**desired, 'metadata': {key: metadata[key] for key in ('name', 'resourceVersion', 'labels', 'annotations')
                                    if key in metadata}}
    return Action('update', body)


def _contains(actual: Any, wanted: Any) -> bool:
    """Whether the server's spec says all that ours says (it adds its defaults: `conversion`, ...)."""
    if isinstance(wanted, Mapping):
        return isinstance(actual, Mapping) and all(key in actual and _contains(actual[key], value)
                                                   for key, value in wanted.items())
    if isinstance(wanted, list):
        return isinstance(actual, list) and len(actual) == len(wanted) and all(map(_contains, actual, wanted))
    return bool(actual == wanted)


async def install_classes(client: client_.APIClient, classes: Iterable[type], logger: logging.Logger) -> None:
    """The CRDs of these resource classes (`settings.crds.install`), assembled here: errors are InstallErrors."""
    from kopf._typed import definitions
    try:
        assembled = definitions.assemble(classes)
    except ValueError as exc:   # SchemaError, DeclarationError
        raise InstallError(f'Cannot make the CRDs of the models: {exc}') from None
    except ModuleNotFoundError as exc:
        raise InstallError(f"Installing the CRDs needs pydantic: pip install 'kopf[models]' ({exc})") from None
    for warning in assembled.warnings:
        logger.warning(warning)
    await install(client, assembled.crds, logger)


async def install(client: client_.APIClient, crds: Iterable[Obj], logger: logging.Logger) -> None:
    for crd in crds:
        name = crd['metadata']['name']
        try:
            existing = await client.request('GET', f'{CRDS_PATH}/{name}', final=(apierrors.APINotFoundError,))
        except apierrors.APINotFoundError:
            existing = None
        action = plan(crd, existing)
        versions = ', '.join(version['name'] for version in crd['spec']['versions'])
        try:
            if action.verb == 'create':
                await client.request('POST', CRDS_PATH, payload=action.body, final=_FINAL)
                logger.info(f'Created the CRD {name} (versions: {versions}).')
            elif action.verb == 'update':
                await client.request('PUT', f'{CRDS_PATH}/{name}', payload=action.body, final=_FINAL)
                logger.info(f'Updated the CRD {name} (versions: {versions}).')
            else:
                logger.info(f'The CRD {name} is up to date (versions: {versions}).')
        except apierrors.APIError as exc:
            raise InstallError(f'Cannot install the CRD {name}: {exc}') from None
        await _established(client, name)


_FINAL = (apierrors.APIClientError,)   # refusals (invalid, forbidden, conflict) are answers, not transient


async def _established(client: client_.APIClient, name: str) -> None:
    deadline = time.monotonic() + ESTABLISHED_TIMEOUT
    while True:
        found = await client.request('GET', f'{CRDS_PATH}/{name}')
        conditions = {c.get('type'): c for c in (found.get('status') or {}).get('conditions') or []}
        if (conditions.get('Established') or {}).get('status') == 'True':
            return
        refused = conditions.get('NamesAccepted') or {}
        if refused.get('status') == 'False':
            raise InstallError(f'The CRD {name} is not served: {refused.get("message") or refused.get("reason")}')
        if time.monotonic() > deadline:
            raise InstallError(f'The CRD {name} is not Established in {ESTABLISHED_TIMEOUT:g} s.')
        await asyncio.sleep(0.1)
