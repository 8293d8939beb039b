"""The structure terms: each counted as its name says, symmetric under a colour flip, the cached
sums equal to the weights times the counts, and carried by `play` exactly."""

from __future__ import annotations

import chess
import pytest

from cb_async.search.evaluation import evaluate_from_scratch
from cb_async.search.structure import NAMES, WEIGHTS, features, passer_kings, structure
from cb_async.tools.bench import POSITIONS


def counts(fen: str) -> dict[str, int]:
    return {name: count for name, count in zip(NAMES, features(chess.Board(fen))) if count}


@pytest.mark.parametrize("fen", [fen for fen in POSITIONS if "H" not in fen.split()[2]])
def test_a_colour_flip_negates_every_count_and_the_sums(fen: str) -> None:
    board = chess.Board(fen)
    flipped = board.mirror()
    assert features(flipped) == [-count for count in features(board)]
    mg, eg = structure(board)
    assert structure(flipped) == (-mg, -eg)


def test_passed_and_isolated_pawns() -> None:
    # White: a2 (passed, isolated), c2 and d5 (passed, neighbours); Black has no pawns.
    assert counts("4k3/8/8/3P4/8/8/P1P5/4K3 w - - 0 1") == {"passed rank 2": 2, "passed rank 5": 1, "isolated": 1}


def test_a_pawn_with_an_enemy_pawn_ahead_on_a_neighbour_file_is_not_passed() -> None:
    assert "passed rank 4" not in counts("4k3/2p5/8/8/3P4/8/8/4K3 w - - 0 1")
    assert counts("4k3/8/8/8/3P4/8/8/2p1K3 w - - 0 1")["passed rank 4"] == 1  # c1 is behind


def test_doubled_and_connected_pawns() -> None:
    found = counts("4k3/8/8/8/3P4/2PP4/8/4K3 w - - 0 1")
    assert found["doubled"] == 1
    assert found["connected rank 4"] == 1  # d4 is defended by c3
    assert found["connected rank 3"] == 2  # c3 and d3 stand side by side


def test_connected_pawns_count_by_rank() -> None:
    # e6 defended by d5, which nothing defends; g2 alone; Black's a7 and b7 side by side.
    found = counts("4k3/pp6/4P3/3P4/8/8/6P1/4K3 w - - 0 1")
    assert found["connected rank 6"] == 1
    assert "connected rank 5" not in found
    assert found["connected rank 2"] == -2


def test_a_backward_pawn() -> None:
    # No pawn can come to defend d3 (c4 and e4 are ahead of it) and Black's e5 pawn attacks
    # d4, its next square.
    assert counts("4k3/8/8/4p3/2P1P3/3P4/8/4K3 w - - 0 1").get("backward") == 1
    # With the c-pawn on c3, level with d3, d3 can be defended: not backward.
    assert "backward" not in counts("4k3/8/8/4p3/4P3/2PP4/8/4K3 w - - 0 1")
    # Nothing holds d4: not backward either.
    assert "backward" not in counts("4k3/8/8/8/2P1P3/3P4/8/4K3 w - - 0 1")


def test_the_bishop_pair() -> None:
    assert counts("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1") == {"bishop pair": 1}
    assert counts("2b1kb2/8/8/8/8/8/8/4KB2 w - - 0 1") == {"bishop pair": -1}
    assert "bishop pair" not in counts("2b1kb2/8/8/8/8/8/8/2B1KB2 w - - 0 1")


@pytest.mark.parametrize("fen", POSITIONS[:12])
def test_the_cached_sums_are_the_weights_times_the_counts(fen: str) -> None:
    board = chess.Board(fen)
    expected_mg = sum(count * mg for count, (_, mg, _) in zip(features(board), WEIGHTS))
    expected_eg = sum(count * eg for count, (_, _, eg) in zip(features(board), WEIGHTS))
    assert structure(board) == (expected_mg, expected_eg)
    assert structure(board) == (expected_mg, expected_eg)  # and again from the cache


def test_a_passed_pawn_is_worth_more_than_one_an_enemy_pawn_can_stop() -> None:
    # The same two pawns; only on a7 Black's pawn is not in the way of d5.
    passed = chess.Board("7k/p7/8/3P4/2K5/8/8/8 w - - 0 1")
    stoppable = chess.Board("7k/4p3/8/3P4/2K5/8/8/8 w - - 0 1")
    assert structure(passed)[1] > structure(stoppable)[1]


def test_a_passed_pawn_the_enemy_king_cannot_reach_is_worth_more() -> None:
    # White's g6 pawn; its next square is g7. The kings' distances to it are capped at 5.
    runaway = passer_kings(chess.Board("8/8/6P1/8/8/8/8/k3K3 w - - 0 1"))
    caught = passer_kings(chess.Board("7k/8/6P1/8/8/8/8/4K3 w - - 0 1"))
    escorted = passer_kings(chess.Board("7k/8/5KP1/8/8/8/8/8 w - - 0 1"))
    assert runaway == (4 * 5 - 2 * 5) * 7
    assert caught < 0 < runaway
    assert caught < escorted


def test_only_passed_pawns_past_the_third_rank_count_the_kings() -> None:
    assert passer_kings(chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 1")) == 0
    assert passer_kings(chess.Board("k7/8/8/8/8/6P1/8/4K3 w - - 0 1")) == 0  # g3: rank 3
    assert passer_kings(chess.Board("k7/6p1/8/8/8/6P1/8/4K3 w - - 0 1")) == 0  # g3 not passed


@pytest.mark.parametrize("fen", [
    "8/1k6/8/6P1/8/2p5/8/5K2 w - - 0 1",
    "8/8/2k5/1pP5/1P6/3K4/8/8 b - - 0 1",
    "8/p7/8/8/5k2/8/3P3K/8 w - - 0 1",
])
def test_a_colour_flip_negates_the_kings_part(fen: str) -> None:
    board = chess.Board(fen)
    assert passer_kings(board.mirror()) == -passer_kings(board)


def test_play_carries_the_structure_through_every_kind_of_move() -> None:
    """Pawn moves, pawn and bishop captures, en passant, promotions, king moves and castling:
    the incremental sum equals the sum from scratch after each."""
    from cb_async.search.play import play

    fens = [
        "r3k2r/1pp2ppp/p1n1bn2/2bPp3/4P3/2N1BN2/PPB2PPP/R3K2R w KQkq e6 0 1",
        "r3k2r/1pp2ppp/p1n1bn2/2bPp3/4P3/2N1BN2/PPB2PPP/R3K2R b KQkq - 0 1",
        "2b1kb2/3P4/8/1B6/8/8/8/R3K2R w KQ - 0 1",
        "4k3/1P6/8/8/8/8/6p1/4K2R w K - 0 1",
        "rnb1kb1r/pp3ppp/2p2n2/3pp3/2PP4/2N2N2/PP2PPPP/R1B1KB1R b KQkq c3 0 1",
    ]
    for fen in fens:
        board = chess.Board(fen)
        start = evaluate_from_scratch(board)
        for move in list(board.legal_moves):
            delta = play(board, move)
            assert tuple(a + b for a, b in zip(start, delta)) == evaluate_from_scratch(board), (fen, move)
            board.pop()
