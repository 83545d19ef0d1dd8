"""The pure core: bodies, patches, field paths, diffs, causes, handlers, registry, errors, settings, memo,
and the hot path as values: `plans` (decide/settle one cycle), `records` (the per-object record and its
`step()`), `schedules` (due times), `finalizers` (when and how our finalizer is edited), `spawning`
(which daemons/timers run, when timers are due), `admission` (reviews and webhook configurations),
`certificates` (throw-away CAs and certificates as PEM bytes), `peers` (peering: who is alive, who
pauses whom, keep-alives), `pausing` (the paused scopes: may an object act now?), `leases` and
`shards` (leader election, uid → shard, fair shares), `encoding` (JSON on the wire, for the API
client and the local cluster).

Owns every decision that can be made from dicts and values alone.
Must never do I/O, never import asyncio or aiohttp, and never define `async def`.
"""
