"""One Kubernetes object in each of the shapes the hierarchies accept, built from and dumped to API dicts."""
import copy
from typing import Any

import kubernetes.client
import pykube

from tests.kits import legacy_models

SHAPES = ['dict', 'pykube', 'kubernetes', 'legacy']
_API_CLIENT = kubernetes.client.ApiClient()


def build(shape: str, body: dict[str, Any]) -> Any:
    body = copy.deepcopy(body)
    kind = body.get('kind', 'Pod')
    if shape == 'dict':
        return body
    if shape == 'pykube':
        return getattr(pykube, kind)(None, body)
    if shape == 'kubernetes':
        return getattr(kubernetes.client, f'V1{kind}').from_dict(body)
    if shape == 'legacy':
        return legacy_models.from_api(getattr(legacy_models, f'V1{kind}'), body)
    raise ValueError(shape)


def dump(shape: str, obj: Any) -> dict[str, Any]:
    if shape == 'dict':
        return dict(obj)
    if shape == 'pykube':
        return dict(obj.obj)
    if shape == 'kubernetes':
        result: dict[str, Any] = _API_CLIENT.sanitize_for_serialization(obj)  # type: ignore[no-untyped-call]
        return result
    if shape == 'legacy':
        api: dict[str, Any] = obj.to_api()
        return api
    raise ValueError(shape)
