"""`kopf.lifecycles`: which of the due change handlers run in one cycle.

`asap` (the default: one per cycle, the fewest retries first), `one_by_one`, `all_at_once`,
`randomized`, `shuffled`; or your own `fn(handlers, *, state, **kwargs) -> handlers`.
"""
from kopf._core.progress import (
                                  Lifecycle,
                                  all_at_once,
                                  asap,
                                  get_default_lifecycle,
                                  one_by_one,
                                  randomized,
                                  set_default_lifecycle,
                                  shuffled,
)

__all__ = ['Lifecycle', 'all_at_once', 'asap', 'get_default_lifecycle', 'one_by_one', 'randomized',
           'set_default_lifecycle', 'shuffled']
