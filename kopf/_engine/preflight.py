"""What the handlers need before the operator serves them, checked once the startup handlers have run.

Admission handlers (`@kopf.on.validate`, `@kopf.on.mutate`) need `settings.admission.server`
(e.g. `kopf.WebhookServer()`, set in a startup handler), and `settings.admission.managed`, if set,
must give valid webhook names: an operator must never silently run without the webhooks it asked for.

The webhook server's optional dependencies (e.g. `cryptography` for a self-signed certificate) are checked
here too, so that a missing one stops the operator in one line naming the extra, before any watcher starts
(the servers say what they need as configured: `_needs()`; kopf._shared.extras has the lines).

`check_kwargs()` (at the start, before the startup handlers) warns of handlers that ask for a kwarg
that nothing provides (e.g. a misspelt index id).
"""
import importlib
import logging
from typing import Any

from kopf._admission import protocols
from kopf._core import registries
from kopf._core import settings as settings_
from kopf._shared import extras

logger = logging.getLogger('kopf.reactor.preflight')


class UnsupportedHandlersError(Exception):
    """The registry has handlers that this operator cannot serve as configured."""


def check(registry: registries.OperatorRegistry, settings: settings_.OperatorSettings) -> None:
    webhooks = registry.webhooks
    if not webhooks:
        return
    if settings.admission.server is None:
        names = ', '.join(f'{h.id!r}' for h in webhooks)
        raise UnsupportedHandlersError(
            f'Admission handlers ({names}) need a webhook server: set settings.admission.server '
            '(e.g. kopf.WebhookServer()) in a startup handler.')
    if settings.admission.managed is not None:
        try:
            protocols.validate_managed(settings.admission.managed)
        except ValueError as exc:
            raise UnsupportedHandlersError(str(exc)) from None
    problem = unmet_needs(settings.admission.server)
    if problem is not None:
        raise UnsupportedHandlersError(problem)


def unmet_needs(thing: Any) -> str | None:
    """The line for the first need of the thing (e.g. a webhook server) whose alternatives are all missing."""
    needs = getattr(thing, '_needs', None)
    for alternatives, what in needs() if callable(needs) else []:
        if len(missing(*alternatives)) == len(alternatives):
            return extras.needs(*alternatives, what=what)
    return None


def missing(*options: extras.Dependency) -> list[extras.Dependency]:
    """Those of the options whose module cannot be imported (imported here: whoever asks is about to use it)."""
    absent = []
    for option in options:
        try:
            importlib.import_module(option.module)
        except ImportError:
            absent.append(option)
    return absent


def check_kwargs(registry: registries.OperatorRegistry) -> None:
    """Warn of handlers that ask for a kwarg that neither kopf nor any `@kopf.index` provides."""
    import inspect  # lazily: at start only
    known = KNOWN_KWARGS | {h.id for h in registry.indexing}
    for handler in registry.handlers:
        try:
            parameters = inspect.signature(handler.fn).parameters.values()
        except (TypeError, ValueError):  # e.g. some builtins: nothing to check
            continue
        for parameter in parameters:
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY) \
                    and parameter.default is parameter.empty and parameter.name not in known:
                logger.warning(f"{handler} asks for {parameter.name!r}, which is neither a kwarg of kopf "
                               f"nor an index (no @kopf.index has id={parameter.name!r}).")


KNOWN_KWARGS = frozenset({
    'logger', 'memo', 'param', 'retry', 'started', 'runtime', 'settings', 'config', 'activity', 'resource',
    'body', 'spec', 'meta', 'status', 'uid', 'name', 'namespace', 'labels', 'annotations', 'patch', 'reason',
    'old', 'new', 'diff', 'type', 'event', 'stopped', 'dryrun', 'warnings', 'userinfo', 'headers', 'sslpeer',
    'subresource', 'operation', 'self', 'cls',
})
