"""Package data of the emulator: `builtin_resources.json`, generated and committed.

(Made by `tools/generate_builtin_resources.py` from a real kube-apiserver, outside the installed package.)
"""
