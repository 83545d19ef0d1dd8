from typing import Any

import pytest

from kopf._core.causes import TITLES, Reason, detect

FINALIZER = 'kopf.zalando.org/KopfFinalizerMarker'
ALIVE: dict[str, Any] = {'metadata': {'name': 'x'}, 'spec': {'a': 1}}
DELETING_WITH: dict[str, Any] = {'metadata': {'name': 'x', 'deletionTimestamp': '2026-01-01T00:00:00Z',
                                              'finalizers': [FINALIZER]}, 'spec': {'a': 1}}
DELETING_WITHOUT: dict[str, Any] = {'metadata': {'name': 'x', 'deletionTimestamp': '2026-01-01T00:00:00Z',
                                                 'finalizers': ['other/finalizer']}, 'spec': {'a': 1}}
OLD = {'spec': {'a': 1}}
NEW = {'spec': {'a': 2}}


# One row per rule of cause detection, in its order; earlier rows win over later ones.
@pytest.mark.parametrize('event_type, body, old, new, initial, reason, diff', [
    # 1: gone
    ('DELETED', ALIVE, OLD, OLD, False, Reason.GONE, ()),
    ('DELETED', DELETING_WITH, None, NEW, True, Reason.GONE, (('add', (), None, NEW),)),
    # 2: free
    ('MODIFIED', DELETING_WITHOUT, OLD, OLD, False, Reason.FREE, ()),
    ('MODIFIED', DELETING_WITHOUT, None, NEW, True, Reason.FREE, (('add', (), None, NEW),)),
    # 3: delete
    ('MODIFIED', DELETING_WITH, OLD, OLD, False, Reason.DELETE, ()),
    ('MODIFIED', DELETING_WITH, OLD, NEW, True, Reason.DELETE, (('change', ('spec', 'a'), 1, 2),)),
    # 4: create (no diff-base), even for initial objects
    (None, ALIVE, None, NEW, True, Reason.CREATE, (('add', (), None, NEW),)),
    ('ADDED', ALIVE, None, NEW, False, Reason.CREATE, (('add', (), None, NEW),)),
    # 5: resume
    (None, ALIVE, OLD, OLD, True, Reason.RESUME, ()),
    # 6: noop
    ('MODIFIED', ALIVE, OLD, OLD, False, Reason.NOOP, ()),
    # 7: update (resume handlers are mixed in by the caller when initial)
    ('MODIFIED', ALIVE, OLD, NEW, False, Reason.UPDATE, (('change', ('spec', 'a'), 1, 2),)),
    (None, ALIVE, OLD, NEW, True, Reason.UPDATE, (('change', ('spec', 'a'), 1, 2),)),
])
def test_detect(event_type: Any, body: Any, old: Any, new: Any, initial: bool, reason: Reason, diff: Any) -> None:
    change = detect(event_type=event_type, body=body, finalizer=FINALIZER, old=old, new=new, initial=initial)
    assert change.reason is reason
    assert change.diff == diff
    assert change.old == old and change.new == new and change.initial == initial


def test_deleting_flag() -> None:
    assert detect(event_type='DELETED', body=ALIVE, finalizer=FINALIZER, old=OLD, new=OLD).deleting
    assert not detect(event_type=None, body=ALIVE, finalizer=FINALIZER, old=OLD, new=NEW).deleting


def test_reason_is_a_str_enum() -> None:
    assert str(Reason.CREATE) == 'create' and f'{Reason.UPDATE}' == 'update' and Reason.DELETE == 'delete'


def test_titles() -> None:
    assert [TITLES[r] for r in ('create', 'update', 'delete', 'resume')] == ['Creation', 'Updating', 'Deletion',
                                                                               'Resuming']
