"""Waiting for a condition in tests that run the emulator in the test's own loop under looptime (one copy)."""
from ..waiting import eventually

__all__ = ['eventually']
