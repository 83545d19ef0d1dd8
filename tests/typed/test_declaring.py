"""`@kopf.custom_resource`: the names checked at once, the class remembered, plurals made."""
from typing import Any

import pytest

import kopf
from kopf._typed import declaring


@pytest.mark.parametrize('kind, plural', [
    ('Database', 'databases'), ('Policy', 'policies'), ('Box', 'boxes'), ('Match', 'matches'),
    ('Mesh', 'meshes'), ('Gateway', 'gateways'), ('Status', 'statuses'), ('Quiz', 'quizes'),
])
def test_plurals(kind: str, plural: str) -> None:
    assert declaring.pluralize(kind) == plural


def test_a_declared_class_keeps_its_declaration_and_is_remembered() -> None:
    @kopf.custom_resource('example.com', 'v1', kind='Thing', shortnames=['th'])
    class Thing:
        pass
    declaration = declaring.declaration_of(Thing)
    assert declaration is not None
    assert (declaration.plural, declaration.singular, declaration.crd_name) == ('things', 'thing', 'things.example.com')
    assert declaration.shortnames == ('th',)
    assert declaring.DECLARED[-1] is Thing

    class Sub(Thing):
        pass
    assert declaring.declaration_of(Sub) is None   # a subclass is not a version by inheritance


@pytest.mark.parametrize('kwargs, message', [
    ({'group': 'example'}, "the group 'example' must be a DNS subdomain with a dot"),
    ({'group': 'Example.com'}, 'must be a DNS subdomain'),
    ({'version': 'V1'}, "the version 'V1' must be a lower-case DNS label"),
    ({'kind': 'thing'}, "the kind 'thing' must be CamelCase"),
    ({'plural': 'Things'}, "the plural 'Things' must be a lower-case DNS label"),
    ({'shortnames': ['t_h']}, "the short name 't_h'"),
    ({'categories': ['All']}, "the category 'All'"),
    ({'scope': 'Namespace'}, "the scope 'Namespace' must be"),
    ({'printer_columns': [kopf.PrinterColumn('X', '.spec.x', type='text')]}, "has the type 'text'"),
    ({'printer_columns': [('X', '.spec.x')]}, 'printer columns are kopf.PrinterColumn'),
    ({'storage': True, 'served': False}, 'the storage version must be served'),
])
def test_wrong_names_fail_at_once_naming_the_class(kwargs: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {'group': 'example.com', 'version': 'v1', 'kind': 'Thing', **kwargs}
    group, version = arguments.pop('group'), arguments.pop('version')
    with pytest.raises(declaring.DeclarationError) as info:
        @kopf.custom_resource(group, version, **arguments)
        class Thing:
            pass
    assert message in str(info.value)
    assert str(info.value).startswith(f'{__name__}:test_wrong_names_fail_at_once_naming_the_class.<locals>.Thing: ')


def test_markers_decorate_classes_but_list_markers_do_not() -> None:
    @kopf.Rule('self.a > 0')
    @kopf.Atomic()
    class Model:
        pass
    assert Model.__kopf_markers__ == (kopf.Atomic(), kopf.Rule('self.a > 0'))  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match='applies to a list or a field'):
        kopf.ListSet()(Model)
    with pytest.raises(TypeError, match=r'kopf\.ListMap needs the names of the key fields'):
        kopf.ListMap()
