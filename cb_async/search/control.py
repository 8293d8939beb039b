"""The stop token: how the outside world ends a running search.

The search polls `should_stop()` every 64 nodes (the searcher's `POLL_MASK`) and `soft_expired()` between
iterations. Both are cheap attribute reads and one `time.monotonic()` call. Deadlines are
absolute `time.monotonic()` seconds; `math.inf` means none. The session may set them before the
search starts (a `go` with a clock, counted from the moment the command arrived) or while it
runs (a ponder hit starts the clock). A token belongs to one search, so nothing left over from
one search can stop the next.
"""

from __future__ import annotations

import math
import time


class StopToken:
    """An in-process token: plain attributes, for tests, `bench` and thread executors."""

    __slots__ = ("_stopped", "_soft", "_hard")

    def __init__(self) -> None:
        self._stopped = False
        self._soft = math.inf
        self._hard = math.inf

    # -- written by the owner of the search -----------------------------------------------

    def set(self) -> None:
        """Ask the search to end as soon as it can (it still returns its best move)."""
        self._stopped = True

    def set_deadlines(self, soft: float, hard: float) -> None:
        """Absolute monotonic seconds: no new iteration after `soft`, stop at `hard`."""
        self._soft = soft
        self._hard = hard

    # -- read by the search ---------------------------------------------------------------

    def is_set(self) -> bool:
        return self._stopped

    @property
    def soft_deadline(self) -> float:
        return self._soft

    @property
    def hard_deadline(self) -> float:
        return self._hard

    @property
    def has_deadline(self) -> bool:
        return self.hard_deadline != math.inf

    def should_stop(self) -> bool:
        """Polled inside the search: a stop request or the hard deadline."""
        return self.is_set() or time.monotonic() >= self.hard_deadline

    def soft_expired(self) -> bool:
        """Polled between iterations: start no new one."""
        return self.should_stop() or time.monotonic() >= self.soft_deadline
