"""The time manager: turns a clock into a soft and a hard budget for one move.

The soft budget is checked between iterations (no new iteration starts after it); the hard one
inside the search. Neither ever plans past the clock minus the Move Overhead, and with a few
milliseconds left the hard budget shrinks to about a millisecond so that the search still
answers at once with a legal move.
"""

from __future__ import annotations

import math
import time

import chess

from cb_async.limits import Limits
from cb_async.search.control import StopToken

#: Moves the remaining time is spread over in sudden death. Games from the usual openings last
#: about 45 to 55 more moves, and most are decided in the middlegame: 20 spends the clock while it
#: matters (30 left about half of it unused at 10+0.1 against a fast opponent).
DEFAULT_MOVES_TO_GO = 20
#: The least a budget is ever worth: enough to hand back the first legal move.
MIN_BUDGET_MS = 1.0


def budget(limits: Limits, side: chess.Color, move_overhead: float) -> tuple[float, float]:
    """(soft, hard) in milliseconds for the side to move; (inf, inf) when nothing is timed."""
    if limits.infinite:
        return math.inf, math.inf
    hard = math.inf
    soft = math.inf
    if limits.movetime is not None:
        # "Search exactly x ms": keep the overhead margin, but never below half the time.
        hard = max(limits.movetime - move_overhead, limits.movetime / 2, MIN_BUDGET_MS)
        soft = hard
    remaining, increment = limits.clock(side)
    if remaining is not None:
        clock_soft, clock_hard = _clock_budget(remaining, increment, limits.moves_to_go, move_overhead)
        soft = min(soft, clock_soft)
        hard = min(hard, clock_hard)
    return soft, hard


def deadlines(limits: Limits, side: chess.Color, move_overhead: float, start: float) -> tuple[float, float] | None:
    """Absolute `time.monotonic()` (soft, hard) deadlines of a search whose clock starts at
    `start`, or None when nothing is timed. The session is the one caller in the engine."""
    if not limits.is_timed:
        return None
    soft, hard = budget(limits, side, move_overhead)
    return start + soft / 1000, start + hard / 1000


def stop_token(limits: Limits, side: chess.Color, move_overhead: float = 0.0) -> StopToken:
    """A stop token with the deadlines the session would give a search starting now: for tests,
    `bench` and tools that run the search core directly, without a session."""
    token = StopToken()
    timed = deadlines(limits, side, move_overhead, time.monotonic())
    if timed is not None:
        token.set_deadlines(*timed)
    return token


def _clock_budget(remaining: float, increment: float, moves_to_go: int | None, overhead: float) -> tuple[float, float]:
    horizon = moves_to_go if moves_to_go else DEFAULT_MOVES_TO_GO
    usable = remaining - overhead
    if usable <= MIN_BUDGET_MS:
        return MIN_BUDGET_MS, MIN_BUDGET_MS  # nearly flagged: answer at once
    # The Move Overhead is lag that every move pays on its way (GUI, pipes, network), not only
    # the last one: plan the horizon as if each of its moves cost it, and count the increments
    # the horizon brings. When the increment is small this keeps about horizon x overhead on
    # the clock, so that a move that comes late never flags.
    planned = remaining + increment * (horizon - 1) - overhead * (horizon + 2)
    # Whatever the reserve, spend up to half the increment: the clock still grows back.
    ideal = max(planned / horizon, min(increment / 2, usable * 0.05))
    # Never more than three times the ideal or twice the fair share of the clock, and never more
    # than three quarters of what is left after the overhead: a large increment must not tempt
    # one move into spending the whole clock, move after move.
    hard = max(MIN_BUDGET_MS, min(3.0 * ideal, 2.0 * remaining / horizon + increment, 0.75 * usable))
    soft = max(MIN_BUDGET_MS, min(0.7 * ideal, hard))
    return soft, hard
