"""Package data of the emulator's field ownership: `zero_objects.json`, generated and committed.

(Made by `tools/generate_zero_objects.py`, outside the installed package.)
"""
