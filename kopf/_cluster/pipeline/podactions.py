"""Storage-level operations on Pods: `pods/binding` (and the `bindings` resource) and `pods/eviction`.

Without a scheduler or kubelets, these do to the stored Pod what a real API server does to it:
a Binding sets `spec.nodeName` (once: a second one is a 409), an Eviction deletes the Pod as a
DELETE with the Eviction's `deleteOptions` would (Pods never run here, and a real server ignores
disruption budgets for Pods that do not run). Both answer `201` with a `Success` Status.
"""
import dataclasses
from typing import Any

from kopf._cluster import jsoncodec, statuses
from kopf._cluster.apis.routing import Target
from kopf._cluster.pipeline import writing
from kopf._cluster.pipeline.state import State
from kopf._shared import resourcetable

SUBRESOURCES = ('binding', 'eviction')
BINDINGS = ('', 'bindings')
CREATED = jsoncodec.dumps({'kind': 'Status', 'apiVersion': 'v1', 'metadata': {}, 'status': 'Success', 'code': 201})


def handles(target: Target) -> bool:
    return target.subresource in SUBRESOURCES or target.resource.key == BINDINGS


def act(state: State, target: Target, body: Any, options: writing.Options) -> writing.Outcome:
    obj = writing.as_object(body)
    name = (obj.get('metadata') or {}).get('name') or ''
    if target.resource.key == BINDINGS:   # POST .../bindings: the Binding names the Pod
        target = Target(_pods(), target.namespace, name, 'binding')
    elif name and name != target.name:
        kind = 'Binding' if target.subresource == 'binding' else 'Eviction'
        raise statuses.bad_request(f'name in URL does not match name in {kind} object')
    pod = dataclasses.replace(target, subresource=None)
    if target.subresource == 'binding':
        return _bind(state, pod, obj, options)
    writing.delete(state, pod, writing.Options(
        dry_run=options.dry_run, preconditions=dict((obj.get('deleteOptions') or {}).get('preconditions') or {})))
    return writing.Outcome(201, CREATED)


def _bind(state: State, pod: Target, binding: dict[str, Any], options: writing.Options) -> writing.Outcome:
    current = writing.existing(state, pod)
    node = (binding.get('target') or {}).get('name') or ''
    if not node:
        raise statuses.invalid('Binding', '', pod.name or '', [statuses.cause(
            'FieldValueRequired', 'target.name', 'Required value')])
    assigned = (current.get('spec') or {}).get('nodeName')
    if assigned:
        raise statuses.conflict('pods/binding', '', 'pods/binding', pod.name or '',
                                f'pod {pod.name} is already assigned to node "{assigned}"')
    writing.patch(state, pod, 'application/merge-patch+json', {'spec': {'nodeName': node}},
                  dataclasses.replace(options, validation='Ignore'))
    return writing.Outcome(201, CREATED)


def _pods() -> resourcetable.Resource:
    return next(r for r in resourcetable.BUILTINS if r.key == ('', 'pods'))
