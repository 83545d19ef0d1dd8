"""Pure codecs of what kopf persists on objects: handler progress and the diff-base.

Storages read from a body and write only into a patch.
Must never do I/O, never import asyncio or aiohttp, and never define `async def`.
"""
