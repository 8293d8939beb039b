"""The structure terms: each counted as its name says, symmetric under a colour flip, the cached
sums equal to the weights times the counts, and carried by `play` exactly."""

from __future__ import annotations

import chess
import pytest

from cb_async.search.evaluation import evaluate_from_scratch
from cb_async.search.structure import NAMES, WEIGHTS, features, passer_kings, structure
from cb_async.tools.bench import POSITIONS


def counts(fen: str) -> dict[str, int]:
    """The non-zero counts but space, which nearly every position has (see its own test)."""
    return {name: count for name, count in zip(NAMES, features(chess.Board(fen))) if count and name != "space"}


def space(fen: str) -> int:
    return dict(zip(NAMES, features(chess.Board(fen))))["space"]


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


def test_doubled_and_supported_pawns() -> None:
    found = counts("4k3/8/8/8/3P4/2PP4/8/4K3 w - - 0 1")
    assert found["doubled"] == 1
    assert found["supported"] == 1  # d4 is defended by c3


def test_space_counts_the_safe_centre_squares_behind_the_pawns() -> None:
    assert space(chess.STARTING_FEN) == 0
    # White: d2 e2 c3 d3 e3 f3 c4 safe (f4 is attacked by e5), d2 d3 e2 e3 behind its pawns
    # counted twice: 11. Black: d7 e7 c6 e6 f6 safe (c5 d5 f5 are attacked), d7 e7 e6 behind
    # its pawns: 8.
    assert space("rnbqkbnr/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3") == 11 - 8


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
