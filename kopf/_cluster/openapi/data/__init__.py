"""Package data of the emulator: generated, committed files (see `generate.py` for how they are made)."""
