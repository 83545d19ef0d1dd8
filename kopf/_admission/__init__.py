"""Admission webhooks (`@kopf.on.validate`, `@kopf.on.mutate`): served by the operator.

Modules:
- `protocols`    admission reviews parsed and answered, client configs, the webhook configurations built (pure)
- `answering`    one review answered by the handlers; the managed webhook configurations kept in the cluster
- `servers`      the webhook servers and tunnels of `settings.admission.server` (`kopf.WebhookServer` & co.)
- `httpserving`  the small HTTP/1.1 server behind the webhook servers
"""
