"""The king's shelter: what it charges and spares, symmetric under a colour flip, the tables equal
to a plain scan of the files, and carried by `play` exactly through every kind of move."""

from __future__ import annotations

import random

import chess
import pytest

from cb_async.search.evaluation import evaluate_from_scratch
from cb_async.search.shelter import MISSING, SHIELD, STORM, _shelter_at, shelter
from cb_async.tools.bench import POSITIONS

CASTLED = "r4rk1/pppq1ppp/2n2n2/8/8/2N2N2/PPPQ1PPP/R4RK1 w - - 0 1"


def scanned_shelter_at(ours: int, theirs: int, file: int, rank: int, colour: bool) -> int:
    """The term as its docstring says it, square by square."""
    step = 1 if colour else -1
    total = 0
    centre = min(max(file, 1), 6)
    for shelter_file in (centre - 1, centre, centre + 1):
        mine = storm = None
        for distance in range(1, 8):
            other = rank + step * distance
            if not 0 <= other < 8:
                break
            square = chess.square(shelter_file, other)
            if mine is None and ours & chess.BB_SQUARES[square]:
                mine = distance
            if storm is None and theirs & chess.BB_SQUARES[square]:
                storm = distance
        total += SHIELD[mine] if mine is not None and mine < len(SHIELD) else MISSING
        if storm is not None and storm < len(STORM):
            total += STORM[storm]
    return total


def test_the_tables_read_the_files_as_a_scan_does() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        ours = rng.getrandbits(64) & rng.getrandbits(64) & ~chess.BB_RANK_1 & ~chess.BB_RANK_8
        theirs = rng.getrandbits(64) & rng.getrandbits(64) & ~chess.BB_RANK_1 & ~chess.BB_RANK_8 & ~ours
        file, rank, colour = rng.randrange(8), rng.randrange(8), rng.random() < 0.5
        assert _shelter_at(ours, theirs, file, rank, colour) == scanned_shelter_at(ours, theirs, file, rank, colour)


def test_an_intact_castled_shelter_costs_nothing() -> None:
    assert shelter(chess.Board(CASTLED)) == 0


def test_an_advanced_or_missing_shelter_pawn_costs_its_weight() -> None:
    advanced = chess.Board(CASTLED.replace("PPPQ1PPP", "PPPQ1PP1").replace("8/8/2N2N2", "8/7P/2N2N2"))
    assert shelter(advanced) == SHIELD[3]
    missing = chess.Board(CASTLED.replace("PPPQ1PPP", "PPPQ1P1P"))
    assert shelter(missing) == MISSING


def test_an_enemy_pawn_storming_the_king_costs_its_weight() -> None:
    stormed = chess.Board(CASTLED.replace("pppq1ppp", "pppq1pp1").replace("8/8/2N2N2", "8/7p/2N2N2"))
    # Black's own h-pawn has left the shelter too: Black pays the missing pawn, White the storm.
    assert shelter(stormed) == STORM[3] - MISSING


def test_no_queen_no_shelter() -> None:
    board = chess.Board(CASTLED.replace("PPPQ1PPP", "PPP2P1P").replace("pppq1ppp", "ppp2ppp"))
    assert shelter(board) == 0


def test_a_king_that_can_still_castle_is_judged_where_castling_takes_it() -> None:
    """An e-file opened in front of an uncastled king costs nothing while castling to an
    intact side remains; without the right it costs the open file."""
    open_centre = "rnbqkbnr/pppp1ppp/8/8/8/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1"
    assert shelter(chess.Board(open_centre)) == 0
    no_rights = chess.Board(open_centre.replace("KQkq", "kq"))
    assert shelter(no_rights) == MISSING


@pytest.mark.parametrize("fen", [fen for fen in POSITIONS if "H" not in fen.split()[2]])
def test_a_colour_flip_negates_the_shelter(fen: str) -> None:
    board = chess.Board(fen)
    assert shelter(board.mirror()) == -shelter(board)


def test_play_carries_the_shelter_through_random_games_with_queens() -> None:
    """Pawn moves and captures, king moves, castling, queen captures, en passant and
    promotions, with queens on the board: the incremental sum equals the sum from scratch."""
    from cb_async.search.play import play

    rng = random.Random(11)
    checked = 0
    for _ in range(40):
        board = chess.Board()
        evaluation = evaluate_from_scratch(board)
        for _ in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            for move in moves:
                delta = play(board, move)
                assert tuple(a + b for a, b in zip(evaluation, delta)) == evaluate_from_scratch(board), (
                    board.fen(),
                    move,
                )
                board.pop()
                checked += 1
            move = rng.choice(moves)
            delta = play(board, move)
            evaluation = tuple(a + b for a, b in zip(evaluation, delta))  # type: ignore[assignment]
    assert checked > 10000
