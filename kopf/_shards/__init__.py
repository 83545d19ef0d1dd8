"""Sharding across replicas (`kopf run --lease NAME --shards N`): each shard's objects act in one replica.

Modules:
- `assignment`  the uid -> shard hash (as `shardSelector`'s), the fair share of each replica (pure)
- `membership`  the replicas seen on the shard Leases; shards taken over and released; records paused
"""
