"""A webhook server for both backends (HTTPS on loopback, in a thread): each backend calls its own path.

It mutates created ConfigMaps (a `mutated` label), denies objects with `data.deny`, and records what
it was sent; `reviews(backend)` is the step action that compares what each server sent since last time.
"""
import base64
import http.server
import json
import threading
from typing import Any

from kopf._cluster.web import tlsmode

from . import compare

NAMESPACE = 'd-admit'


class Webhook:
    def __init__(self) -> None:
        self.certs = tlsmode.make('127.0.0.1')
        self.reviews: dict[str, list[dict[str, Any]]] = {'emulator': [], 'envtest': []}
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers['Content-Length'])))
                backend, _, path = self.path.split('?')[0].strip('/').partition('/')
                data = json.dumps(hook.answer(backend, path, review)).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.server.socket = tlsmode.server_context(self.certs).wrap_socket(self.server.socket, server_side=True)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> 'Webhook':
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, backend: str, path: str, review: dict[str, Any]) -> dict[str, Any]:
        req = review['request']
        obj = req.get('object') or {}
        if not (obj.get('metadata') or {}).get('name', '').startswith('probe'):
            self.reviews[backend].append({'hook': path, **summary(req)})
        response: dict[str, Any] = {'uid': req['uid'], 'allowed': True}
        if path == 'validate' and 'deny' in (obj.get('data') or {}):
            response = {'uid': req['uid'], 'allowed': False, 'status': {'code': 403, 'message': 'no denials here'}}
        if path == 'mutate' and req['operation'] == 'CREATE':
            labels = (obj.get('metadata') or {}).get('labels')
            op = ({'op': 'add', 'path': '/metadata/labels/mutated', 'value': 'yes'} if labels else
                  {'op': 'add', 'path': '/metadata/labels', 'value': {'mutated': 'yes'}})
            response.update(patchType='JSONPatch', patch=base64.b64encode(json.dumps([op]).encode()).decode())
        return {'apiVersion': review['apiVersion'], 'kind': 'AdmissionReview', 'response': response}

    def configurations(self, backend: str, dead_port: int) -> list[dict[str, Any]]:
        ca = base64.b64encode(self.certs.ca_pem).decode()
        port = self.server.server_address[1]

        def hook(name: str, url: str, resources: list[str], policy: str = 'Fail') -> dict[str, Any]:
            return {'name': f'{name}.kopf.dev', 'sideEffects': 'None', 'admissionReviewVersions': ['v1'],
                    'failurePolicy': policy, 'timeoutSeconds': 5, 'clientConfig': {'url': url, 'caBundle': ca},
                    'namespaceSelector': {'matchLabels': {'admit': 'yes'}},
                    'rules': [{'operations': ['CREATE', 'UPDATE', 'DELETE'], 'apiGroups': [''],
                               'apiVersions': ['v1'], 'resources': resources}]}
        base = f'https://127.0.0.1:{port}/{backend}'
        dead = f'https://127.0.0.1:{dead_port}/nothing'
        return [
            {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'MutatingWebhookConfiguration',
             'metadata': {'name': 'diff-mutate'}, 'webhooks': [hook('mutate', f'{base}/mutate', ['configmaps'])]},
            {'apiVersion': 'admissionregistration.k8s.io/v1', 'kind': 'ValidatingWebhookConfiguration',
             'metadata': {'name': 'diff-validate'}, 'webhooks': [
                 hook('validate', f'{base}/validate', ['configmaps']),
                 hook('dead-ignored', dead, ['configmaps'], 'Ignore'),
                 hook('dead-failing', dead, ['secrets'])]},
        ]

    def take(self, backend: str) -> list[dict[str, Any]]:
        taken, self.reviews[backend] = self.reviews[backend], []
        # A real cluster's controllers (and the local cluster's) write each namespace's furniture at their own pace.
        return [review for review in taken if review.get('name') != compare.FURNITURE]


def summary(req: dict[str, Any]) -> dict[str, Any]:
    """What is compared of a review: the request's identity and payloads, not its uid or user."""
    def brief(obj: Any) -> Any:
        if not isinstance(obj, dict):
            return obj
        meta = obj.get('metadata') or {}
        return {'kind': obj.get('kind'), 'name': meta.get('name'), 'generateName': meta.get('generateName'),
                'labels': meta.get('labels'), 'data': obj.get('data')}
    keys = ('kind', 'resource', 'subResource', 'requestKind', 'requestResource', 'name', 'namespace',
            'operation', 'dryRun')
    generated = bool(((req.get('object') or {}).get('metadata') or {}).get('generateName'))
    return {**{k: req.get(k) for k in keys}, 'object': brief(req.get('object')),
            **({'name': '<generated>'} if generated and req.get('name') else {}),
            'oldObject': brief(req.get('oldObject')), 'options': (req.get('options') or {}).get('kind')}
