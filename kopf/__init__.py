"""kopf: Kubernetes operators in plain Python.

The facade: every public name is re-exported here, and nothing else lives here.
Code written for upstream Kopf 1.x imports from this module unchanged.
"""
from kopf._version import __commit_id__, __version__, __version_tuple__

__all__ = [
    '__commit_id__',
    '__version__',
    '__version_tuple__',
]
