"""The time manager's budgets over a table of clocks."""

from __future__ import annotations

import math

import chess
import pytest

from cb_async.limits import Limits
from cb_async.timeman import DEFAULT_MOVES_TO_GO, MIN_BUDGET_MS, budget

OVERHEAD = 30.0

CLOCKS = [
    # (remaining, increment, moves_to_go)
    (300_000, 0, None),
    (60_000, 0, None),
    (60_000, 1_000, None),
    (10_000, 100, None),
    (3_000, 0, None),
    (1_000, 5_000, None),
    (500, 0, None),
    (120_000, 0, 40),
    (120_000, 0, 1),
    (5_000, 0, 1),
    (60_000, 2_000, 5),
]


@pytest.mark.parametrize(("remaining", "increment", "moves_to_go"), CLOCKS)
def test_budget_stays_inside_the_clock(remaining: int, increment: int, moves_to_go: int | None) -> None:
    limits = Limits(white_clock=remaining, white_inc=increment, black_clock=1, moves_to_go=moves_to_go)
    soft, hard = budget(limits, chess.WHITE, OVERHEAD)
    assert MIN_BUDGET_MS <= soft <= hard
    assert hard <= remaining - OVERHEAD


@pytest.mark.parametrize("remaining", [0, 1, 5, 20, 30, 31])
def test_a_few_milliseconds_left_means_answer_at_once(remaining: int) -> None:
    soft, hard = budget(Limits(white_clock=remaining), chess.WHITE, OVERHEAD)
    assert soft == hard == MIN_BUDGET_MS


def test_only_the_side_to_move_clock_counts() -> None:
    limits = Limits(white_clock=60_000, black_clock=10)
    assert budget(limits, chess.WHITE, OVERHEAD)[1] > 1000
    assert budget(limits, chess.BLACK, OVERHEAD) == (MIN_BUDGET_MS, MIN_BUDGET_MS)


def test_an_increment_buys_time() -> None:
    without = budget(Limits(black_clock=60_000), chess.BLACK, OVERHEAD)
    with_increment = budget(Limits(black_clock=60_000, black_inc=2_000), chess.BLACK, OVERHEAD)
    assert with_increment[0] > without[0]
    assert with_increment[1] > without[1]


def test_the_last_move_before_the_control_may_use_most_of_the_clock() -> None:
    soft, hard = budget(Limits(white_clock=10_000, moves_to_go=1), chess.WHITE, OVERHEAD)
    assert 5_000 < hard <= 10_000 - OVERHEAD
    many = budget(Limits(white_clock=10_000, moves_to_go=40), chess.WHITE, OVERHEAD)
    assert many[1] < hard


def test_fewer_moves_to_go_means_more_time_per_move() -> None:
    forty = budget(Limits(white_clock=60_000, moves_to_go=40), chess.WHITE, OVERHEAD)
    ten = budget(Limits(white_clock=60_000, moves_to_go=10), chess.WHITE, OVERHEAD)
    assert ten[0] > forty[0]


@pytest.mark.parametrize(("movetime", "hard"), [(1000, 970.0), (100, 70.0), (40, 20.0), (1, 1.0)])
def test_movetime_keeps_the_overhead_but_never_below_half(movetime: int, hard: float) -> None:
    soft, got = budget(Limits(movetime=movetime), chess.WHITE, OVERHEAD)
    assert got == hard
    assert soft == hard


def test_movetime_and_clock_take_the_smaller() -> None:
    soft, hard = budget(Limits(movetime=10_000, white_clock=3_000), chess.WHITE, OVERHEAD)
    assert hard < 3_000 - OVERHEAD
    assert soft <= hard


@pytest.mark.parametrize("limits", [Limits(), Limits(depth=5), Limits(infinite=True, white_clock=1000)])
def test_untimed_searches_have_no_budget(limits: Limits) -> None:
    assert budget(limits, chess.WHITE, OVERHEAD) == (math.inf, math.inf)


@pytest.mark.parametrize("base,increment", [(1000, 10), (3000, 30), (10_000, 100), (60_000, 1000)])
def test_a_long_game_with_lag_on_every_move_never_flags(base: int, increment: int) -> None:
    """Every move spends its whole hard budget and then pays half the increment in lag (the
    GUI, the pipes): over 300 moves the clock keeps a reserve above the Move Overhead."""
    overhead, lag = 30, increment / 2
    clock = float(base)
    lowest = clock
    for _ in range(300):
        _, hard = budget(Limits(white_clock=int(clock), white_inc=increment), chess.WHITE, overhead)
        clock += increment - hard - lag
        lowest = min(lowest, clock)
    assert lowest > overhead


def test_the_overhead_is_reserved_for_every_move_of_the_horizon() -> None:
    """At 1+0.01 with a 30 ms overhead, a horizon's moves x 30 ms of the second are kept in
    reserve: what a move normally spends (the soft budget) is less than an even share."""
    soft, hard = budget(Limits(white_clock=1000, white_inc=10), chess.WHITE, 30)
    assert soft < (1000 - DEFAULT_MOVES_TO_GO * 30) / DEFAULT_MOVES_TO_GO + 10
    soft_more, _ = budget(Limits(white_clock=1000, white_inc=10), chess.WHITE, 0)
    assert soft_more > soft
