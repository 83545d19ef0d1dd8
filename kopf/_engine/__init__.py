"""Async orchestration: running an operator, watching, per-object records, processing, invoking.

Joins the pure core (`_model`, `_storage`) with the API client (`_api`). Decides nothing itself that
`_model` can decide; never talks HTTP except through `_api`.

One event's path, module by module:
1. `_api.watching` lists and watches a resource; `_api.watchstate.step` turns pages and events into items.
2. `observing.Observer.watch` hands each item of a served namespace to `queueing.Dispatcher.dispatch`.
3. `queueing` feeds it to the object's record (`_model.records.step`: Arrived) and queues the record.
4. A runner takes the record (`step`: Taken): a cycle runs, or the record waits in `scheduling`.
5. `processing.process`: `_model.plans.decide` makes the plan (cause, handlers due, finalizer edit).
6. `changing.invoke` awaits the plan's handlers through `invoking` (sync ones in the executor).
7. `_model.plans.settle` turns the outcomes into one patch, a wake-up and log lines.
8. `applying.apply` sends the patch through `_api.patching` (one request per endpoint).
9. `queueing` feeds the cycle's end to the record (`step`: Done): next cycle, wake-up, idle, or gone.
10. `scheduling` wakes waiting records when due (`step`: Due): back to 4.

Modules:
- `running`     `kopf.run/operator/spawn_tasks/run_tasks`: startup, one TaskGroup, signals, cleanup
- `activities`  startup/cleanup/login handlers, retried in memory
- `observing`   resources & namespaces to serve (discovery, CRDs appearing), fitted storages, watchers
- `queueing`    the records of a stream's objects, the queue, the runners; carries out `records.step`
- `scheduling`  the operator's one scheduler: everything later, one heap, one loop timer
- `processing`  one cycle: decide → invoke → settle → apply
- `changing`    invoking a plan's handlers: on.event, optional delete, change handlers, sub-handlers
- `spawning`    daemons and timers of each object: started/stopped after its cycles, the operator's exit
- `spawns`      one daemon or timer of one object: its attempts, its stop sequence, its due times
- `indexing`    the in-memory indices (`@kopf.index`) and the start gate until they are complete
- `identity`    this process's identity in peerings and Leases (`$POD_ID`, else user@host/time/random)
- `peering`     the peering objects: keep-alives, who pauses whom (`_model.peers`), `kopf freeze/resume`
- `pausing`     the paused scopes (`_model.scopes`) and waits for their changes: watchers, cycles, daemons
- `sharding`    shard Leases and membership (`--shards`): fair shares (`_model.shards`), takeovers, releases
- `admission`   admission reviews for `@kopf.on.validate/mutate`, the managed webhook configurations
- `leasing`     leader election on Leases (`--lease`): acquire, renew, release; pauses the operator (or a shard)
- `metrics`     the Prometheus metrics of one operator (`--metrics`) and their hooks
- `invoking`    one attempt of one handler (sync in the executor, async in the loop) → an Outcome
- `applying`    the cycle's patch, once per endpoint
- `contexts`    the operator/resource contexts (settings, registry, client, storages, records)
- `loggers`     per-object loggers (`[ns/name]`), Events of log records, `kopf.configure`
- `probing`     the liveness endpoint (`--liveness`): probe handlers' results as JSON
- `memory`      the heap freed after a large resumption, back to the OS (glibc's `malloc_trim`)
- `flags`, `loading`, `stoppers`, `preflight`: embedding flags, `kopf run` file loading, daemon
  stoppers, what the handlers need before the operator serves them (an admission server)
"""
