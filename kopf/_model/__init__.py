"""The pure core: bodies, patches, field paths, diffs, causes, handlers, registry, errors, settings, memo.

Owns every decision that can be made from dicts and values alone.
Must never do I/O, never import asyncio or aiohttp, and never define `async def`.
"""
