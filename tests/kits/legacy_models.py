"""Models shaped like the older generated clients (`kubernetes` < 35, `kubernetes_asyncio`).

Plain classes with `openapi_types` (types as strings: `dict(str, str)`, `list[V1OwnerReference]`)
and `attribute_map` (snake_case attribute → camelCase API field); all models in one module, as the
hierarchies find the classes of absent fields by name next to the model being filled.
"""
from typing import Any, ClassVar


class LegacyModel:
    openapi_types: ClassVar[dict[str, str]] = {}
    attribute_map: ClassVar[dict[str, str]] = {}

    def __init__(self, **kwargs: Any) -> None:
        unknown = set(kwargs) - set(self.attribute_map)
        if unknown:
            raise TypeError(f'{type(self).__name__}: unexpected {unknown}')
        for attribute in self.attribute_map:
            setattr(self, attribute, kwargs.get(attribute))

    def to_api(self) -> dict[str, Any]:
        """The API-shaped dict without None fields (as the clients serialise a model)."""
        return {api: _to_api(getattr(self, attr)) for attr, api in self.attribute_map.items()
                if getattr(self, attr) is not None}


def _to_api(value: Any) -> Any:
    if isinstance(value, LegacyModel):
        return value.to_api()
    if isinstance(value, list):
        return [_to_api(item) for item in value]
    if isinstance(value, dict):
        return {key: _to_api(item) for key, item in value.items()}
    return value


def from_api(cls: type[LegacyModel], data: dict[str, Any]) -> LegacyModel:
    """Build a model from an API-shaped dict, recursively (as the clients deserialise)."""
    inverse = {api: attr for attr, api in cls.attribute_map.items()}
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        attribute = inverse[key]
        declared = cls.openapi_types[attribute]
        if declared.startswith('list[') and declared[5:-1] in globals():
            kwargs[attribute] = [from_api(globals()[declared[5:-1]], item) for item in value]
        elif declared in globals():
            kwargs[attribute] = from_api(globals()[declared], value)
        else:
            kwargs[attribute] = value
    return cls(**kwargs)


class V1OwnerReference(LegacyModel):
    openapi_types = {'api_version': 'str', 'block_owner_deletion': 'bool', 'controller': 'bool',
                     'kind': 'str', 'name': 'str', 'uid': 'str'}
    attribute_map = {'api_version': 'apiVersion', 'block_owner_deletion': 'blockOwnerDeletion',
                     'controller': 'controller', 'kind': 'kind', 'name': 'name', 'uid': 'uid'}


class V1ObjectMeta(LegacyModel):
    openapi_types = {'annotations': 'dict(str, str)', 'generate_name': 'str', 'labels': 'dict(str, str)',
                     'name': 'str', 'namespace': 'str', 'owner_references': 'list[V1OwnerReference]',
                     'uid': 'str'}
    attribute_map = {'annotations': 'annotations', 'generate_name': 'generateName', 'labels': 'labels',
                     'name': 'name', 'namespace': 'namespace', 'owner_references': 'ownerReferences',
                     'uid': 'uid'}


class V1PodTemplateSpec(LegacyModel):
    openapi_types = {'metadata': 'V1ObjectMeta', 'spec': 'object'}
    attribute_map = {'metadata': 'metadata', 'spec': 'spec'}


class V1DeploymentSpec(LegacyModel):
    openapi_types = {'replicas': 'int', 'selector': 'object', 'template': 'V1PodTemplateSpec'}
    attribute_map = {'replicas': 'replicas', 'selector': 'selector', 'template': 'template'}


class V1Deployment(LegacyModel):
    openapi_types = {'api_version': 'str', 'kind': 'str', 'metadata': 'V1ObjectMeta', 'spec': 'V1DeploymentSpec'}
    attribute_map = {'api_version': 'apiVersion', 'kind': 'kind', 'metadata': 'metadata', 'spec': 'spec'}


class V1Pod(LegacyModel):
    openapi_types = {'api_version': 'str', 'kind': 'str', 'metadata': 'V1ObjectMeta', 'spec': 'object'}
    attribute_map = {'api_version': 'apiVersion', 'kind': 'kind', 'metadata': 'metadata', 'spec': 'spec'}
