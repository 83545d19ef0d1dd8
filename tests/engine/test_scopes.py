"""The paused scopes: who pauses which, and whether an object of a namespace may act. No loop."""
import pytest

from kopf._engine import scopes


@pytest.mark.parametrize('paused, namespace, result', [
    ([], None, False),
    ([], 'ns1', False),
    ([scopes.WHOLE], None, True),
    ([scopes.WHOLE], 'ns1', True),
    (['ns1'], 'ns1', True),
    (['ns1'], 'ns2', False),
    (['ns1'], None, False),  # cluster-scoped objects: only the whole operator's pause stops them
])
def test_what_is_paused(paused: list[str | None], namespace: str | None, result: bool) -> None:
    pauses = scopes.Pauses()
    for scope in paused:
        pauses.pause(scope, 'peering')
    assert pauses.paused(namespace) is result


def test_a_scope_is_paused_while_anyone_pauses_it() -> None:
    pauses = scopes.Pauses()
    assert pauses.pause('ns1', 'peering') is True     # newly paused
    assert pauses.pause('ns1', 'lease') is False      # paused already
    assert pauses.resume('ns1', 'peering') is False   # still paused by the other
    assert pauses.paused('ns1')
    assert pauses.resume('ns1', 'lease') is True      # resumed now
    assert not pauses.paused('ns1')
    assert pauses.by == {}


def test_the_version_counts_the_changes_only() -> None:
    pauses = scopes.Pauses()
    pauses.pause(None, 'peering')
    pauses.pause(None, 'peering')  # no change
    pauses.resume('ns1', 'peering')  # no change: never paused
    assert pauses.version == 1
    pauses.resume(None, 'peering')
    assert pauses.version == 2


def test_a_cancelling_pauser_cancels_the_cycles_in_flight_of_its_scopes() -> None:
    pauses = scopes.Pauses()
    pauses.pause('ns1', 'peering')
    assert not pauses.cancels('ns1')
    pauses.pause(scopes.WHOLE, 'lease', cancelling=True)
    assert pauses.cancels('ns1') and pauses.cancels(None) and pauses.cancels('ns2')
    pauses.resume(scopes.WHOLE, 'lease')
    assert not pauses.cancels('ns1') and not pauses.cancels(None)
    pauses.pause(scopes.WHOLE, 'lease')  # paused again, but finishing what is in flight
    assert not pauses.cancels('ns1')


@pytest.mark.parametrize('paused, namespace, shard, result', [
    ([scopes.Shard(1)], 'ns1', 1, True),      # its shard is not ours
    ([scopes.Shard(1)], 'ns1', 2, False),     # another shard's pause does not stop it
    ([scopes.Shard(1)], None, 1, True),       # cluster-scoped objects have shards too
    ([scopes.Shard(1)], 'ns1', None, False),  # unsharded (a watch stream asks so): shards never stop it
    (['ns1'], 'ns1', 2, True),
    ([scopes.WHOLE], None, 2, True),
])
def test_what_is_paused_with_shards(paused: list[scopes.Scope], namespace: str | None, shard: int | None,
                                    result: bool) -> None:
    pauses = scopes.Pauses()
    for scope in paused:
        pauses.pause(scope, 'lease')
    assert pauses.paused(namespace, shard) is result


def test_a_lost_shard_cancels_its_objects_cycles_only() -> None:
    pauses = scopes.Pauses()
    pauses.pause(scopes.Shard(3), 'lease', cancelling=True)
    assert pauses.cancels('ns1', 3)
    assert not pauses.cancels('ns1', 2)
    assert not pauses.cancels('ns1')


@pytest.mark.parametrize('paused, manages', [
    ([], True),
    ([scopes.Shard(1), scopes.Shard(2)], True),  # shard 0 is ours: we write the webhook configurations
    ([scopes.Shard(0)], False),
    (['ns1'], False),
    ([scopes.WHOLE], False),
])
def test_who_manages_the_webhook_configurations(paused: list[scopes.Scope], manages: bool) -> None:
    pauses = scopes.Pauses()
    for scope in paused:
        pauses.pause(scope, 'lease')
    assert pauses.manages_webhooks() is manages
