"""Handler kinds whose runtime comes later: refused at start with a message naming the handlers.

Admission webhooks are registered by the decorators, but the reactor
does not run them yet: an operator with any of them exits at start instead of silently ignoring them.
"""
from kopf._model import handlers, registries


class UnsupportedHandlersError(Exception):
    """The registry has handlers of kinds that this version of the reactor does not run."""


KINDS: dict[type[handlers.BaseHandler], str] = {
    handlers.WebhookHandler: 'admission webhook',
}


def check(registry: registries.OperatorRegistry) -> None:
    found = [f'{KINDS[cls]} {handler.id!r}' for handler in registry.handlers
             for cls in KINDS if isinstance(handler, cls)]
    if found:
        raise UnsupportedHandlersError(
            'These handlers are not supported by this version of kopf yet (their runtime comes later): '
            + ', '.join(found) + '. Remove them or run them with another operator.')
