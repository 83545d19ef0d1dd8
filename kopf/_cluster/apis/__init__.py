"""What the emulator serves and how a URL addresses it.

    resourcetable  one `Resource` per group-version-plural (flags, not code), and the table of built-in kinds
    catalog        the served resources: the built-ins plus whatever the stored CRDs declare
    routing        URL shapes -> `Target` (resource, namespace, name, subresource); verbs and their checks
    data           the generated table of a real kube-apiserver's built-in APIs (package data)

Pure data and lookups: no I/O, no state beyond the catalog's index.
"""
