"""`kopf rbac`: the RBAC manifests for the framework's own requests, derived offline from the handlers.

Modules:
- `rules`      the RBAC rules of the framework's requests, from the registry and the command's options (pure)
- `rendering`  the handlers' resources resolved offline (built-ins, CRD files), the YAML written
"""
