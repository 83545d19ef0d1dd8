"""The event path's pure core: one object's cycle decided from dicts and values alone.

Pure: never does I/O, never reads a clock (`now` is passed in), never imports asyncio or aiohttp, never
defines `async def` (tests/test_layers.py). The async side of the same path is `kopf._engine`; the
features (`_daemons`, `_indices`, `_admission`, ...) build on both and are never imported from here.

One event's path, module by module (each module once; tests/test_layers.py checks the names):
1. `kopf._api.watching` lists and watches a resource (chunked lists, resumes, re-lists after a 410);
   `kopf._api.watchstate` is that stream's state and its pure `step()`.
2. `kopf._engine.observing` hands each item of a served namespace to the stream's dispatcher.
3. `kopf._engine.queueing` feeds it to the object's record (`kopf._core.records.step`: Arrived) and queues
   the record; a runner takes it (`step`: Taken) and runs a cycle, or the record waits.
4. `kopf._engine.processing` runs the cycle: `kopf._core.plans.decide()` makes the plan from the body, the
   diff-base (`kopf._core.essences`, `kopf._core.diffs`), the cause (`kopf._core.causes`), the matching handlers
   (`kopf._core.registries`), their progress (`kopf._core.progress`, stored by `kopf._storage.progressstorages`)
   and our finalizer (`kopf._core.finalizers`).
5. `kopf._engine.changing` awaits the plan's handlers through `kopf._engine.invoking` (sync ones in the
   executor), with the keyword arguments of `kopf._core.kwargs`; each attempt ends as a `kopf._core.outcomes`.
6. `plans.settle()` turns the outcomes into one `kopf._core.patches.Patch`, a wake-up and log lines.
7. `kopf._engine.applying` sends the patch through `kopf._api.objectwrites` (one request per endpoint).
8. The cycle's end goes back to the record (`step`: Done, by the runner of 3.): the next cycle, a wake-up in
   `kopf._engine.scheduling` (`step`: Due when due), idle, or gone.

Modules:
- `values`      `@values.frozen` values and `values.replace()`
- `bodies`      read-only views of objects as handlers get them (`body`, `spec`, `meta`, `status`)
- `resources`   `kopf.Resource`: one served API resource (group, version, plural)
- `selectors`   what the decorators' arguments say about resources
- `patches`     `kopf.Patch`: the merge-patch of a cycle, and its JSON-patch forms
- `essences`    the part of an object whose changes are worth handling
- `diffs`       what changed between two essences; narrowing to a field
- `causes`      why handlers are called now (create, update, delete, resume, ...)
- `handlers`    what a decorator registers: the function and its options, frozen
- `handlerids`  handler ids, the persistent keys of progress, status and indices
- `filters`     labels, annotations, `when`, field and value filters
- `registries`  the registry of handlers and which apply to a resource and a cause
- `kwargs`      the keyword arguments of handlers and filter callbacks, built from a cause
- `typedkwargs` typed handlers: `spec`/`status`/`body`/`old`/`new` parsed into the models they are annotated with
- `errors`      the errors handlers raise to steer their retries, and the errors mode
- `outcomes`    the outcome of one attempt of one handler
- `progress`    the per-handler state machine of change handling
- `plans`       one cycle as values: `decide()`, then (the engine invokes) `settle()`
- `attempts`    the handlers of one cause in a cycle: those due now, what their attempts (and sub-handlers') came to
- `records`     the per-object record and its transition `step()`
- `resourceversions` as the records compare them; an awaited echo's resourceVersion and key in one int
- `finalizers`  when and how our finalizer is added or removed
- `budgets`     the 256 KiB annotations budget of an object
- `memos`       `kopf.Memo`: a dict with attribute access
- `settings`    `kopf.OperatorSettings` and the old spellings of its fields
"""
