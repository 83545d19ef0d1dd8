"""Parent-child hierarchies: owner references, labels, names and namespaces of the children.

Every function mutates the given objects in place and returns None. `objs` is one object or
(nested) iterables of them; an object is a mutable dict, a pykube-ng object, or a model of the
`kubernetes` / `kubernetes_asyncio` client (see `kopf._kits.objects`).

The owner defaults to the body of the resource handler being executed now: the `owner` of the one
execution context (`registries.execution`), which the reactor sets around every handler invocation
from its `body` kwarg (`invoking.invoke_handler`: change, event, delete handlers alike), or
`owner_context()` in tests, else the cause of the change handler being executed (its sub-handling
context). Outside of handlers, an owner must be given explicitly, or `LookupError` is raised.
"""
import contextlib
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypedDict

from kopf._core import registries
from kopf._kits import objects
from kopf._shared import fields

K8sObject = Any   # a mutable dict, a pykube-ng object, a kubernetes/kubernetes_asyncio model
K8sObjects = Any  # one K8sObject, or (nested) iterables of them
NestedFields = fields.FieldSpec | Iterable[fields.FieldSpec] | None


class ObjectReference(TypedDict, total=False):
    apiVersion: str
    kind: str
    namespace: str | None
    name: str
    uid: str


class OwnerReference(TypedDict, total=False):
    controller: bool | None
    blockOwnerDeletion: bool | None
    apiVersion: str
    kind: str
    name: str
    uid: str


@contextlib.contextmanager
def owner_context(body: Mapping[str, Any]) -> Iterator[None]:
    """Make `body` the default owner within the block (the rest of the execution context stays)."""
    current = registries.execution.get()
    token = registries.execution.set(registries.Execution(
        handler=current.handler if current is not None else None, owner=body,
        subhandling=current.subhandling if current is not None else None))
    try:
        yield
    finally:
        registries.execution.reset(token)


def build_object_reference(body: K8sObject) -> ObjectReference:
    """A reference to the object (apiVersion, kind, name, uid, namespace), e.g. an Event's `involvedObject`."""
    meta = objects.get(body, 'metadata', {})
    return ObjectReference(
        apiVersion=objects.get(body, 'apiVersion'),
        kind=objects.get(body, 'kind'),
        name=objects.get(meta, 'name'),
        uid=objects.get(meta, 'uid'),
        namespace=objects.get(meta, 'namespace'),
    )


def build_owner_reference(body: K8sObject, *, controller: bool | None = True,
                          block_owner_deletion: bool | None = True) -> OwnerReference:
    """An owner reference to the object, as its children carry it in `metadata.ownerReferences`."""
    meta = objects.get(body, 'metadata', {})
    return OwnerReference(
        controller=controller,
        blockOwnerDeletion=block_owner_deletion,
        apiVersion=objects.get(body, 'apiVersion'),
        kind=objects.get(body, 'kind'),
        name=objects.get(meta, 'name'),
        uid=objects.get(meta, 'uid'),
    )


def append_owner_reference(objs: K8sObjects, owner: K8sObject | None = None, *,
                           controller: bool | None = True, block_owner_deletion: bool | None = True) -> None:
    """Add an owner reference to the owner, unless there is already one with the owner's uid."""
    ref = build_owner_reference(_guess_owner(owner), controller=controller, block_owner_deletion=block_owner_deletion)
    for obj in objects.iterate(objs):
        meta = objects.ensure(obj, 'metadata')
        refs = objects.ensure(meta, 'ownerReferences')
        if not any(objects.get(existing, 'uid') == ref['uid'] for existing in refs):
            refs.append(objects.make_item(meta, 'ownerReferences', ref))


def remove_owner_reference(objs: K8sObjects, owner: K8sObject | None = None) -> None:
    """Remove the owner references with the owner's uid (other references stay)."""
    uid = build_owner_reference(_guess_owner(owner))['uid']
    for obj in objects.iterate(objs):
        refs = objects.resolve(obj, ('metadata', 'ownerReferences'))
        if refs:
            refs[:] = [ref for ref in refs if objects.get(ref, 'uid') != uid]


def label(objs: K8sObjects, labels: Mapping[str, str | None] | None = None, *,
          forced: bool = False, nested: NestedFields = None, force: bool | None = None) -> None:
    """Add the labels (the owner's by default); existing values stay unless `forced`.

    `nested`: field paths (`'spec.template'`, or several of them) of embedded objects with their own
    metadata, labelled too if they exist. `force=` is a deprecated alias of `forced=`.
    """
    if force is not None:
        warnings.warn('label(force=...) is deprecated; use label(forced=...).', DeprecationWarning, stacklevel=2)
        forced = force
    if labels is None:
        labels = _owner_field(_guess_owner(None), 'labels') or {}
    _label(objs, labels, forced=forced, nested=nested)


def harmonize_naming(objs: K8sObjects, name: str | None = None, *,
                     forced: bool = False, strict: bool = False) -> None:
    """Name the nameless objects after the owner: `generateName: <name>-`, or `name: <name>` if `strict`.

    Objects with a name or a generateName stay as they are, unless `forced` (then the other of the
    two fields is removed, so that the new one takes effect).
    """
    if name is None:
        name = _owner_field(_guess_owner(None), 'name')
    _harmonize_naming(objs, name, forced=forced, strict=strict)


def adjust_namespace(objs: K8sObjects, namespace: str | None = None, *, forced: bool = False) -> None:
    """Put the namespace-less objects into the namespace (the owner's by default; `forced`: all objects).

    A cluster-scoped owner (no namespace) leaves the objects as they are.
    """
    if namespace is None:
        namespace = _owner_field(_guess_owner(None), 'namespace')
    _adjust_namespace(objs, namespace, forced=forced)


def adopt(objs: K8sObjects, owner: K8sObject | None = None, *,
          forced: bool = False, strict: bool = False, nested: NestedFields = None) -> None:
    """Make the objects the owner's children: owner reference, naming, namespace and labels."""
    real_owner = _guess_owner(owner)
    children = list(objects.iterate(objs))  # generators are iterated once, here
    append_owner_reference(children, owner=real_owner)
    _harmonize_naming(children, _owner_field(real_owner, 'name'), forced=forced, strict=strict)
    _adjust_namespace(children, _owner_field(real_owner, 'namespace'), forced=forced)
    _label(children, _owner_field(real_owner, 'labels') or {}, forced=forced, nested=nested)


def _guess_owner(owner: K8sObject | None) -> K8sObject:
    if owner is not None:
        return owner
    current = registries.execution.get()
    body = current.owner if current is not None else None
    if body is None and current is not None and current.subhandling is not None:
        body = current.subhandling.cause.body
    if body is None:
        raise LookupError('Owner must be set explicitly, since running outside of a resource handler.')
    return body


def _owner_field(owner: K8sObject, field: str) -> Any:
    return objects.get(objects.get(owner, 'metadata', {}), field)


def _label(objs: K8sObjects, labels: Mapping[str, str | None], *, forced: bool, nested: NestedFields) -> None:
    paths = _parse_nested(nested)
    for obj in objects.iterate(objs):
        _label_one(obj, labels, forced=forced)
        for path in paths:
            embedded = objects.resolve(obj, path)
            if embedded is None:
                continue
            if not objects.is_object(embedded):
                raise TypeError(f'The nested field {".".join(path)!r} is not an object: {embedded!r}')
            _label_one(embedded, labels, forced=forced)


def _label_one(obj: K8sObject, labels: Mapping[str, str | None], *, forced: bool) -> None:
    if not labels:
        return
    meta = objects.ensure(obj, 'metadata')
    existing = objects.ensure(meta, 'labels')
    for key, value in labels.items():
        if forced:
            existing[key] = value
        else:
            existing.setdefault(key, value)


def _parse_nested(nested: NestedFields) -> list[fields.FieldPath]:
    if nested is None:
        return []
    if isinstance(nested, str):
        return [fields.parse_field(nested)]
    return [fields.parse_field(spec) for spec in nested]


def _harmonize_naming(objs: K8sObjects, name: str | None, *, forced: bool, strict: bool) -> None:
    if name is None:
        return
    for obj in objects.iterate(objs):
        meta = objects.ensure(obj, 'metadata')
        if forced or not (objects.get(meta, 'name') or objects.get(meta, 'generateName')):
            if strict:
                objects.put(meta, 'name', name)
                objects.drop(meta, 'generateName')
            else:
                objects.put(meta, 'generateName', f'{name}-')
                objects.drop(meta, 'name')


def _adjust_namespace(objs: K8sObjects, namespace: str | None, *, forced: bool) -> None:
    if namespace is None:
        return
    for obj in objects.iterate(objs):
        meta = objects.ensure(obj, 'metadata')
        if forced or not objects.get(meta, 'namespace'):
            objects.put(meta, 'namespace', namespace)
