"""The version of kopf: one place, read by setup.py and by the package."""
__version__ = '0.1.0'
__version_tuple__ = (0, 1, 0)
__commit_id__: str | None = None
