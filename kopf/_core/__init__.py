"""The pure core: everything that can be decided from dicts and values alone.

Must never do I/O, never import asyncio or aiohttp, and never define `async def`.

Modules:
- `bodies`        read-only views of objects as handlers get them (`body`, `spec`, `meta`, `status`)
- `resources`     `kopf.Resource`: one served API resource (group, version, plural)
- `selectors`     what the decorators' arguments say about resources
- `fields`        field paths (`'spec.x'`), reading and writing nested dicts by them
- `patches`       `kopf.Patch`: the merge-patch of a cycle, and its JSON-patch forms
- `encoding`      JSON on the wire, for the API client and the local cluster alike
- `essences`      the part of an object whose changes are worth handling
- `diffs`         what changed between two essences; narrowing to a field
- `causes`        why handlers are called now (create, update, delete, resume, ...)
- `handlers`      what a decorator registers: the function and its options, frozen
- `ids`           handler ids, the persistent keys of progress, status and indices
- `filters`       labels, annotations, `when`, field and value filters
- `registries`    the registry of handlers and which apply to a resource and a cause
- `kwargs`        the keyword arguments of handlers and filter callbacks, built from a cause
- `errors`        the errors handlers raise to steer their retries, and the errors mode
- `outcomes`      the outcome of one attempt of one handler
- `progress`      the per-handler state machine of change handling
- `plans`         one cycle as values: `decide()`, then (the reactor invokes) `settle()`
- `records`       the per-object record of the reactor and its transition `step()`
- `schedules`     due times by key: the heap behind the operator's one scheduler
- `finalizers`    when and how our finalizer is added or removed
- `budgets`       the 256 KiB annotations budget of an object
- `schemas`       structural pruning of objects by OpenAPI v3 schemas
- `memos`         `kopf.Memo`: a dict with attribute access
- `settings`      `kopf.OperatorSettings` and the old spellings of its fields
- `identities`    an operator's identity in peerings and Leases, in upstream's format
- `values`        `@values.frozen`: frozen for the type checker (at run time too in tests); `values.replace()`
- `background`    which daemons and timers run for an object, and when a timer is due
- `daemons`       `kopf.DaemonStopped`, `kopf.DaemonStoppingReason`
- `indices`       `kopf.Index` and `kopf.Store`
- `listings`      the progress of an initial listing: counts, rate, estimate
- `admission`     admission reviews, client configs, the webhook servers' protocol
- `certificates`  throw-away CAs and certificates as PEM bytes
- `peers`         peering: who is alive, who pauses whom, keep-alives
- `leases`        leader election on a Lease, by client-go's rules
- `shards`        sharding (`--shards`): the uid → shard hash of `shardSelector`, fair shares of the replicas
- `scopes`        the paused scopes: may an object act now?
- `telemetry`     the metrics endpoint's address, the labels' bounds, the buckets
- `rbac`          RBAC rules for the framework's own requests (`kopf rbac`)
"""
