"""Admission webhooks, the calling part: HTTPS POSTs of AdmissionReviews around the write pipeline.

Order (as the API server calls them): mutating webhooks one by one on the object as the pipeline would store it,
then the pipeline again on the mutated object (prune, default, validate), then validating
webhooks (concurrently; any denial wins), then the real write. Writes that raced with the
webhook calls are retried from a fresh read, as the real server's update loop does.
Requests go out as raw HTTP/1.1 over asyncio streams (no client library in the server).
The host names of k3d, minikube and Docker Desktop for the host machine (`host.k3d.internal`, ...)
connect to loopback: the local cluster runs where the operator does (`HOST_ALIASES`).
"""
import asyncio
import base64
import dataclasses
import ssl
import urllib.parse
from collections.abc import Mapping
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.admitting import policies, reviews
from kopf._cluster.admitting.reviews import CallFailed, Request
from kopf._cluster.apis.routing import Target
from kopf._cluster.openapi import conforming
from kopf._cluster.patchtypes import jsonpatches
from kopf._cluster.pipeline import serverside, writing
from kopf._cluster.pipeline.state import State
from kopf._shared import localhosts

Obj = dict[str, Any]
SERVER_FIELDS = ('uid', 'creationTimestamp', 'generation', 'resourceVersion')
RETRIES = 5
# The names by which local clusters' nodes reach the developer's machine (where the operator runs): the local
# cluster runs on that machine itself, so it connects to loopback for them (TLS still verifies the name).
HOST_ALIASES = dict.fromkeys([localhosts.K3D_HOST, localhosts.MINIKUBE_HOST, localhosts.DOCKER_DESKTOP_HOST],
                             '127.0.0.1')


class Admitter:
    """Runs a write through the webhooks; `services` maps "namespace/name" to a base URL."""

    def __init__(self, state: State, services: Mapping[str, str] | None = None,
                 subject: policies.Subject | None = None, access: Any = None) -> None:
        self.state = state
        self.services = dict(services or {})
        self.warnings: list[str] = []
        self.subject = subject or policies.Subject(str(reviews.USER['username']), tuple(reviews.USER['groups']))
        self.access = access   # what the policies' `authorizer` asks (`policies.authorize`)

    async def create(self, target: Target, body: Any, options: writing.Options) -> writing.Outcome:
        dry = dryly(options)
        draft = writing.create(self.state, target, jsoncodec.clone(body), dry).obj or {}
        if isinstance(body, dict) and not (body.get('metadata') or {}).get('name'):
            draft['metadata'].pop('name', None)  # generated after mutation (validation sees it), as a real server does
        entries = draft['metadata'].get('managedFields', [])   # the field manager runs before mutating admission
        request = self._request('CREATE', target, draft, None, options)
        draft = await self.mutate(request)
        final = writing.create(self.state, target, _fresh(draft), dry).obj or {}
        named = final.get('metadata', {}).get('name') or request.name
        await self.validate(dataclasses_replace(request, obj=final, name=named))
        outcome = writing.create(self.state, target, _fresh(final), _with(options, entries))
        outcome.warnings.extend(self.warnings)
        return outcome

    async def update(self, target: Target, content_type: str | None, body: Any,
                     options: writing.Options) -> writing.Outcome:
        if content_type is None:
            writing.require_rv(target, writing.as_object(body))
        elif content_type not in (jsonpatches.CUSTOM_TYPES if target.resource.custom else jsonpatches.BUILTIN_TYPES):
            allowed = jsonpatches.CUSTOM_TYPES if target.resource.custom else jsonpatches.BUILTIN_TYPES
            raise statuses.unsupported_media(allowed)
        if content_type == jsonpatches.APPLY:
            return await self._apply(target, body, options)
        for _ in range(RETRIES):
            current = writing.existing(self.state, target)
            candidate = body if content_type is None else _patched(target, content_type, current, body)
            draft = writing.update(self.state, target, current, jsoncodec.clone(candidate), dryly(options)).obj
            if draft is None or draft is current:
                break
            request = self._request('UPDATE', target, draft, current, options)
            mutated = await self.mutate(request)
            final = writing.update(self.state, target, current, jsoncodec.clone(mutated), dryly(options)).obj
            await self.validate(dataclasses_replace(request, obj=final))
            if writing.existing(self.state, target) is current:
                entries = draft['metadata'].get('managedFields', [])
                outcome = writing.update(self.state, target, current, jsoncodec.clone(mutated), _with(options, entries))
                outcome.warnings.extend(self.warnings)
                return outcome
        current = writing.existing(self.state, target)
        candidate = body if content_type is None else _patched(target, content_type, current, body)
        return writing.update(self.state, target, current, jsoncodec.clone(candidate), options)

    async def _apply(self, target: Target, body: Any, options: writing.Options) -> writing.Outcome:
        """Server-side apply: create through admission if missing, else the applied plan through admission."""
        resource = target.resource
        if self.state.store.get(resource.key, target.namespace or '', target.name or '') is None:
            config = serverside.creation_body(target, body)
            collection = dataclasses.replace(target, name=None, subresource=None)
            outcome = await self.create(collection, jsoncodec.clone(config), serverside.quietly(options, config))
            serverside.own_created(self.state, target, config, options, outcome)
            return outcome
        current = writing.existing(self.state, target)
        planned = serverside.plan(self.state, target, current, jsoncodec.clone(body), options)
        draft = writing.update(self.state, target, current, jsoncodec.clone(planned.candidate), dryly(options)).obj
        if draft is None or draft is current:
            outcome = writing.update(self.state, target, current, planned.candidate,
                                         serverside.quietly(options, planned.config))
            if not options.dry_run:
                planned.commit()
            return outcome
        request = self._request('UPDATE', target, draft, current, options)
        mutated = await self.mutate(request)
        final = writing.update(self.state, target, current, jsoncodec.clone(mutated), dryly(options)).obj
        await self.validate(dataclasses_replace(request, obj=final))
        stored = writing.existing(self.state, target)
        outcome = writing.update(self.state, target, stored, mutated, serverside.quietly(options, planned.config))
        outcome.warnings.extend(self.warnings)
        if not options.dry_run:
            planned.commit()
        return outcome

    async def delete(self, target: Target, options: writing.Options) -> writing.Outcome:
        current = writing.existing(self.state, target)
        request = self._request('DELETE', target, None, current, options)
        await self.mutate(request)
        await self.validate(request)
        return writing.delete(self.state, target, options)

    def _request(self, operation: str, target: Target, obj: Obj | None, old: Obj | None,
                 options: writing.Options) -> Request:
        meta = (obj or old or {}).get('metadata') or {}
        return Request(operation, target.resource, target.subresource, meta.get('name') or target.name or '',
                       meta.get('namespace') or target.namespace or '', obj, old, options.dry_run)

    async def mutate(self, request: Request) -> Obj:
        """Mutating webhooks in order; those with `reinvocationPolicy: IfNeeded` run once more if a later
        webhook changed the object after them."""
        if reviews.exempt(request):
            return request.obj or {}
        hooks = [h for h in reviews.webhooks(self.state, mutating=True) if reviews.matches(self.state, h, request)]
        request, changed_after = await self._mutate_all(request, hooks)
        again = [hook for index, hook in enumerate(hooks)
                 if hook.get('reinvocationPolicy') == 'IfNeeded' and changed_after[index]]
        request, _ = await self._mutate_all(request, again)
        return request.obj or {}

    async def _mutate_all(self, request: Request, hooks: list[Mapping[str, Any]]) -> tuple[Request, list[bool]]:
        versions: list[Obj | None] = []   # the object right after each webhook
        for hook in hooks:
            response = await self.call(hook, request)
            if response is not None and request.obj is not None and request.operation != 'DELETE':
                request = dataclasses.replace(request, obj=reviews.mutated(request.obj, response))
            versions.append(request.obj)
        changed_after = [after != request.obj for after in versions]
        return request, changed_after

    async def validate(self, request: Request) -> None:
        if reviews.exempt(request):
            return
        self.warnings.extend(policies.check(self.state, request, self.subject, self.access))
        hooks = [h for h in reviews.webhooks(self.state, mutating=False) if reviews.matches(self.state, h, request)]
        await asyncio.gather(*(self.call(hook, request) for hook in hooks))

    async def call(self, hook: Mapping[str, Any], request: Request) -> Mapping[str, Any] | None:
        """One webhook call; a denial raises its error; a failure obeys the failurePolicy."""
        uid, sent = reviews.review(hook, request)
        try:
            seconds = float(hook.get('timeoutSeconds', 10))
            answer = await post(self._url(hook), jsoncodec.dumps(sent), _ca(hook), seconds)
            response = reviews.interpret(hook, uid, sent, answer)
        except (CallFailed, OSError, TimeoutError, ValueError, ssl.SSLError) as exc:
            if hook.get('failurePolicy', 'Fail') == 'Ignore':
                return None
            raise reviews.failed(hook, str(exc) or type(exc).__name__) from None
        self.warnings.extend(str(w) for w in response.get('warnings') or [])
        if not response.get('allowed'):
            raise reviews.denial(hook, response)
        return response

    def _url(self, hook: Mapping[str, Any]) -> str:
        config = hook.get('clientConfig') or {}
        url = config.get('url')
        if not url:
            service = config.get('service') or {}
            base = self.services.get(f'{service.get("namespace")}/{service.get("name")}')
            if base is None:
                raise CallFailed(f'service "{service.get("namespace")}/{service.get("name")}" is not mapped '
                                 'to a URL in the emulator (Emulator(webhook_services=...))')
            url = base.rstrip('/') + (service.get('path') or '')
        timeout = int(hook.get('timeoutSeconds', 10))
        return f'{url}{"&" if "?" in url else "?"}timeout={timeout}s'


def dryly(options: writing.Options) -> writing.Options:
    return writing.Options(validation=options.validation, dry_run=True, propagation=options.propagation,
                           preconditions=options.preconditions, manager=options.manager, user=options.user)


def _with(options: writing.Options, entries: Any) -> writing.Options:
    """The write's options, with `managedFields` as the draft had them (not if the manager is an applier's)."""
    return options if options.applier else dataclasses.replace(options, entries=entries)


def dataclasses_replace(request: Request, **changes: Any) -> Request:
    return dataclasses.replace(request, **changes)


def _fresh(obj: Obj) -> Obj:
    fresh: Obj = jsoncodec.clone(obj)
    for field in SERVER_FIELDS:
        fresh.get('metadata', {}).pop(field, None)
    return fresh


def _ca(hook: Mapping[str, Any]) -> bytes | None:
    bundle = (hook.get('clientConfig') or {}).get('caBundle')
    return base64.b64decode(bundle) if bundle else None


async def post(url: str, body: bytes, ca_pem: bytes | None, seconds: float) -> Any:
    """POST JSON over HTTP/1.1 (TLS verified against `ca_pem`, or the system roots); the parsed answer."""
    parsed = urllib.parse.urlsplit(url)
    secure = parsed.scheme == 'https'
    context = ssl.create_default_context(cadata=ca_pem.decode() if ca_pem else None) if secure else None
    host = parsed.hostname or 'localhost'
    port = parsed.port or (443 if secure else 80)
    target = parsed.path or '/'
    target += f'?{parsed.query}' if parsed.query else ''
    async with asyncio.timeout(seconds):
        reader, writer = await asyncio.open_connection(HOST_ALIASES.get(host.lower(), host), port, ssl=context,
                                                       server_hostname=host if secure else None)
        try:
            writer.write((f'POST {target} HTTP/1.1\r\nHost: {parsed.netloc}\r\nContent-Type: application/json\r\n'
                          f'Accept: application/json, */*\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n'
                          ).encode() + body)
            await writer.drain()
            raw = await reader.read()
        finally:
            writer.close()
    head, _, payload = raw.partition(b'\r\n\r\n')
    status = int(head.split(b' ', 2)[1]) if head.startswith(b'HTTP/') else 0
    if b'transfer-encoding: chunked' in head.lower():
        payload = _unchunk(payload)
    if status != 200:
        raise CallFailed(f'expected a 200 response from the webhook, got {status}')
    return jsoncodec.loads(payload)


def _unchunk(data: bytes) -> bytes:
    out, pos = bytearray(), 0
    while pos < len(data):
        end = data.index(b'\r\n', pos)
        size = int(data[pos:end].split(b';')[0], 16)
        if size == 0:
            break
        out += data[end + 2:end + 2 + size]
        pos = end + 2 + size + 2
    return bytes(out)


def _patched(target: Target, content_type: str, current: Any, body: Any) -> Any:
    return jsonpatches.apply_patch(content_type, current, body, conforming.schema_of(target.resource))
