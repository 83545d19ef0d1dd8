"""Pure codecs of what kopf persists on objects: handler progress and the diff-base.

Storages read from a body and write only into a patch.
Must never do I/O, never import asyncio or aiohttp, and never define `async def`.

Modules:
- `progress`  progress storages (annotations, status, smart, multi): each handler's state between cycles
- `diffbase`  diff-base storages: the last handled essence of an object
- `keys`      annotation keys, shared by the progress, diff-base and touch annotations
- `fitting`   schema-aware persistence: where progress and the diff-base survive the CRD's pruning
"""
