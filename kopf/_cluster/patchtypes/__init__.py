"""PATCH bodies applied as the API server applies them, and the field ownership server-side apply checks.

    jsonpatches    the media types; JSON merge-patch (RFC 7386) and JSON-patch (RFC 6902); the dispatch by type
    strategic      strategic merge of built-ins by their schemas' patch strategies and merge keys, `$` directives
    fieldowners    which field manager owns which fields of an object (`managedFields`, apply conflicts)

Pure functions over documents: they return new documents and never mutate their inputs. Server-side
apply as a write (create or merge, conflicts, force) is in `pipeline.serverside`.
"""
