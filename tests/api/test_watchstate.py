from typing import Any

import pytest

from kopf._api import apierrors, watchstate
from kopf._api.watchstate import LISTED, Page, WatchState, narrow, step


def obj(uid: str, rv: str, **extra: Any) -> dict[str, Any]:
    return {'metadata': {'uid': uid, 'name': f'n-{uid}', 'namespace': 'ns', 'resourceVersion': rv}, **extra}


def ev(etype: str, body: dict[str, Any]) -> dict[str, Any]:
    return {'type': etype, 'object': body}


def types(items: list[Any]) -> list[Any]:
    return [item if item is LISTED else (item['type'], item['object']['metadata']['uid']) for item in items]


def test_fresh_state_needs_listing() -> None:
    assert WatchState().needs_listing


def test_initial_listing_yields_untyped_events_then_listed() -> None:
    state = WatchState()
    out = step(state, Page([obj('a', '1'), obj('b', '2')], '5'))
    assert types(out) == [(None, 'a'), (None, 'b'), LISTED]
    assert state.resource_version == '5'
    assert not state.needs_listing


def test_chunked_listing_yields_per_page_and_listed_at_the_end() -> None:
    state = WatchState()
    assert types(step(state, Page([obj('a', '1')], '5', continue_token='c1'))) == [(None, 'a')]
    assert state.needs_listing  # not finished yet
    assert types(step(state, Page([obj('b', '2')], '5'))) == [(None, 'b'), LISTED]
    assert state.resource_version == '5'


def test_list_items_get_kind_and_api_version() -> None:
    state = WatchState()
    body = obj('a', '1')
    step(state, Page([body], '5', kind='ConfigMapList', api_version='v1'))
    assert body['kind'] == 'ConfigMap'
    assert body['apiVersion'] == 'v1'


def test_watch_events_pass_and_move_the_resource_version() -> None:
    state = WatchState()
    step(state, Page([], '5'))
    out = step(state, ev('ADDED', obj('a', '6')))
    assert types(out) == [('ADDED', 'a')]
    assert state.resource_version == '6'
    assert types(step(state, ev('MODIFIED', obj('a', '7')))) == [('MODIFIED', 'a')]
    assert types(step(state, ev('DELETED', obj('a', '8')))) == [('DELETED', 'a')]
    assert state.resource_version == '8'
    assert state.known == {}


def test_bookmarks_are_swallowed_but_move_the_resource_version() -> None:
    state = WatchState()
    step(state, Page([], '5'))
    bookmark = {'kind': 'X', 'apiVersion': 'v1', 'metadata': {'resourceVersion': '42'}}
    assert step(state, ev('BOOKMARK', bookmark)) == []
    assert state.resource_version == '42'


def test_duplicates_are_swallowed() -> None:
    state = WatchState()
    step(state, Page([obj('a', '1')], '5'))
    assert step(state, ev('MODIFIED', obj('a', '1'))) == []
    assert types(step(state, ev('MODIFIED', obj('a', '6')))) == [('MODIFIED', 'a')]
    assert step(state, ev('MODIFIED', obj('a', '6'))) == []


def test_410_means_relist() -> None:
    state = WatchState()
    step(state, Page([obj('a', '1')], '5'))
    status = {'kind': 'Status', 'apiVersion': 'v1', 'status': 'Failure', 'reason': 'Expired', 'code': 410,
              'message': 'too old resource version: 5 (9)'}
    assert step(state, ev('ERROR', status)) == []
    assert state.needs_listing


def test_other_errors_are_raised() -> None:
    state = WatchState()
    step(state, Page([], '5'))
    status = {'kind': 'Status', 'code': 500, 'message': 'boom'}
    with pytest.raises(apierrors.APIServerError, match='boom'):
        step(state, ev('ERROR', status))


def test_relist_yields_only_differences() -> None:
    state = WatchState()
    step(state, Page([obj('a', '1'), obj('b', '2'), obj('c', '3')], '5'))
    state.resource_version = None  # as after a 410
    out = step(state, Page([obj('a', '1'), obj('b', '7'), obj('d', '8')], '9'))
    assert types(out) == [('MODIFIED', 'b'), ('ADDED', 'd'), ('DELETED', 'c')]
    assert LISTED not in out  # only once per stream
    assert state.resource_version == '9'
    assert set(state.known) == {'a', 'b', 'd'}


def test_relist_deletions_come_only_after_the_last_page() -> None:
    state = WatchState()
    step(state, Page([obj('a', '1'), obj('b', '2')], '5'))
    state.resource_version = None
    assert types(step(state, Page([obj('a', '1')], '9', continue_token='x'))) == []
    assert types(step(state, Page([], '9'))) == [('DELETED', 'b')]


def test_unknown_event_types_are_ignored() -> None:
    state = WatchState()
    step(state, Page([], '5'))
    assert step(state, ev('WHATEVER', obj('a', '6'))) == []
    assert step(state, {'type': 'ADDED', 'object': None}) == []


def test_restarted_initial_listing_yields_nothing_twice() -> None:
    state = WatchState()
    assert types(step(state, Page([obj('a', '1')], '5', continue_token='x'))) == [(None, 'a')]
    state.restart_listing()
    out = step(state, Page([obj('a', '1'), obj('b', '2')], '6'))
    assert types(out) == [(None, 'b'), LISTED]


def _end_bookmark(rv: str) -> dict[str, Any]:
    return ev('BOOKMARK', {'kind': 'X', 'apiVersion': 'v1', 'metadata': {
        'resourceVersion': rv, 'annotations': {'k8s.io/initial-events-end': 'true'}}})


def test_streamed_initial_listing() -> None:
    state = WatchState(streaming=True)
    assert types(step(state, ev('ADDED', obj('a', '1')))) == [(None, 'a')]
    assert types(step(state, ev('ADDED', obj('b', '3')))) == [(None, 'b')]
    assert state.needs_listing  # the synthetic events' RVs are not stream positions
    plain = {'kind': 'X', 'apiVersion': 'v1', 'metadata': {'resourceVersion': '4'}}
    assert step(state, ev('BOOKMARK', plain)) == []
    assert types(step(state, _end_bookmark('9'))) == [LISTED]
    assert state.resource_version == '9'
    assert not state.streaming and state.listed
    assert types(step(state, ev('MODIFIED', obj('a', '10')))) == [('MODIFIED', 'a')]


def test_streamed_listing_without_objects() -> None:
    state = WatchState(streaming=True)
    assert types(step(state, _end_bookmark('9'))) == [LISTED]
    assert state.resource_version == '9'


def test_narrowing_forgets_without_deleted_and_relists_arrivals_as_listed() -> None:
    state = WatchState()
    step(state, Page(items=[obj('a', '1'), obj('b', '1')], resource_version='10'))
    assert narrow(state, keep=lambda uid: uid != 'b') == ['b']
    assert state.needs_listing
    items = step(state, Page(items=[obj('a', '1'), obj('c', '5')], resource_version='11'))
    assert types(items) == [(None, 'c')]   # c arrives as listed (its shard became ours); a is unchanged; no b
    assert types(step(state, ev('ADDED', obj('d', '12')))) == [('ADDED', 'd')]   # after the re-list: as usual
    state.resource_version = None   # a 410: a later re-list is as usual
    assert types(step(state, Page(items=[obj('a', '1'), obj('c', '5'), obj('d', '12'), obj('e', '13')],
                                  resource_version='13'))) == [('ADDED', 'e')]


def test_the_lists_shard_info_is_kept() -> None:
    state = WatchState()
    page = Page.from_list({'metadata': {'resourceVersion': '1', 'shardInfo': {'selector': 'shardRange(x)'}},
                           'items': []})
    step(state, page)
    assert state.shard_info == 'shardRange(x)'
    step(state, Page.from_list({'metadata': {'resourceVersion': '2'}, 'items': []}))
    assert state.shard_info is None


# -- the echoes of our own writes, known by the bytes of their lines ----------------------------------------

def test_an_answer_keys_the_line_of_its_echo() -> None:
    answer = b'{"metadata":{"uid":"u1","resourceVersion":"7"},"spec":{}}\n'
    line = b'{"type":"MODIFIED","object":{"metadata":{"uid":"u1","resourceVersion":"7"},"spec":{}}}'
    assert watchstate.echo_key(answer) == watchstate.line_key(line)
    assert watchstate.echo_key(answer) != watchstate.line_key(line.replace(b'"7"', b'"8"'))
    assert 0 <= watchstate.echo_key(answer) < 2 ** 64


@pytest.mark.parametrize('line, uids', [
    (b'{"metadata":{"uid":"u1"}}', ['u1']),
    (b'{"metadata":{"ownerReferences":[{"uid":"o1"}],"uid":"u1"}}', ['o1', 'u1']),  # candidates, in order
    (b'{"metadata":{"name":"x"}}', []),
    (b'{"metadata":{"uid":"u1', []),  # cut short: no value
    (b'{"x":"a\\"uid\\":\\"u2\\"","uid":"u1"}', ['u1']),  # inside a string, quotes are escaped: not a key
])
def test_the_uids_in_a_line(line: bytes, uids: list[str]) -> None:
    assert list(watchstate.uids_in(line)) == uids


@pytest.mark.parametrize('known', [None, '6', '7'])
def test_an_echo_steps_the_state_as_its_event_would(known: str | None) -> None:
    by_event, by_echo = WatchState(), WatchState()
    for state in (by_event, by_echo):
        step(state, Page([obj('a', known)] if known else [], '5'))
    out = step(by_event, ev('MODIFIED', obj('a', '7')))
    assert watchstate.step_echo(by_echo, 'a', '7') == bool(out)
    assert by_echo.known == by_event.known and by_echo.resource_version == by_event.resource_version == '7'
