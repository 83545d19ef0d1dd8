"""Async orchestration: running, watchers, per-object workers, processing, invoking, posting, probing.

Joins the pure core with the API client. Decides nothing itself that `_model` can decide.
"""
