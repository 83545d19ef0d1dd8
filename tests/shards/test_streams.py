"""The sharded watch's check of each event's shard: the record's shard (hashed once), else the hash."""
import kopf
from kopf._engine import contexts
from kopf._shards import assignment, streams

RESOURCE = kopf.Resource('kopf.dev', 'v1', 'kopfexamples')


def make_rctx(total: int) -> contexts.ResourceContext:
    settings = kopf.OperatorSettings()
    operator = contexts.OperatorContext(settings=settings, registry=kopf.OperatorRegistry(),
                                        client=None,  # type: ignore[arg-type]
                                        memo=kopf.Memo(), lifecycle=kopf.lifecycles.asap)
    operator.shard_of = lambda uid: assignment.shard_of(uid, total)
    return contexts.ResourceContext(operator=operator, resource=RESOURCE,
                                    progress_storage=settings.persistence.progress_storage,
                                    diffbase_storage=settings.persistence.diffbase_storage)


def test_a_known_object_is_not_hashed_again() -> None:
    rctx = make_rctx(6)
    record = rctx.remember('uid-1')
    assert record.shard == assignment.shard_of('uid-1', 6)
    record.shard = (record.shard + 1) % 6   # not what the hash says: the record's shard is what counts
    assert streams._shard(rctx, 'uid-1', 6) == record.shard


def test_an_unknown_object_is_hashed() -> None:
    rctx = make_rctx(6)
    assert 'uid-2' not in rctx.records
    assert streams._shard(rctx, 'uid-2', 6) == assignment.shard_of('uid-2', 6)
