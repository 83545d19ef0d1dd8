"""The paused scopes: who pauses which, and whether an object of a namespace may act. No loop."""
import pytest

from kopf._model import pausing


@pytest.mark.parametrize('paused, namespace, result', [
    ([], None, False),
    ([], 'ns1', False),
    ([pausing.WHOLE], None, True),
    ([pausing.WHOLE], 'ns1', True),
    (['ns1'], 'ns1', True),
    (['ns1'], 'ns2', False),
    (['ns1'], None, False),  # cluster-scoped objects: only the whole operator's pause stops them
])
def test_what_is_paused(paused: list[str | None], namespace: str | None, result: bool) -> None:
    pauses = pausing.Pauses()
    for scope in paused:
        pauses.pause(scope, 'peering')
    assert pauses.paused(namespace) is result


def test_a_scope_is_paused_while_anyone_pauses_it() -> None:
    pauses = pausing.Pauses()
    assert pauses.pause('ns1', 'peering') is True     # newly paused
    assert pauses.pause('ns1', 'lease') is False      # paused already
    assert pauses.resume('ns1', 'peering') is False   # still paused by the other
    assert pauses.paused('ns1')
    assert pauses.resume('ns1', 'lease') is True      # resumed now
    assert not pauses.paused('ns1')
    assert pauses.by == {}


def test_the_version_counts_the_changes_only() -> None:
    pauses = pausing.Pauses()
    pauses.pause(None, 'peering')
    pauses.pause(None, 'peering')  # no change
    pauses.resume('ns1', 'peering')  # no change: never paused
    assert pauses.version == 1
    pauses.resume(None, 'peering')
    assert pauses.version == 2


def test_a_cancelling_pauser_cancels_the_cycles_in_flight_of_its_scopes() -> None:
    pauses = pausing.Pauses()
    pauses.pause('ns1', 'peering')
    assert not pauses.cancels('ns1')
    pauses.pause(pausing.WHOLE, 'lease', cancelling=True)
    assert pauses.cancels('ns1') and pauses.cancels(None) and pauses.cancels('ns2')
    pauses.resume(pausing.WHOLE, 'lease')
    assert not pauses.cancels('ns1') and not pauses.cancels(None)
    pauses.pause(pausing.WHOLE, 'lease')  # paused again, but finishing what is in flight
    assert not pauses.cancels('ns1')


@pytest.mark.parametrize('paused, namespace, shard, result', [
    ([pausing.Shard(1)], 'ns1', 1, True),      # its shard is not ours
    ([pausing.Shard(1)], 'ns1', 2, False),     # another shard's pause does not stop it
    ([pausing.Shard(1)], None, 1, True),       # cluster-scoped objects have shards too
    ([pausing.Shard(1)], 'ns1', None, False),  # unsharded (a watch stream asks so): shards never stop it
    (['ns1'], 'ns1', 2, True),
    ([pausing.WHOLE], None, 2, True),
])
def test_what_is_paused_with_shards(paused: list[pausing.Scope], namespace: str | None, shard: int | None,
                                    result: bool) -> None:
    pauses = pausing.Pauses()
    for scope in paused:
        pauses.pause(scope, 'lease')
    assert pauses.paused(namespace, shard) is result


def test_a_lost_shard_cancels_its_objects_cycles_only() -> None:
    pauses = pausing.Pauses()
    pauses.pause(pausing.Shard(3), 'lease', cancelling=True)
    assert pauses.cancels('ns1', 3)
    assert not pauses.cancels('ns1', 2)
    assert not pauses.cancels('ns1')


@pytest.mark.parametrize('paused, manages', [
    ([], True),
    ([pausing.Shard(1), pausing.Shard(2)], True),  # shard 0 is ours: we write the webhook configurations
    ([pausing.Shard(0)], False),
    (['ns1'], False),
    ([pausing.WHOLE], False),
])
def test_who_manages_the_webhook_configurations(paused: list[pausing.Scope], manages: bool) -> None:
    pauses = pausing.Pauses()
    for scope in paused:
        pauses.pause(scope, 'lease')
    assert pauses.manages_webhooks() is manages
