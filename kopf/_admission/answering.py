"""Admission webhooks served by the operator: answering reviews, keeping the managed configurations.

- `Admission.review(payload, webhook=, headers=, sslpeer=)` is the callback that the webhook server
  (`settings.admission.server`) calls for every request: the resource is looked up among the served
  ones by (group, version, plural); the handlers are those of that resource, of the hinted id (the
  URL path), type, subresource and operation (mutating ones skip DELETE unless their operations are
  exactly DELETE), and filters; each is invoked; the answer is allowed unless one raised (the
  highest-priority error's message and code), with the warnings and, for mutations, the JSON-patch
  of the `patch` they wrote. A review for an unknown resource or webhook id is allowed, with a
  warning in our log: a denial would make the API server reject every request under
  `failurePolicy: Fail` (e.g. after a handler was renamed). The handlers' outcome lines ("Webhook 'x'
  succeeded.") go into `deferred_logs` if the server set it (ours does: it logs them once the answer
  is written, as the client need not wait for them), else they are logged at once.
- `memo`: the object's, if the operator knows it; a copy of the operator's for CREATE (not kept).
- With `settings.admission.managed`, the Validating/MutatingWebhookConfigurations of that name hold
  one webhook per handler, rules for the served resources it selects: created (or patched) when the
  server yields its client config and when resources appear; on exit, all but `persistent` ones go.
"""
import asyncio
import contextvars
import logging
from collections.abc import Mapping
from typing import Any

from kopf._admission import protocols as admission
from kopf._api import apierrors
from kopf._api import client as client_
from kopf._core import diffs, handlers, memos, outcomes, patches, records
from kopf._core.bodies import Body
from kopf._core.kwargs import WebhookCause, handler_kwargs
from kopf._core.outcomes import OutcomeKind
from kopf._core.resources import Resource
from kopf._engine import contexts, invoking, loggers

logger = logging.getLogger('kopf.reactor.admission')
KINDS = {handlers.WebhookType.VALIDATING: 'validatingwebhookconfigurations',
         handlers.WebhookType.MUTATING: 'mutatingwebhookconfigurations'}
URL = '/apis/admissionregistration.k8s.io/v1/'

# The operator's API client while its webhook server runs: servers that look at the cluster (`WebhookAutoServer`)
# ask it what it knows (the server's version and certificate) instead of logging in on their own.
client_var: contextvars.ContextVar[client_.APIClient] = contextvars.ContextVar('kopf_admission_client')

# Set by a webhook server around a review: the handlers' outcome lines are put here, for the server to log once
# its answer is written (`emit_deferred`); unset (other servers), they are logged at once, as always.
Deferred = list[tuple[loggers.LocalObjectLogger, outcomes.LogEntry]]
deferred_logs: contextvars.ContextVar[Deferred | None] = contextvars.ContextVar('kopf_admission_logs', default=None)


def emit_deferred(deferred: Deferred) -> None:
    for objlogger, entry in deferred:
        entry.emit(objlogger)


class Admission:
    """The operator's admission side: the review callback and the managed configurations."""

    def __init__(self, ctx: contexts.OperatorContext) -> None:
        self.ctx = ctx
        self.config: Mapping[str, Any] | None = None  # the server's latest client config
        self.resources: dict[Resource, Any] = {}      # served resources (the observer keeps them current)
        self.lock = asyncio.Lock()

    # -- reviews ------------------------------------------------------------------------------------

    async def review(self, payload: Mapping[str, Any], /, *, webhook: str | None = None,
                     headers: Mapping[str, str] | None = None, sslpeer: Mapping[str, Any] | None = None,
                     ) -> dict[str, Any]:
        request = admission.parse_review(payload)  # BadReview: the server answers 400
        resource = self._resource(request)
        if resource is None:
            logger.warning(f'An admission review for an unserved resource {request.get("resource")!r}: allowed.')
            return admission.respond(payload)
        operation = str(request.get('operation'))
        new, old = request.get('object'), request.get('oldObject')
        body: Mapping[str, Any] = (old if operation == 'DELETE' else new) or old or new or {}
        patch = patches.Patch(body=body)
        warnings: list[str] = []
        objlogger = loggers.LocalObjectLogger(body=body, settings=self.ctx.settings)
        cause = WebhookCause(
            logger=objlogger, memo=self._memo(resource, body, operation), indices=self.ctx.indices,
            resource=resource, body=Body(body), patch=patch, dryrun=bool(request.get('dryRun')),
            warnings=warnings, userinfo=request.get('userInfo') or {}, headers=dict(headers or {}),
            sslpeer=dict(sslpeer or {}), subresource=request.get('subResource') or None, operation=operation,
            diff=diffs.diff(old, new) if old is not None and new is not None else diffs.Diff(), old=old, new=new)
        found = list(self.ctx.registry.iter_webhook_handlers(cause, id=webhook))
        if webhook is not None and not found and not any(h.id == webhook for h in self.ctx.registry.webhooks):
            logger.warning(f'An admission review for an unknown webhook {webhook!r}: allowed.')
        failures: list[BaseException] = []
        deferred = deferred_logs.get()
        for handler in found:
            kwargs = handler_kwargs(handler, cause)
            outcome = await invoking.invoke_handler(handler, kwargs=kwargs, logger=objlogger,
                                                    execution=self.ctx.settings.execution,
                                                    log_outcome=deferred is None)
            if deferred is not None:
                deferred.append((objlogger, outcomes.describe(handler, outcome)))
            if outcome.kind is not OutcomeKind.SUCCESS and outcome.exception is not None:
                failures.append(outcome.exception)
        ops: list[dict[str, Any]] = []
        mutating = any(h.type == handlers.WebhookType.MUTATING for h in found)
        if not failures and mutating and patch:
            ops = patch.as_json_patch(body, merged=True)
        return admission.respond(payload, errors=failures, warnings=warnings, patch_ops=ops)

    def _resource(self, request: Mapping[str, Any]) -> Resource | None:
        spec = request.get('resource') or {}
        group, version, plural = spec.get('group') or '', spec.get('version') or '', spec.get('resource')
        for resource in self.resources:
            if (resource.group, resource.version, resource.plural) == (group, version, plural):
                return resource
        return None

    def _memo(self, resource: Resource, body: Mapping[str, Any], operation: str) -> Any:
        uid = (body.get('metadata') or {}).get('uid')
        rctx = self.resources.get(resource)
        record = rctx.records.get(str(uid)) if rctx is not None and uid and operation != 'CREATE' else None
        return records.memo_of(record) if record is not None else memos.copy_for_object(self.ctx.memo)

    # -- managed configurations ---------------------------------------------------------------------

    async def serve(self) -> None:
        """Run the server: keep the managed configurations current with each client config it yields."""
        server = self.ctx.settings.admission.server
        managed = self.ctx.settings.admission.managed
        if managed is not None:
            admission.validate_managed(managed)
        client_var.set(self.ctx.client)  # this task's own context: seen by the server's generator only
        try:
            async for config in server(self.review):
                self.config = config
                await self.configure()
        finally:
            if managed is not None and self.config is not None:
                await asyncio.shield(self.configure(exiting=True))

    async def served(self, resources: Mapping[Resource, Any]) -> None:
        """The observer serves these resources now: their rules go into the configurations."""
        changed = set(resources) != set(self.resources)
        self.resources = dict(resources)
        if changed and self.config is not None:
            await self.configure()

    async def configure(self, *, exiting: bool = False) -> None:
        managed = self.ctx.settings.admission.managed
        if managed is None or self.config is None:
            return
        if not self.ctx.pausing.pauses.manages_webhooks():  # only an active replica (shard 0: its holder) does
            logger.debug(f'The webhook configurations {managed!r} are left to the active replica: this one is paused.')
            return
        async with self.lock:
            for type_, plural in KINDS.items():
                chosen = [h for h in self.ctx.registry.webhooks if h.type == type_ and (h.persistent or not exiting)]
                webhooks = admission.build_webhooks(chosen, self.resources, self.config, managed=managed,
                                                    selects=_selects)
                await self._put(plural, managed, webhooks)

    async def _put(self, plural: str, name: str, webhooks: list[dict[str, Any]]) -> None:
        client = self.ctx.client
        kind = 'ValidatingWebhookConfiguration' if plural.startswith('validating') else 'MutatingWebhookConfiguration'
        try:
            await client.request('POST', URL + plural, payload={
                'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': kind,
                'metadata': {'name': name}, 'webhooks': webhooks})
            return
        except apierrors.APIConflictError:
            pass  # it exists: patched below
        except apierrors.APIError as exc:
            logger.error(f'Cannot create the {kind} {name!r}: {exc}')
            return
        try:
            await client.request('PATCH', f'{URL}{plural}/{name}', payload={'webhooks': webhooks},
                                 content_type='application/merge-patch+json')
        except apierrors.APIError as exc:
            logger.error(f'Cannot patch the {kind} {name!r}: {exc}')


def _selects(handler: handlers.WebhookHandler, resource: Resource) -> bool:
    return handler.selector is None or handler.selector.check(resource)
