"""kopf.adopt() & co.: the same tables run over dicts, pykube objects and client models."""
from collections.abc import Callable
from typing import Any

import pytest

import kopf
from kopf._core import registries
from kopf._kits import hierarchies
from tests.kits import shapes

OWNER = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
         'metadata': {'name': 'owner', 'namespace': 'ns1', 'uid': 'uid-1', 'labels': {'app': 'demo', 'tier': 'x'}}}
CLUSTER_OWNER = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfCluster',
                 'metadata': {'name': 'global', 'uid': 'uid-9'}}
REF = {'controller': True, 'blockOwnerDeletion': True,
       'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'owner', 'uid': 'uid-1'}
OTHER_REF = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'name': 'cm', 'uid': 'uid-2'}


def pod(**meta: Any) -> dict[str, Any]:
    return {'apiVersion': 'v1', 'kind': 'Pod', 'metadata': meta}


def deployment(template_meta: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    template = {} if template_meta is None else {'metadata': template_meta}
    return {'apiVersion': 'apps/v1', 'kind': 'Deployment', 'metadata': meta,
            'spec': {'selector': {}, 'template': template}}


Case = tuple[Callable[..., Any], dict[str, Any], dict[str, Any], dict[str, Any]]
CASES: dict[str, Case] = {
    # owner references
    'ref-added': (kopf.append_owner_reference, {}, pod(name='p'), pod(name='p', ownerReferences=[REF])),
    'ref-appended-after-others': (kopf.append_owner_reference, {}, pod(ownerReferences=[OTHER_REF]),
                                  pod(ownerReferences=[OTHER_REF, REF])),
    'ref-same-uid-kept': (kopf.append_owner_reference, {}, pod(ownerReferences=[dict(OTHER_REF, uid='uid-1')]),
                          pod(ownerReferences=[dict(OTHER_REF, uid='uid-1')])),
    'ref-flags': (kopf.append_owner_reference, {'controller': False, 'block_owner_deletion': False}, pod(),
                  pod(ownerReferences=[dict(REF, controller=False, blockOwnerDeletion=False)])),
    'ref-no-metadata': (kopf.append_owner_reference, {}, {'kind': 'Pod'},
                        {'kind': 'Pod', 'metadata': {'ownerReferences': [REF]}}),
    'ref-removed': (kopf.remove_owner_reference, {}, pod(ownerReferences=[OTHER_REF, REF]),
                    pod(ownerReferences=[OTHER_REF])),
    'ref-remove-absent': (kopf.remove_owner_reference, {}, pod(name='p'), pod(name='p')),
    # labels
    'labels-owners': (kopf.label, {}, pod(), pod(labels={'app': 'demo', 'tier': 'x'})),
    'labels-existing-kept': (kopf.label, {}, pod(labels={'app': 'mine', 'own': '1'}),
                             pod(labels={'app': 'mine', 'own': '1', 'tier': 'x'})),
    'labels-forced': (kopf.label, {'forced': True}, pod(labels={'app': 'mine', 'own': '1'}),
                      pod(labels={'app': 'demo', 'own': '1', 'tier': 'x'})),
    'labels-explicit': (kopf.label, {'labels': {'k': 'v'}}, pod(labels={'k': 'old'}), pod(labels={'k': 'old'})),
    'labels-explicit-forced': (kopf.label, {'labels': {'k': 'v'}, 'forced': True}, pod(labels={'k': 'old'}),
                               pod(labels={'k': 'v'})),
    'labels-empty': (kopf.label, {'labels': {}}, pod(name='p'), pod(name='p')),
    'labels-nested': (kopf.label, {'labels': {'k': 'v'}, 'nested': 'spec.template'},
                      deployment(), deployment({'labels': {'k': 'v'}}, labels={'k': 'v'})),
    'labels-nested-kept': (kopf.label, {'labels': {'k': 'v'}, 'nested': ['spec.template']},
                           deployment({'name': 't', 'labels': {'k': 'old'}}),
                           deployment({'name': 't', 'labels': {'k': 'old'}}, labels={'k': 'v'})),
    'labels-nested-forced': (kopf.label, {'labels': {'k': 'v'}, 'nested': [('spec', 'template')], 'forced': True},
                             deployment({'labels': {'k': 'old'}}),
                             deployment({'labels': {'k': 'v'}}, labels={'k': 'v'})),
    'labels-nested-absent': (kopf.label, {'labels': {'k': 'v'}, 'nested': 'spec.template'},
                             pod(), pod(labels={'k': 'v'})),
    'labels-not-nested': (kopf.label, {'labels': {'k': 'v'}}, deployment(), deployment(labels={'k': 'v'})),
    # naming
    'naming-generated': (kopf.harmonize_naming, {}, pod(), pod(generateName='owner-')),
    'naming-strict': (kopf.harmonize_naming, {'strict': True}, pod(), pod(name='owner')),
    'naming-explicit': (kopf.harmonize_naming, {'name': 'kid'}, pod(), pod(generateName='kid-')),
    'naming-name-kept': (kopf.harmonize_naming, {'strict': True}, pod(name='p'), pod(name='p')),
    'naming-generate-kept': (kopf.harmonize_naming, {}, pod(generateName='p-'), pod(generateName='p-')),
    'naming-forced': (kopf.harmonize_naming, {'forced': True}, pod(name='p'), pod(generateName='owner-')),
    'naming-forced-strict': (kopf.harmonize_naming, {'forced': True, 'strict': True},
                             pod(generateName='p-'), pod(name='owner')),
    # namespaces
    'namespace-owners': (kopf.adjust_namespace, {}, pod(), pod(namespace='ns1')),
    'namespace-kept': (kopf.adjust_namespace, {}, pod(namespace='mine'), pod(namespace='mine')),
    'namespace-forced': (kopf.adjust_namespace, {'forced': True}, pod(namespace='mine'), pod(namespace='ns1')),
    'namespace-explicit': (kopf.adjust_namespace, {'namespace': 'ns2'}, pod(), pod(namespace='ns2')),
    'namespace-cluster-owner': (kopf.adjust_namespace, {'_owner': CLUSTER_OWNER, 'forced': True},
                                pod(namespace='mine'), pod(namespace='mine')),
    # adoption
    'adopt': (kopf.adopt, {}, pod(),
              pod(ownerReferences=[REF], generateName='owner-', namespace='ns1', labels={'app': 'demo', 'tier': 'x'})),
    'adopt-strict': (kopf.adopt, {'strict': True}, pod(namespace='mine', labels={'app': 'mine'}),
                     pod(ownerReferences=[REF], name='owner', namespace='mine', labels={'app': 'mine', 'tier': 'x'})),
    'adopt-forced': (kopf.adopt, {'forced': True}, pod(name='p', namespace='mine', labels={'app': 'mine'}),
                     pod(ownerReferences=[REF], generateName='owner-', namespace='ns1',
                         labels={'app': 'demo', 'tier': 'x'})),
    'adopt-nested': (kopf.adopt, {'nested': 'spec.template'}, deployment(name='d'),
                     deployment({'labels': {'app': 'demo', 'tier': 'x'}}, name='d', ownerReferences=[REF],
                                namespace='ns1', labels={'app': 'demo', 'tier': 'x'})),
    'adopt-cluster-owner': (kopf.adopt, {'_owner': CLUSTER_OWNER}, pod(),
                            pod(ownerReferences=[dict(REF, kind='KopfCluster', name='global', uid='uid-9')],
                                generateName='global-')),
}


@pytest.mark.parametrize('shape', shapes.SHAPES)
@pytest.mark.parametrize('case', list(CASES))
@pytest.mark.parametrize('owner_via', ['argument', 'context'])
def test_table(case: str, shape: str, owner_via: str) -> None:
    fn, kwargs, before, after = CASES[case]
    kwargs = dict(kwargs)
    owner = kwargs.pop('_owner', OWNER)
    obj = shapes.build(shape, before)
    if owner_via == 'argument':
        _call_with_owner(fn, obj, owner, kwargs)
    else:
        with hierarchies.owner_context(owner):
            assert fn(obj, **kwargs) is None
    assert shapes.dump(shape, obj) == after


def _call_with_owner(fn: Callable[..., Any], obj: Any, owner: dict[str, Any], kwargs: dict[str, Any]) -> None:
    """Pass the owner the way each function takes it: as the owner, or as its name/namespace/labels."""
    meta = owner['metadata']
    if fn in (kopf.append_owner_reference, kopf.remove_owner_reference, kopf.adopt):
        kwargs.setdefault('owner', owner)
    elif fn is kopf.label:
        kwargs.setdefault('labels', meta.get('labels'))
    elif fn is kopf.harmonize_naming:
        kwargs.setdefault('name', meta.get('name'))
    elif fn is kopf.adjust_namespace:
        if meta.get('namespace') is None:  # a cluster-scoped owner: nothing to pass, nothing to guess
            return
        kwargs.setdefault('namespace', meta.get('namespace'))
    assert fn(obj, **kwargs) is None


@pytest.mark.parametrize('shape', shapes.SHAPES)
def test_nested_iterables_and_generators(shape: str) -> None:
    objs = [shapes.build(shape, pod(name=f'p{i}')) for i in range(5)]
    kopf.adopt([objs[0], (objs[1], [objs[2]]), (obj for obj in objs[3:])], OWNER)
    for obj in objs:
        dumped = shapes.dump(shape, obj)
        assert dumped['metadata']['ownerReferences'] == [REF]
        assert dumped['metadata']['namespace'] == 'ns1'
        assert dumped['metadata']['labels'] == {'app': 'demo', 'tier': 'x'}


@pytest.mark.parametrize('shape', shapes.SHAPES)
def test_owner_in_any_shape(shape: str) -> None:
    owner = shapes.build(shape, OWNER | {'kind': 'Pod'})
    obj: dict[str, Any] = {}
    kopf.adopt(obj, owner)
    assert obj['metadata']['ownerReferences'] == [dict(REF, kind='Pod')]
    assert obj['metadata']['generateName'] == 'owner-'
    assert obj['metadata']['namespace'] == 'ns1'
    assert obj['metadata']['labels'] == {'app': 'demo', 'tier': 'x'}


def test_model_targets_get_model_owner_references() -> None:
    import kubernetes.client

    from tests.kits import legacy_models
    modern = shapes.build('kubernetes', deployment())
    legacy = shapes.build('legacy', deployment())
    kopf.adopt([modern, legacy], OWNER, nested='spec.template')
    assert isinstance(modern.metadata.owner_references[0], kubernetes.client.V1OwnerReference)
    assert isinstance(modern.spec.template.metadata, kubernetes.client.V1ObjectMeta)
    assert isinstance(legacy.metadata.owner_references[0], legacy_models.V1OwnerReference)
    assert isinstance(legacy.spec.template.metadata, legacy_models.V1ObjectMeta)


def test_model_without_metadata_gets_one() -> None:
    import kubernetes.client
    obj = kubernetes.client.V1ConfigMap()
    kopf.adopt(obj, OWNER)
    assert obj.metadata is not None and obj.metadata.owner_references is not None
    assert obj.metadata.generate_name == 'owner-'
    assert obj.metadata.labels == {'app': 'demo', 'tier': 'x'}
    assert obj.metadata.owner_references[0].uid == 'uid-1'


def test_force_is_a_deprecated_alias_of_forced() -> None:
    obj = pod(labels={'k': 'old'})
    with pytest.deprecated_call(match='forced'):
        kopf.label(obj, {'k': 'new'}, force=True)
    assert obj['metadata']['labels'] == {'k': 'new'}
    with pytest.deprecated_call():
        kopf.label(obj, {'k': 'newer'}, forced=True, force=False)  # the alias wins if given
    assert obj['metadata']['labels'] == {'k': 'new'}


OWNERLESS_CALLS: dict[str, Callable[[Any], None]] = {
    'adopt': lambda obj: kopf.adopt(obj),
    'append_owner_reference': lambda obj: kopf.append_owner_reference(obj),
    'remove_owner_reference': lambda obj: kopf.remove_owner_reference(obj),
    'label': lambda obj: kopf.label(obj),
    'harmonize_naming': lambda obj: kopf.harmonize_naming(obj),
    'adjust_namespace': lambda obj: kopf.adjust_namespace(obj),
}


@pytest.mark.parametrize('call', list(OWNERLESS_CALLS))
def test_no_owner_outside_of_handlers(call: str) -> None:
    obj = pod()
    with pytest.raises(LookupError, match='Owner must be set explicitly'):
        OWNERLESS_CALLS[call](obj)
    assert obj == pod()


def test_explicit_values_need_no_owner() -> None:
    obj = pod()
    kopf.label(obj, {'k': 'v'})
    kopf.harmonize_naming(obj, 'kid', strict=True)
    kopf.adjust_namespace(obj, 'ns')
    assert obj == pod(labels={'k': 'v'}, name='kid', namespace='ns')


def owner() -> Any:
    current = registries.execution.get()
    return current.owner if current is not None else None


def test_owner_context_is_reset() -> None:
    with hierarchies.owner_context(OWNER):
        with hierarchies.owner_context(CLUSTER_OWNER):
            assert owner() is CLUSTER_OWNER
        assert owner() is OWNER
    assert owner() is None


def subhandling(body: Any) -> Any:
    """A sub-handling context of a change handler whose cause's body is `body` (nothing else is read)."""
    from types import SimpleNamespace
    context = SimpleNamespace(cause=SimpleNamespace(body=kopf.Body(body)))
    return registries.Execution(handler=None, subhandling=context)  # type: ignore[arg-type]


def test_owner_from_the_change_handlers_cause() -> None:
    token = registries.execution.set(subhandling(OWNER))
    try:
        obj = pod()
        kopf.adopt(obj)
    finally:
        registries.execution.reset(token)
    assert obj['metadata']['ownerReferences'] == [REF]
    assert obj['metadata']['namespace'] == 'ns1'


def test_owner_context_wins_over_the_cause() -> None:
    token = registries.execution.set(subhandling(CLUSTER_OWNER))
    try:
        with hierarchies.owner_context(kopf.Body(OWNER)):
            obj = pod()
            kopf.append_owner_reference(obj)
    finally:
        registries.execution.reset(token)
    assert obj['metadata']['ownerReferences'] == [REF]


def test_build_references() -> None:
    assert kopf.build_object_reference(OWNER) == {
        'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample', 'name': 'owner', 'uid': 'uid-1', 'namespace': 'ns1'}
    assert kopf.build_object_reference(CLUSTER_OWNER)['namespace'] is None
    assert kopf.build_owner_reference(OWNER) == REF
    assert list(kopf.build_owner_reference(OWNER)) == list(REF)
    assert kopf.build_owner_reference(kopf.Body(OWNER), controller=False, block_owner_deletion=False) == dict(
        REF, controller=False, blockOwnerDeletion=False)


@pytest.mark.parametrize('shape', shapes.SHAPES)
def test_build_references_from_any_shape(shape: str) -> None:
    body = shapes.build(shape, OWNER | {'kind': 'Pod'})
    assert kopf.build_owner_reference(body) == dict(REF, kind='Pod')
    assert kopf.build_object_reference(body)['namespace'] == 'ns1'


@pytest.mark.parametrize('objs', ['a-string', b'bytes', 42, None])
def test_not_objects(objs: Any) -> None:
    with pytest.raises(TypeError, match='Kubernetes object'):
        kopf.adopt(objs, OWNER)


def test_read_only_bodies_are_refused() -> None:
    with pytest.raises(TypeError, match='read-only'):
        kopf.harmonize_naming(kopf.Body({'kind': 'Pod'}), 'x')


def test_nested_field_that_is_not_an_object() -> None:
    with pytest.raises(TypeError, match=r"'spec\.template' is not an object"):
        kopf.label({'spec': {'template': 'oops'}}, {'k': 'v'}, nested='spec.template')
