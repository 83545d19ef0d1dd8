"""Package data of the emulator: `builtin_schemas.json`, generated and committed.

(Made by `tools/generate_builtin_schemas.py`, outside the installed package.)
"""
