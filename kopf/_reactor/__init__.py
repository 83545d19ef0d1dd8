"""Async orchestration: running an operator, watching, per-object workers, processing, invoking.

Joins the pure core (`_model`, `_storage`) with the API client (`_api`). Decides nothing itself that
`_model` can decide; never talks HTTP except through `_api`. Modules, in the order an event meets them:
- `running`     `kopf.run/operator/spawn_tasks/run_tasks`: startup, one TaskGroup, signals, cleanup
- `activities`  startup/cleanup/login handlers, retried in memory
- `observing`   resources & namespaces to serve (discovery, CRDs appearing), fitted storages, watchers
- `queueing`    per-object workers: newest body only, one cycle at a time, consistency, wake-ups
- `processing`  one cycle: event handlers, deletion, finalizer, cause detection, diff-base
- `changing`    change handlers & sub-handlers through the progress state machine; results to status
- `invoking`    one attempt of one handler (sync in the executor, async in the loop) → an Outcome
- `applying`    the cycle's patch, once per endpoint
- `contexts`    the operator/resource contexts, the per-object memory, the cycle
- `loggers`     per-object loggers (`[ns/name]`), Events of log records, `kopf.configure`
- `probing`     the liveness endpoint (`--liveness`): probe handlers' results as JSON
- `flags`, `loading`, `supported`: embedding flags, `kopf run` file loading, refused handler kinds
"""
