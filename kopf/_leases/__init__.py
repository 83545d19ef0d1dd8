"""Leader election on `coordination.k8s.io/v1` Leases (`kopf run --lease NAME`), by client-go's rules.

Used by `_shards` too: each shard is held by a Lease (`holding`).

Modules:
- `elections`  the rules: acquire, renew, take over, release, as values on the loop's clock (pure)
- `holding`    one Lease held: acquired, renewed and released; pauses the operator (or a shard) while not ours
"""
