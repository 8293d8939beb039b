"""Limits validate on construction and name the offending field."""

from __future__ import annotations

import chess
import pytest

from cb_async.limits import MAX_DEPTH, Limits, LimitsError


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"depth": -1}, "depth"),
        ({"depth": 0}, "depth"),
        ({"nodes": 0}, "nodes"),
        ({"mate": -2}, "mate"),
        ({"multipv": 0}, "multipv"),
        ({"multipv": 1000}, "multipv"),
        ({"movetime": -5}, "movetime"),
        ({"white_clock": -1}, "white_clock"),
        ({"black_inc": -1}, "black_inc"),
        ({"moves_to_go": 0}, "moves_to_go"),
        ({"depth": True}, "depth"),
    ],
)
def test_nonsense_is_rejected_naming_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(LimitsError) as error:
        Limits(**changes)  # type: ignore[arg-type]
    assert error.value.field == field
    assert field in str(error.value)


def test_search_moves_must_be_moves() -> None:
    with pytest.raises(LimitsError) as error:
        Limits(search_moves=("e2e4",))  # type: ignore[arg-type]
    assert error.value.field == "search_moves"


def test_depth_is_clamped_and_search_moves_become_a_tuple() -> None:
    limits = Limits(depth=MAX_DEPTH + 50, search_moves=[chess.Move.from_uci("e2e4")])  # type: ignore[arg-type]
    assert limits.depth == MAX_DEPTH
    assert limits.search_moves == (chess.Move.from_uci("e2e4"),)


def test_pondering_drops_the_clock_and_keeps_the_rest() -> None:
    moves = (chess.Move.from_uci("e2e4"),)
    limits = Limits(
        movetime=1000, white_clock=60000, black_clock=50000, white_inc=1000, black_inc=900,
        moves_to_go=20, depth=9, nodes=5000, mate=3, search_moves=moves, multipv=2,
    )
    ponder = limits.pondering()
    assert ponder.movetime is None
    assert ponder.white_clock is None and ponder.black_clock is None
    assert ponder.white_inc == 0 and ponder.black_inc == 0
    assert ponder.moves_to_go is None
    assert (ponder.depth, ponder.nodes, ponder.mate, ponder.search_moves, ponder.multipv) == (9, 5000, 3, moves, 2)
    assert not ponder.infinite
    assert not ponder.is_timed


def test_pondering_an_infinite_search_is_not_infinite() -> None:
    assert not Limits(infinite=True).pondering().infinite


def test_clock_of_each_side() -> None:
    limits = Limits(white_clock=1000, black_clock=2000, white_inc=10, black_inc=20)
    assert limits.clock(chess.WHITE) == (1000, 10)
    assert limits.clock(chess.BLACK) == (2000, 20)
    assert limits.is_timed and limits.has_clock
    assert not Limits(depth=3).is_timed
