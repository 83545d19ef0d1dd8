"""`patch.status = Model(...)` and `patch.spec = ...`: typed models merged into the patch (docs/models.md)."""
import dataclasses
import datetime
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

import kopf


class Status(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)
    phase: str | None = None
    ready_replicas: int = 0
    seen: datetime.datetime | None = None


@dataclasses.dataclass
class PlainStatus:
    phase: str | None = None
    ready: bool = False


@pytest.mark.parametrize('value, expected', [
    (Status(phase='Ready'), {'phase': 'Ready'}),                                 # only the fields set
    (Status(ready_replicas=2), {'readyReplicas': 2}),                            # by their aliases
    (Status(phase=None), {'phase': None}),                                       # set to None: deleted
    (Status(seen=datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)),
     {'seen': '2026-01-02T03:04:05Z'}),                                          # in their JSON form
    (PlainStatus(ready=True), {'ready': True}),                                  # a dataclass: all but Nones
    ({'phase': 'x'}, {'phase': 'x'}),
])
def test_a_model_is_merged_into_the_status(value: Any, expected: dict[str, Any]) -> None:
    patch = kopf.Patch()
    patch.status = value
    assert patch == {'status': expected}


def test_merging_keeps_what_the_patch_says_already() -> None:
    patch = kopf.Patch({'status': {'kopf': {'progress': {}}, 'phase': 'old'}})
    patch.status = Status(phase='new')
    patch.spec = {'a': {'b': 1}}
    patch.spec = {'a': {'c': 2}}
    assert patch == {'status': {'kopf': {'progress': {}}, 'phase': 'new'}, 'spec': {'a': {'b': 1, 'c': 2}}}


def test_the_view_assigned_to_itself_changes_nothing() -> None:
    patch = kopf.Patch({'status': {'x': 1}})
    patch.status = patch.status
    assert patch == {'status': {'x': 1}}


def test_other_values_are_refused() -> None:
    with pytest.raises(TypeError, match=r'patch\.status takes a dict, a pydantic model or a dataclass, not 42'):
        kopf.Patch().status = 42
