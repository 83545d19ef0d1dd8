"""The objects in memory and how they are read and watched.

    objectstore    objects by kind, ONE resourceVersion counter, the bounded change history, the event log,
                   the ownership and namespace indices; each change serialised once
    fanout         the watch hub: per-kind watchers fed synchronously by the store, never blocking writers
    reading        GET and LIST: single objects, collections with selectors and limit/continue paging
    selection      label and field selectors: the query syntax and matching objects
    celtokens      CEL's tokens as cel-go's ANTLR lexer makes them (and its errors); string literals' values
    celnodes       the CEL tree (what a shard selector's parser reads of it), the grammar's token sets
    celprimary     CEL's primary rule (identifiers, calls, lists, maps, messages, literals) for `celparser`
    celparser      CEL parsed as cel-go parses it, its first error worded as cel-go and ANTLR word it
    shardselectors  shard selectors (`shardSelector=`, 1.36+): parsed as kube-apiserver 1.37 does, FNV-1a ranges

No coroutines: writes are plain calls (the event loop serialises them), the fan-out only schedules its
flushes (`call_soon`); serving a watch request over HTTP is in `web.watchstreams`.
"""
