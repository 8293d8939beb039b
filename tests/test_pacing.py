"""Pacing: a stable best move stops early, a changing one or a falling score thinks longer,
never past the hard deadline, and no iteration starts that cannot finish."""

from __future__ import annotations

import time

import chess

from cb_async.search.control import StopToken
from cb_async.search.pacing import Pacing

E4, D4 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("d2d4")


def pacing_one_second_in(soft_after: float = 1.5, hard_after: float = 4.0) -> Pacing:
    """A search that started a second ago, with deadlines `soft_after`/`hard_after` after its start."""
    start = time.monotonic() - 1.0
    token = StopToken()
    token.set_deadlines(start + soft_after, start + hard_after)
    return Pacing(token, start)


def test_untimed_searches_go_on() -> None:
    pacing = Pacing(StopToken(), time.monotonic())
    pacing.completed(E4, 10)
    assert pacing.keep_going()


def test_a_long_stable_best_move_stops_before_the_soft_deadline() -> None:
    pacing = pacing_one_second_in()
    for _ in range(6):
        pacing.completed(E4, 10)
    assert not pacing.keep_going()  # 0.6 x 1.5 s = 0.9 s < 1 s


def test_a_changing_best_move_goes_past_the_soft_deadline() -> None:
    pacing = pacing_one_second_in(soft_after=0.9)
    pacing.completed(E4, 10)
    pacing.completed(D4, 10)  # changed: 1.5 x 0.9 s = 1.35 s > 1 s
    assert pacing.keep_going()


def test_a_falling_score_earns_time() -> None:
    steady = pacing_one_second_in(soft_after=0.95)
    falling = pacing_one_second_in(soft_after=0.95)
    for pacing, last in ((steady, 10), (falling, -60)):
        pacing.completed(E4, 10)
        pacing.completed(E4, 10)
        pacing.completed(E4, last)  # stable for 2 iterations: scale 1.0
    assert not steady.keep_going()
    assert falling.keep_going()  # 1.4 x 0.95 s


def test_never_past_the_hard_deadline() -> None:
    pacing = pacing_one_second_in(soft_after=0.9, hard_after=0.99)
    pacing.completed(E4, 10)
    pacing.completed(D4, -100)
    assert not pacing.keep_going()


def test_an_iteration_that_cannot_finish_is_not_started() -> None:
    start = time.monotonic() - 1.0
    token = StopToken()
    token.set_deadlines(start + 3.0, start + 1.5)  # 0.5 s left before the hard deadline
    pacing = Pacing(token, start)
    pacing.completed(E4, 10)  # the first iteration took the whole second
    assert not pacing.keep_going()


def test_a_stop_ends_it() -> None:
    token = StopToken()
    pacing = Pacing(token, time.monotonic())
    token.set()
    assert not pacing.keep_going()


def test_a_fixed_move_time_is_searched_whole() -> None:
    start = time.monotonic() - 1.0
    token = StopToken()
    token.set_deadlines(start + 1.5, start + 1.5)
    pacing = Pacing(token, start, flexible=False)
    for _ in range(6):
        pacing.completed(E4, 10)  # a stable move would stop a paced search here
    assert pacing.keep_going()
