"""The objects in memory and how they are read and watched.

    objectstore    objects by kind, ONE resourceVersion counter, the bounded change history, the event log,
                   the ownership and namespace indices; each change serialised once
    fanout         the watch hub: per-kind watchers fed synchronously by the store, never blocking writers
    reading        GET and LIST: single objects, collections with selectors and limit/continue paging
    selection      label and field selectors: the query syntax and matching objects

No coroutines: writes are plain calls (the event loop serialises them), the fan-out only schedules its
flushes (`call_soon`); serving a watch request over HTTP is in `web.watchstreams`.
"""
