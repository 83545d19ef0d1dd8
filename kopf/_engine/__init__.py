"""The event path's async side: running an operator, watching, per-object work, processing, invoking.

Joins the pure core (`kopf._core`, `kopf._storage`) with the API client (`kopf._api`); decides nothing that
the core can decide, and talks HTTP only through `kopf._api`. One event's path, module by module, is in
`kopf._core`'s docstring. The features (`kopf._daemons`, `_indices`, `_admission`, `_peering`, `_leases`,
`_shards`, `_metrics`) attach here: `running` starts them; the rest of this package reaches them only
through the handles that `contexts` declares.

Modules:
- `running`     `kopf.run/operator/spawn_tasks/run_tasks`: startup, one TaskGroup, signals, cleanup; the features
- `activities`  startup/cleanup/login handlers, retried in memory
- `observing`   resources & namespaces to serve (discovery, CRDs appearing), fitted storages, watchers
- `queueing`    the records of a stream's objects, the queue, the runners; carries out `records.step`
- `listings`    the progress of a stream's initial listing and of resuming its objects: counts, rate (pure)
- `scheduling`  the operator's one scheduler: everything later, one heap, one loop timer
- `duetimes`    due times by key: the heap behind the scheduler (pure)
- `processing`  one cycle: decide -> invoke -> settle -> apply
- `changing`    invoking a plan's handlers: on.event, optional delete, change handlers, sub-handlers
- `invoking`    one attempt of one handler (sync in the executor, async in the loop) -> an Outcome
- `applying`    the cycle's patch, once per endpoint
- `contexts`    the operator/resource contexts (settings, registry, client, storages, records)
- `scopes`      the paused scopes (a namespace, the whole operator, a shard) and waits for their changes
- `identity`    this process's identity in peerings and Leases (`$POD_ID`, else user@host/time/random)
- `loggers`     per-object loggers (`[ns/name]`), Events of log records, `kopf.configure`
- `probing`     the liveness endpoint (`--liveness`): probe handlers' results as JSON
- `preflight`   what the handlers need before the operator serves them (an admission server)
- `memory`      the heap freed after a large resumption, back to the OS (glibc's `malloc_trim`)
- `libc`        the process's C library for `memory` (glibc's `malloc_trim`, `mallopt`), at the first call
- `flags`       `stop_flag` and `ready_flag` of `kopf.run/operator/spawn_tasks` (embedding)
- `loading`     `kopf run`'s operator code: files and modules
"""
