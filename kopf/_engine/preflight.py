"""What the handlers need before the operator serves them: `check_kwargs()` (at the start, before the startup
handlers) warns of handlers that ask for a kwarg that nothing provides (e.g. a misspelt index id).

(What admission handlers need, a webhook server, is checked by `kopf._admission.protocols.check()`.)
"""
import inspect
import logging

from kopf._core import registries

logger = logging.getLogger('kopf.reactor.preflight')


def check_kwargs(registry: registries.OperatorRegistry) -> None:
    """Warn of handlers that ask for a kwarg that neither kopf nor any `@kopf.index` provides."""
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
