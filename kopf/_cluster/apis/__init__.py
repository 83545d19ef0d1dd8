"""What the emulator serves and how a URL addresses it.

    catalog        the served resources: the built-ins (`kopf._shared.resourcetable`, shared with `kopf rbac`)
                   plus whatever the stored CRDs declare
    routing        URL shapes -> `Target` (resource, namespace, name, subresource); verbs and their checks

Pure data and lookups: no I/O, no state beyond the catalog's index.
"""
