"""Patching objects: at most one request per endpoint (the main body, and `/status` where it exists).

Rules:
- The merge-patch goes to the main body; its `status` part goes to `/status` if the resource has a
  status subresource (the main endpoint would ignore it), else it stays in the main body's patch.
- The patch's callables (`Patch.fns`, e.g. finalizer edits) become a JSON-patch guarded by a
  `test` of `metadata.resourceVersion`. A 422 is either that test failing (the object changed) or a
  real rejection (an invalid value, the schema, an immutable field, an admission webhook): the object
  is re-read, and if its resourceVersion is still the one the failed request tested, it was a
  rejection and the `APIUnprocessableEntityError` is raised (the reactor logs it and retries it with
  the error delays); else the callables are recomputed on the fresh body and sent again, and after
  `CONFLICT_ATTEMPTS` it is left to the next cycle. A 404 means "the object is gone".
  Status ops go to `/status` as above.
- `/status` is sent FIRST, then the main body: if the second request fails, the object has the
  handlers' results but not the annotations that mark them handled (diff-base, progress), so the
  handlers run again (at-least-once); the other order could mark them handled with the results lost.
  The second guarded JSON-patch tests the resourceVersion of the first one's answer.
- The result is the body as the server returned it last. What was sent but did not come back
  (e.g. fields pruned by the CRD's schema) is reported in ONE warning naming the object and fields.
"""
import logging
from collections.abc import Mapping
from typing import Any

from kopf._api import apierrors
from kopf._api import client as client_
from kopf._core import patches, resources, values
from kopf._shared import encoding, fields

logger = logging.getLogger('kopf._api.objectwrites')


@values.frozen
class PatchResult:
    body: dict[str, Any] | None = None  # the newest body the server returned (None if nothing was sent)
    gone: bool = False  # 404: the object does not exist anymore
    conflict: bool = False  # the JSON-patch's resourceVersion test failed: try again next cycle
    dropped: tuple[fields.FieldPath, ...] = ()  # sent, but not in the returned body
    raw: bytes | None = None  # `body` as the server sent it (a merge-patch's answer): its echo's key, if needed


def split_patch(patch: Mapping[str, Any], resource: resources.Resource) -> tuple[dict[str, Any], dict[str, Any]]:
    """(main part, status part) of a merge-patch; the status part is empty without a status subresource."""
    main = dict(patch)
    if 'status' in resource.subresources and 'status' in main:
        return main, {'status': main.pop('status')}
    return main, {}


def split_json_patch(ops: list[dict[str, Any]], resource: resources.Resource,
                     ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(main ops, status ops) of a JSON-patch, split like `split_patch` does."""
    if 'status' not in resource.subresources:
        return ops, []
    status = [op for op in ops if op['path'] == '/status' or op['path'].startswith('/status/')]
    return [op for op in ops if op not in status], status


def find_dropped(sent: Mapping[str, Any], received: Mapping[str, Any] | None,
                 path: fields.FieldPath = ()) -> list[fields.FieldPath]:
    """The paths of values that were sent (not as None, which deletes) but are absent from the answer."""
    dropped: list[fields.FieldPath] = []
    mapping = type(received) is dict or fields.is_mapping(received)  # the answer's dicts: no ABC check per key
    for key, value in sent.items():
        if value is None:
            continue
        if not mapping or key not in received:  # type: ignore[operator]  # a mapping, as checked
            dropped.append(path + (key,))
        elif (type(value) is dict or fields.is_mapping(value)) and value:
            dropped.extend(find_dropped(value, received[key], path + (key,)))  # type: ignore[index]
    return dropped


async def patch_obj(
        client: client_.APIClient,
        resource: resources.Resource,
        *,
        namespace: str | None,
        name: str,
        patch: Mapping[str, Any],
        body: Mapping[str, Any] | None = None,
        log: logging.Logger | logging.LoggerAdapter[logging.Logger] | None = None,
) -> PatchResult:
    """Apply a merge-patch (and the `Patch.fns` as a guarded JSON-patch, which needs the `body`)."""
    log = log if log is not None else logger
    ref = f'{resource.name} {namespace}/{name}' if namespace else f'{resource.name} {name}'
    result: dict[str, Any] | None = None
    raw: bytes | None = None
    dropped: list[fields.FieldPath] = []
    try:
        if isinstance(patch, patches.Patch) and patch.fns:
            outcome = await _json_patch(client, resource, namespace, name, patch, body, log)
            if outcome is None:
                log.debug(f'{ref} changed since the patch was computed (the resourceVersion test failed); '
                          f'it will be patched in the next cycle.')
                return PatchResult(body=None, conflict=True)
            result = outcome
        main, status = split_patch(patch, resource)
        for subresource, part in [('status', status), (None, main)]:  # status first: see the module doc
            if part:
                url = resource.get_url(namespace=namespace, name=name, subresource=subresource)
                if log.isEnabledFor(logging.DEBUG):  # as upstream words it; the repr only if logged
                    log.debug(f'Merge-patching the {subresource or "resource"} with: {part!r}')
                raw = await client.request('PATCH', url, payload=part, content_type=client_.MERGE_PATCH_CT, raw=True)
                result = encoding.loads(raw) if raw.strip() else None
                dropped.extend(find_dropped(part, result))
    except apierrors.APINotFoundError:
        log.debug(f'{ref} is gone; the patch is dropped.')
        return PatchResult(body=None, gone=True)
    if dropped:
        names = ', '.join('.'.join(path) for path in dropped)
        log.warning(f'Patching {ref}: the server dropped some fields ({names}); '
                    f'the resource\'s schema probably prunes them (x-kubernetes-preserve-unknown-fields?).')
    return PatchResult(body=result, dropped=tuple(dropped), raw=raw if result is not None else None)


CONFLICT_ATTEMPTS = 3  # a guarded JSON-patch is recomputed on a fresh body this many times in all


class _Stale(Exception):
    """A 422 of a guarded JSON-patch: a conflict if the object's resourceVersion is not `tested` anymore."""

    def __init__(self, error: apierrors.APIUnprocessableEntityError, tested: Any) -> None:
        super().__init__(error)
        self.error = error
        self.tested = tested


async def _json_patch(client: client_.APIClient, resource: resources.Resource, namespace: str | None,
                      name: str, patch: patches.Patch, body: Mapping[str, Any] | None,
                      log: logging.Logger | logging.LoggerAdapter[logging.Logger]) -> dict[str, Any] | None:
    """Apply the patch's callables as guarded JSON-patches; None if the object kept changing under us.

    The callables are transformations of whatever body they get (add or release a finalizer, merge
    the cycle's content), so when the resourceVersion test fails (422: the object changed since the
    body we decided on), they are recomputed on a freshly read body and sent again. Dropping the patch
    instead would lose what the cycle did: e.g. the success of delete handlers, which then run again.
    A 422 after which the object still has the tested resourceVersion was no conflict but a rejection
    of the patch (e.g. an invalid label value): it is raised, not retried here.
    """
    if body is None:
        raise ValueError('A patch with callables (a JSON-patch) needs the body it applies to.')
    for _ in range(CONFLICT_ATTEMPTS):
        try:
            return await _json_patch_once(client, resource, namespace, name, patch, body, log)
        except _Stale as stale:
            body = await client.request('GET', resource.get_url(namespace=namespace, name=name))  # 404: gone
            if (body.get('metadata') or {}).get('resourceVersion') == stale.tested:
                raise stale.error from None
    return None


async def _json_patch_once(client: client_.APIClient, resource: resources.Resource, namespace: str | None,
                           name: str, patch: patches.Patch, body: Mapping[str, Any],
                           log: logging.Logger | logging.LoggerAdapter[logging.Logger]) -> dict[str, Any]:
    """One guarded attempt on the given body; `_Stale` on a 422 (a conflict or a rejection)."""
    ops = patch.as_json_patch(body)
    rv = (body.get('metadata') or {}).get('resourceVersion')
    test = [{'op': 'test', 'path': '/metadata/resourceVersion', 'value': rv}]
    result: dict[str, Any] | None = None
    main, status = split_json_patch(ops, resource)
    for subresource, part in [('status', status), (None, main)]:  # status first: see the module doc
        if part:
            url = resource.get_url(namespace=namespace, name=name, subresource=subresource)
            if log.isEnabledFor(logging.DEBUG):
                log.debug(f'JSON-patching the {subresource or "resource"} with: {test + part!r}')
            try:
                result = await client.request('PATCH', url, payload=test + part, content_type=client_.JSON_PATCH_CT)
            except apierrors.APIUnprocessableEntityError as exc:
                raise _Stale(exc, rv) from None
            rv = (result or {}).get('metadata', {}).get('resourceVersion', rv)
            test = [{'op': 'test', 'path': '/metadata/resourceVersion', 'value': rv}]
    return result if result is not None else dict(body)
