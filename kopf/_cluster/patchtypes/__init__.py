"""PATCH bodies applied as the API server applies them, and the field ownership server-side apply checks.

    jsonpatches    the media types; JSON merge-patch (RFC 7386) and JSON-patch (RFC 6902); the dispatch by type
    strategic      strategic merge of built-ins by their schemas' patch strategies and merge keys, `$` directives
    fieldowners    which field manager owns which fields of an object, kept aside for apply conflicts
    fieldsets      field sets by the schema (structured-merge-diff): compared objects, applied configurations,
                   `fieldsV1`
    managedfields  `metadata.managedFields` as the real server keeps it: entries after updates and applies
    data           package data: the built-in kinds' empty objects (generated from their Go types)

Pure functions over documents: they return new documents and never mutate their inputs. Server-side
apply as a write (create or merge, conflicts, force) is in `pipeline.serverside`.
"""
