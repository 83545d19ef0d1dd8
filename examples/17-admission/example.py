"""Admission webhooks served by the operator itself: validation, mutation, and a status check.

- `configure` (startup): a local HTTPS server (a self-signed CA, made with `cryptography`, goes into
  the caBundle) and `managed`: the Validating/MutatingWebhookConfigurations named `auto.kopf.dev`
  that the operator creates, keeps up to date, and removes on exit.
- `check_field`: rejects objects whose `spec.field` is `'wrong'` (the API client gets the message
  and the HTTP code 422), and lets `'doubtful'` in with a warning (`kubectl` prints it).
- `inject_defaults`: for objects labelled `inject=yes` only (an objectSelector in the managed
  configuration), adds `spec.injected` before the object is stored.
- `check_status`: for writes to the `status` subresource, rejects a negative `status.replicas`.

Try it with the in-memory cluster, which calls these webhooks as a real API server would:

    kopf run -A --local-cluster --apply examples/crd.yaml examples/17-admission/example.py
"""
import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.admission.server = kopf.WebhookServer(addr='127.0.0.1', host='127.0.0.1')
    # For other clusters, instead (see docs/admission.md, "Which server"):
    # settings.admission.server = kopf.WebhookK3dServer(port=54321)            # k3d/k3s
    # settings.admission.server = kopf.WebhookMinikubeServer(port=54321)       # minikube
    # settings.admission.server = kopf.WebhookDockerDesktopServer(port=54321)  # Docker Desktop
    # settings.admission.server = kopf.WebhookAutoServer(port=54321)           # any of these three, detected
    # settings.admission.server = kopf.WebhookNgrokTunnel()                    # anywhere; pip install "kopf[dev]"
    # settings.admission.server = kopf.WebhookAutoTunnel()                     # detected, else ngrok
    settings.admission.managed = 'auto.kopf.dev'


@kopf.on.validate('kopfexamples', operations={'CREATE', 'UPDATE'})
def check_field(spec, warnings, logger, **_):
    field = spec.get('field')
    if field == 'wrong':
        raise kopf.AdmissionError('spec.field must not be "wrong".', code=422)
    if field == 'doubtful':
        warnings.append('spec.field is "doubtful": accepted, but think again.')
    logger.info(f'Validated: field={field!r}.')


@kopf.on.mutate('kopfexamples', labels={'inject': 'yes'}, operations={'CREATE'})
def inject_defaults(patch, **_):
    patch.spec['injected'] = 'by the mutating webhook'


@kopf.on.validate('kopfexamples', subresource='status')
def check_status(new, **_):
    replicas = ((new or {}).get('status') or {}).get('replicas')
    if isinstance(replicas, int) and replicas < 0:
        raise kopf.AdmissionError('status.replicas must not be negative.', code=422)
