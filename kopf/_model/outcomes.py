"""The outcome of one attempt of one handler: the contract between invoking and the progress state machine.

Invocation (handlers issue) turns what a handler did into an `Outcome` and decides nothing over time.
The progress state machine (persistence issue) alone decides what an outcome means across attempts:
whether a retry is due and when, and when retries or the timeout are exhausted.
"""
import dataclasses
import enum
from typing import Any


class OutcomeKind(enum.Enum):
    SUCCESS = 'success'  # returned normally (or an arbitrary error in IGNORED mode): final
    RETRY = 'retry'      # TemporaryError, or an arbitrary error in TEMPORARY mode: wants another attempt
    FAILURE = 'failure'  # PermanentError (incl. its subclasses), or an arbitrary error in PERMANENT mode: final
    TIMEOUT = 'timeout'  # cancelled by the enforced `timeout=` (async handlers only): final


@dataclasses.dataclass(frozen=True)
class Outcome:
    """The result of one handler attempt: success, retry (with delay), failure or timeout."""
    kind: OutcomeKind
    result: Any = None                       # the handler's return value (SUCCESS only)
    exception: BaseException | None = None   # what was raised, if anything
    delay: float | None = None               # RETRY: seconds before the next attempt; None = at once
    subrefs: tuple[str, ...] = ()            # ids of sub-handlers seen during this attempt

    @property
    def final(self) -> bool:
        return self.kind is not OutcomeKind.RETRY

    @property
    def message(self) -> str | None:
        return None if self.exception is None else (str(self.exception) or repr(self.exception))
