"""What the handlers need before the operator serves them, checked once the startup handlers have run.

Admission handlers (`@kopf.on.validate`, `@kopf.on.mutate`) need `settings.admission.server`
(e.g. `kopf.WebhookServer()`, set in a startup handler), and `settings.admission.managed`, if set,
must give valid webhook names: an operator must never silently run without the webhooks it asked for.
"""
from kopf._model import admission, registries
from kopf._model import settings as settings_


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
            admission.validate_managed(settings.admission.managed)
        except ValueError as exc:
            raise UnsupportedHandlersError(str(exc)) from None
