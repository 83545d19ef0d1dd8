"""CRDs from the declared classes: versions grouped and ordered, storage and names checked, columns typed."""
import datetime
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

import kopf
from kopf._typed import definitions
from kopf._typed.extensions import SchemaError


class Spec(BaseModel):
    size: int = 1
    engine: str = 'a'


class Status(BaseModel):
    replicas: int = 0
    started: datetime.datetime | None = None


def declare(version: str = 'v1', kind: str = 'Thing', **kwargs: Any) -> Any:
    """A decorator of a spec class (and a status class, or None): a resource class of them, declared."""
    def decorate(spec: type = Spec, status: type | None = Status) -> type:
        namespace: dict[str, Any] = {'__module__': __name__, '__annotations__': {'spec': spec}}
        if status is not None:
            namespace['__annotations__']['status'] = status | None
            namespace['status'] = None
        cls = type(f'{kind}{version.upper()}', (BaseModel,), namespace)
        return kopf.custom_resource('example.com', version, kind=kind, **kwargs)(cls)
    return decorate


def test_one_version_makes_a_crd() -> None:
    cls = declare(shortnames=['th'], categories=['all'])()
    crd = definitions.assemble([cls]).crds[0]
    assert crd['metadata'] == {'name': 'things.example.com'}
    assert crd['spec']['names'] == {'kind': 'Thing', 'listKind': 'ThingList', 'plural': 'things', 'singular': 'thing',
                                    'shortNames': ['th'], 'categories': ['all']}
    assert crd['spec']['scope'] == 'Namespaced'
    version, = crd['spec']['versions']
    assert (version['name'], version['served'], version['storage']) == ('v1', True, True)
    assert version['subresources'] == {'status': {}}
    assert 'conversion' not in crd['spec']   # None, the server's default


def test_versions_are_grouped_ordered_and_one_is_stored() -> None:
    class Spec2(Spec):
        extra: bool = False
    v1 = declare('v1', deprecated=True)()
    v2 = declare('v2', storage=True)(Spec2)
    beta = declare('v1beta1', served=False)()
    assembled = definitions.assemble([beta, v1, v2])
    crd, = assembled.crds
    assert [(v['name'], v['served'], v['storage']) for v in crd['spec']['versions']] == [
        ('v2', True, True), ('v1', True, False), ('v1beta1', False, False)]
    assert crd['spec']['versions'][1]['deprecated'] is True
    assert assembled.sources['things.example.com'] == [f'{__name__}:ThingV1BETA1', f'{__name__}:ThingV1',
                                                       f'{__name__}:ThingV2']


@pytest.mark.parametrize('versions, message', [
    ([{'version': 'v1'}, {'version': 'v2'}], 'things.example.com: exactly one version must be storage=True, not 0'),
    ([{'version': 'v1', 'storage': True}, {'version': 'v2', 'storage': True}], 'not 2'),
    ([{'version': 'v1', 'storage': False}], 'the only version of things.example.com must be its storage version'),
    ([{'version': 'v1', 'storage': True}, {'version': 'v1'}], 'both declare things.example.com v1'),
    ([{'version': 'v1', 'storage': True}, {'version': 'v2', 'scope': 'Cluster'}], 'their scope differs'),
    ([{'version': 'v1', 'storage': True}, {'version': 'v2', 'shortnames': ['x']}], 'their shortnames differs'),
])
def test_versions_that_do_not_fit_together(versions: list[dict[str, Any]], message: str) -> None:
    classes = [declare(**kwargs)() for kwargs in versions]
    with pytest.raises(SchemaError, match=message):
        definitions.assemble(classes)


def test_versions_that_need_a_webhook() -> None:
    class OtherSpec(BaseModel):
        size: str = '1'
        name: str
    v1 = declare('v1', storage=True)()
    v2 = declare('v2')(OtherSpec)
    with pytest.raises(SchemaError) as info:
        definitions.assemble([v1, v2])
    assert str(info.value) == (
        f'Thing v1 ({__name__}:ThingV1) and v2 ({__name__}:ThingV2) need a conversion webhook: '
        'spec.size is an integer in v1 and a string in v2; spec.name is required in v2 and absent in v1; '
        'kopf supports only conversion: None so far (the same stored fields in all versions).')


def test_columns_fields_scale_and_status() -> None:
    cls = declare(printer_columns=[kopf.PrinterColumn('Size', '.spec.size'),
                                   kopf.PrinterColumn('Started', '.status.started', priority=1, description='When.'),
                                   kopf.PrinterColumn('Ready', '.status.conditions[0].status', type='string')],
                  selectable_fields=['.spec.engine'], scale=kopf.Scale(spec_replicas='.spec.size'))()
    version = definitions.assemble([cls]).crds[0]['spec']['versions'][0]
    assert version['additionalPrinterColumns'] == [
        {'name': 'Size', 'type': 'integer', 'jsonPath': '.spec.size'},
        {'name': 'Started', 'type': 'date', 'jsonPath': '.status.started', 'description': 'When.', 'priority': 1},
        {'name': 'Ready', 'type': 'string', 'jsonPath': '.status.conditions[0].status'}]
    assert version['selectableFields'] == [{'jsonPath': '.spec.engine'}]
    assert version['subresources'] == {'status': {}, 'scale': {'specReplicasPath': '.spec.size',
                                                               'statusReplicasPath': '.status.replicas'}}


@pytest.mark.parametrize('kwargs, message', [
    ({'printer_columns': [kopf.PrinterColumn('X', '.spec.nope')]},
     "the printer column 'X': .spec.nope is not a field"),
    ({'printer_columns': [kopf.PrinterColumn('X', '.status')]}, '.status is not a scalar'),
    ({'selectable_fields': ['.spec.nope']}, 'the selectable field .spec.nope: .spec.nope is not a field'),
    ({'scale': kopf.Scale(spec_replicas='.status.size')}, "path .status.size must start with .spec."),
])
def test_columns_and_fields_that_are_not_in_the_schema(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(SchemaError, match=message.replace('.', r'\.').replace('(', r'\(')):
        definitions.assemble([declare(**kwargs)()])


def test_no_status_no_status_subresource() -> None:
    version = definitions.assemble([declare()(Spec, None)]).crds[0]['spec']['versions'][0]
    assert 'subresources' not in version


def test_undeclared_classes_are_refused() -> None:
    with pytest.raises(SchemaError, match=r'is not declared with @kopf\.custom_resource'):
        definitions.assemble([Spec])


def test_the_yaml_names_its_sources_and_reads_back() -> None:
    assembled = definitions.assemble([declare()()])
    text = assembled.dump()
    assert text.startswith(f'# Generated by `kopf crd` from {__name__}:ThingV1: edit the models, not this file.\n---\n')
    assert list(yaml.safe_load_all(text)) == assembled.crds


def test_tidy_orders_the_keys() -> None:
    schema = {'properties': {'a': {'default': 1, 'x-kubernetes-validations': [], 'type': 'integer'}},
              'required': ['a'], 'type': 'object', 'description': 'd'}
    tidied = definitions.tidy(schema)
    assert list(tidied) == ['description', 'type', 'required', 'properties']
    assert list(tidied['properties']['a']) == ['type', 'default', 'x-kubernetes-validations']
