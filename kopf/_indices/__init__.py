"""In-memory indices (`@kopf.index`): what index handlers build and every handler reads by its id.

Modules:
- `lookups`  `kopf.Index` and `kopf.Store`, and their updates by one object's result (pure)
- `filling`  the index handlers called per event, the indices kept per object, the start gate until complete
"""
