"""Sharding across replicas (`kopf run --lease NAME --shards N`): each shard's objects act in one replica.

Modules:
- `assignment`  the uid -> shard hash (as `shardSelector`'s), the fair share of each replica (pure)
- `membership`  the replicas seen on the shard Leases; shards taken over and released; records paused
- `streams`     the watches of a sharded replica (`Selection.read`, called by `_engine.observing`): its
                shards as `shardSelector=`, re-listed as they change
"""
