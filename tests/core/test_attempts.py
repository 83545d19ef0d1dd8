"""Sub-handlers as values: what they came to rides on the parent's outcome, and the cycle's settlement (not the
attempt) writes their records and results and logs their lines. No loop; `now` given."""
import datetime
from typing import Any

from kopf._core import attempts, patches
from kopf._core.outcomes import Outcome, OutcomeKind
from tests.core.test_progress import DictStorage, Handler, temporary

NOW = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)


class Named(Handler):
    def __str__(self) -> str:
        return f'Handler {self.id!r}'  # as kopf._core.handlers words it


def handling(*ids: str, records: dict[str, Any] | None = None) -> attempts.Handling:
    handlers: Any = [Named(one) for one in ids]
    return attempts.plan_handlers(records or {}, handlers, purpose='create', lifecycle=lambda h, **_: list(h),
                                  now=NOW)


def test_children_done_or_not_as_a_value_and_nothing_written_yet() -> None:
    children = handling('parent/a', 'parent/b')
    settled = attempts.settle_children(children, {
        'parent/a': Outcome(kind=OutcomeKind.SUCCESS, result={'x': 1}), 'parent/b': temporary(30)}, now=NOW)
    assert not settled.done and settled.delay == 30  # kopf.execute() raises HandlerChildrenRetry by it
    assert [entry.message for entry in settled.logs] == ["Handler 'parent/a' succeeded.",
                                                         "Handler 'parent/b' failed temporarily: Not yet."]
    done = attempts.settle_children(handling('parent/a'), {
        'parent/a': Outcome(kind=OutcomeKind.SUCCESS)}, now=NOW)
    assert done.done and done.delay is None


def test_the_parents_merge_writes_its_childrens_records_results_and_lines_first() -> None:
    children = attempts.settle_children(handling('parent/a'), {
        'parent/a': Outcome(kind=OutcomeKind.SUCCESS, result={'x': 1})}, now=NOW)
    parent = handling('parent')
    outcome = Outcome(kind=OutcomeKind.SUCCESS, result={'y': 2}, subrefs=('parent/a',), children=children)
    storage, patch = DictStorage(), patches.Patch()
    state, logs = attempts.merge_outcomes(parent, {'parent': outcome}, patch=patch, now=NOW, body={},
                                          storage=storage)  # type: ignore[arg-type]
    assert patch['status'] == {'parent/a': {'x': 1}, 'parent': {'y': 2}}
    assert storage.stored == ['parent/a']  # the child's record; the parent's is the cycle's to store
    assert [entry.message for entry in logs] == ["Handler 'parent/a' succeeded.", "Handler 'parent' succeeded."]
    assert state['parent'].subrefs == ('parent/a',)


def test_no_handlers_and_no_records_plan_as_the_general_steps_would() -> None:
    empty = handling()
    assert empty.handlers == () and empty.selected == () and dict(empty.refused) == {}
    assert empty.state.purpose == 'create' and dict(empty.state) == {} and empty.state.dropped == frozenset()
    assert empty.state.superseded is None and empty.state.done
    patch = patches.Patch()
    storage = DictStorage()
    state, logs = attempts.merge_outcomes(empty, {}, patch=patch, now=NOW, body={}, storage=storage)
    assert state == empty.state and logs == [] and not patch
    attempts.purge(state, (), body={}, patch=patch, storage=storage)
    assert not patch
    general = handling('a')
    assert type(general.state) is type(empty.state)  # the same value type either way
