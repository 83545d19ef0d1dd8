"""CustomResourceDefinitions: acceptance rules, defaults, status conditions, and the resources they serve."""
import re
from collections.abc import Mapping
from typing import Any

from kopf._cluster import statuses
from kopf._cluster.openapi import conforming
from kopf._cluster.pipeline import metadata

Cause = dict[str, Any]
#: The verbs of a custom resource, in the order a real server lists them in discovery.


def causes_of(crd: Mapping[str, Any]) -> list[Cause]:
    """Validation causes for a CRD body (its name, group, names, scope, versions and their schemas).

    Empty if the CRD is acceptable."""
    spec: Mapping[str, Any] = crd['spec'] if isinstance(crd.get('spec'), Mapping) else {}
    names: Mapping[str, Any] = spec['names'] if isinstance(spec.get('names'), Mapping) else {}
    group, plural = spec.get('group') or '', names.get('plural') or ''
    causes: list[Cause] = []
    name = crd.get('metadata', {}).get('name', '')
    if name != f'{plural}.{group}':
        causes.append(statuses.cause('FieldValueInvalid', 'metadata.name',
                                     f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group'))
    if not group:
        causes.append(statuses.cause('FieldValueRequired', 'spec.group', 'Required value'))
    elif '.' not in group or not re.fullmatch(metadata.SUBDOMAIN_RE, group):
        causes.append(statuses.cause('FieldValueInvalid', 'spec.group',
                                     f'Invalid value: "{group}": should be a domain with at least one dot'))
    for key in ('plural', 'kind'):
        if not names.get(key):
            causes.append(statuses.cause('FieldValueRequired', f'spec.names.{key}', 'Required value'))
    if spec.get('scope') not in ('Namespaced', 'Cluster'):
        causes.append(statuses.cause('FieldValueNotSupported', 'spec.scope',
                                     f'Unsupported value: "{spec.get("scope", "")}": '
                                     'supported values: "Cluster", "Namespaced"'))
    causes.extend(_version_causes(spec.get('versions')))
    return causes


def _version_causes(versions: Any) -> list[Cause]:
    if not isinstance(versions, list) or not versions:
        return [statuses.cause('FieldValueRequired', 'spec.versions', 'Required value: must have exactly one version '
                               'marked as storage version')]
    causes: list[Cause] = []
    names = [v.get('name') for v in versions if isinstance(v, Mapping)]
    if len(set(names)) != len(names):
        causes.append(statuses.cause('FieldValueInvalid', 'spec.versions', 'Invalid value: must contain unique '
                                     'version names'))
    if sum(1 for v in versions if isinstance(v, Mapping) and v.get('storage')) != 1:
        causes.append(statuses.cause('FieldValueInvalid', 'spec.versions', 'Invalid value: must have exactly one '
                                     'version marked as storage version'))
    if not any(isinstance(v, Mapping) and v.get('served') for v in versions):
        causes.append(statuses.cause('FieldValueInvalid', 'spec.versions', 'Invalid value: must serve at least one '
                                     'version'))
    for index, version in enumerate(versions):
        schema = ((version or {}).get('schema') or {}).get('openAPIV3Schema')
        field = f'spec.versions[{index}].schema.openAPIV3Schema'
        structural = conforming.check_structural(schema, field)
        rules_field = 'spec.validation.openAPIV3Schema' if _shared_schema(versions) else field
        causes.extend(structural or conforming.check_rules(schema, rules_field))
    return causes


def _shared_schema(versions: list[Any]) -> bool:
    """All versions have one schema: a real server validates it once, as `spec.validation` (its internal form)."""
    schemas = [((v or {}).get('schema') or {}).get('openAPIV3Schema') for v in versions if isinstance(v, Mapping)]
    return bool(schemas) and all(s == schemas[0] for s in schemas)


def with_defaults(crd: dict[str, Any]) -> dict[str, Any]:
    """Fill the defaults real servers store: singular, listKind, conversion strategy."""
    spec = crd['spec']
    names = spec['names']
    names.setdefault('singular', names['kind'].lower())
    names.setdefault('listKind', names['kind'] + 'List')
    spec.setdefault('conversion', {'strategy': 'None'})
    return crd


def initial_status(crd: Mapping[str, Any]) -> dict[str, Any]:
    """The status a CRD is stored with, before its names are accepted (what a create answers)."""
    storage = [v['name'] for v in crd['spec']['versions'] if v.get('storage')]
    return {'conditions': None, 'acceptedNames': {'plural': '', 'kind': ''}, 'storedVersions': storage}


def established_status(crd: Mapping[str, Any], now: str) -> dict[str, Any]:
    spec = crd['spec']
    storage = next(v['name'] for v in spec['versions'] if v.get('storage'))
    conditions = [
        {'type': 'NamesAccepted', 'status': 'True', 'lastTransitionTime': now,
         'reason': 'NoConflicts', 'message': 'no conflicts found'},
        {'type': 'Established', 'status': 'True', 'lastTransitionTime': now,
         'reason': 'InitialNamesAccepted', 'message': 'the initial names have been accepted'},
    ]
    stored = list((crd.get('status') or {}).get('storedVersions') or [])
    return {'acceptedNames': dict(spec['names']), 'conditions': conditions,
            'storedVersions': stored if storage in stored else stored + [storage]}


