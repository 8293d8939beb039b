"""How long to keep deepening: the soft budget, stretched or shrunk by what the search sees.

The time manager gives a soft and a hard deadline. Between iterations the search asks
`Pacing.keep_going()`: a best move that has stood for several iterations will not change with
one more, so stop early and bank the time; a best move that just changed, or a score that
dropped, is a position worth more thought, so go on past the soft deadline (never past the
hard one). And an iteration that cannot finish before the hard deadline is not started: it
would be thrown away.

A fixed time per move (UCI `movetime`, CNP `timeMs`) is not paced: it is searched whole.
"""

from __future__ import annotations

import math
import time

import chess

from cb_async.search.control import StopToken

#: How the soft budget scales with the best move's stability (iterations it has stood).
STABLE_SCALE = {0: 1.5, 1: 1.2, 2: 1.0, 3: 0.8}
LONG_STABLE_SCALE = 0.6
#: A score drop of this many centipawns since the last iteration earns more time.
DROP_CP = 40
DROP_SCALE = 1.4
MAX_SCALE = 2.0
#: Each iteration takes about this many times the one before it.
BRANCHING = 2.0


class Pacing:
    """Tracks the iterations of one search and decides whether another one is worth starting."""

    def __init__(self, stop: StopToken, start: float, flexible: bool = True) -> None:
        self._stop = stop
        self._start = start
        self._flexible = flexible
        self._best: chess.Move | None = None
        self._stable = 0
        self._score: int | None = None
        self._scale = 1.0
        self._last_iteration = 0.0
        self._iteration_start = start

    def completed(self, best: chess.Move, score: int) -> None:
        """An iteration finished with this best move and score (centipawns or a mate score)."""
        now = time.monotonic()
        self._last_iteration = now - self._iteration_start
        self._iteration_start = now
        self._stable = self._stable + 1 if best == self._best else 0
        self._best = best
        scale = STABLE_SCALE.get(self._stable, LONG_STABLE_SCALE)
        if self._score is not None and self._score - score >= DROP_CP:
            scale *= DROP_SCALE
        self._score = score
        self._scale = min(scale, MAX_SCALE)

    def keep_going(self) -> bool:
        """False when the search should stop deepening and answer."""
        stop = self._stop
        if not self._flexible:
            return not stop.soft_expired()
        if stop.should_stop():
            return False
        soft, hard = stop.soft_deadline, stop.hard_deadline
        if soft == math.inf:
            return True
        now = time.monotonic()
        stretched = min(self._start + (soft - self._start) * self._scale, hard)
        if now >= stretched:
            return False
        # The next iteration would not finish before the hard deadline: do not start it.
        return hard == math.inf or now + self._last_iteration * BRANCHING < hard
