"""Package data of the emulator's RBAC: `bootstrap.json`, generated and committed.

(Made by `tools/generate_rbac_bootstrap.py`, outside the installed package.)
"""
