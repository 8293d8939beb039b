"""perft against published node counts, and the `cb-async perft` output format.

perft walks python-chess's move generator (the one the search uses), so comparing it with
python-chess itself could never fail: the expected figures are the published ones.
"""

from __future__ import annotations

import chess
import pytest

from cb_async.cli import main as cli
from cb_async.tools.perft import divide, parse_position, perft

PUBLISHED = [
    pytest.param("startpos", 4, 197281, id="start"),
    pytest.param("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3, 97862, id="kiwipete"),
    pytest.param("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4, 43238, id="position3-ep-pins"),
    pytest.param("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3, 9467, id="position4"),
    pytest.param("r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1", 3, 9467, id="position4-mirrored"),
    pytest.param("rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3, 62379, id="position5"),
    pytest.param("r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 3, 89890, id="position6"),
    pytest.param("n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1", 3, 9483, id="promotions"),
    pytest.param("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", 3, 12189, id="chess960-1"),
    pytest.param("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", 3, 18002, id="chess960-2"),
]


@pytest.mark.parametrize(("fen", "depth", "expected"), PUBLISHED)
def test_perft_matches_published_counts(fen: str, depth: int, expected: int) -> None:
    assert perft(parse_position(fen), depth) == expected


def test_en_passant_that_exposes_the_king_is_not_generated() -> None:
    # exd3 e.p. would take both pawns off the fourth rank and leave the king to the queen.
    board = parse_position("8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1")
    moves = {board.uci(move) for move, _ in divide(board, 1)}
    assert "e4d3" not in moves
    assert perft(board, 1) == 6


def test_chess960_is_detected_from_the_castling_field() -> None:
    assert parse_position("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9").chess960
    assert parse_position("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1").chess960
    assert not parse_position("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").chess960
    assert not parse_position("startpos").chess960


def test_cli_prints_divide_then_total(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["perft", "startpos", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "Nodes searched: 400"
    assert lines[-2] == ""
    assert len(lines) == 22
    assert "e2e4: 20" in lines
    assert sum(int(line.split(": ")[1]) for line in lines[:-2]) == 400


def test_cli_accepts_fen_as_separate_fields(capsys: pytest.CaptureFixture[str]) -> None:
    fields = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1".split()
    assert cli(["perft", *fields, "2"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "Nodes searched: 2039"


def test_cli_prints_chess960_castling_as_king_takes_rook(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["perft", "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", "1"]) == 0
    out = capsys.readouterr().out
    assert "e1h1: 1" in out and "e1a1: 1" in out
    assert "e1g1" not in out


def test_cli_prints_standard_castling_as_king_two_squares(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["perft", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "1"]) == 0
    out = capsys.readouterr().out
    assert "e1g1: 1" in out and "e1c1: 1" in out


@pytest.mark.parametrize(
    "argv",
    [[], ["startpos"], ["startpos", "x"], ["startpos", "0"], ["not a fen", "2"], ["8/8/8/8/8/8/8/8 w - - 0 1", "1"]],
)
def test_cli_rejects_bad_input_with_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["perft", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip()
    assert captured.out == ""


def test_perft_leaves_the_board_unchanged() -> None:
    board = chess.Board()
    perft(board, 3)
    assert board == chess.Board()
