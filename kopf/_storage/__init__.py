"""Pure codecs of what kopf persists on objects: handler progress and the diff-base.

Storages read from a body and write only into a patch. Pure: never does I/O, never reads a clock, never
imports asyncio or aiohttp, never defines `async def`.

Modules:
- `progressstorages`  progress storages (annotations, status, smart, multi): each handler's state between cycles
- `diffbasestorages`  diff-base storages: the last handled essence of an object
- `keys`              annotation keys, shared by the progress, diff-base and touch annotations
- `fitting`           schema-aware persistence: where progress and the diff-base survive the CRD's pruning
"""
