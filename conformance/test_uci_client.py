"""python-chess's own UCI client (what lichess-bot uses) drives the real binary."""

from __future__ import annotations

import chess
import chess.engine
import pytest

from conformance.engine_process import engine_command

TIMEOUT = 30


@pytest.fixture
def engine():
    with chess.engine.SimpleEngine.popen_uci(engine_command(), timeout=TIMEOUT) as engine:
        yield engine


def test_identity_and_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("cb-async")
    for name in ("Hash", "Threads", "MultiPV", "Ponder", "Move Overhead", "UCI_Chess960", "Clear Hash", "UCI_ShowWDL"):
        assert name in engine.options
    assert engine.options["Move Overhead"].default == 30


def test_game_with_clock_and_pondering(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    clock = {chess.WHITE: 3.0, chess.BLACK: 3.0}
    for _ in range(12):
        if board.is_game_over():
            break
        limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                   white_inc=0.05, black_inc=0.05)
        result = engine.play(board, limit, ponder=True, info=chess.engine.INFO_ALL)
        assert result.move is not None and result.move in board.legal_moves
        if result.ponder is not None:
            after = board.copy()
            after.push(result.move)
            assert result.ponder in after.legal_moves
        board.push(result.move)


def test_analyse_multipv(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    infos = engine.analyse(board, chess.engine.Limit(depth=4), multipv=3)
    assert len(infos) == 3
    first_moves = [info["pv"][0] for info in infos]
    assert len(set(first_moves)) == 3
    assert all(move in board.legal_moves for move in first_moves)
    scores = [info["score"].relative.score(mate_score=100000) for info in infos]
    assert scores == sorted(scores, reverse=True)
    assert [info["multipv"] for info in infos] == [1, 2, 3]


def test_analysis_stopped(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 3:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves


def test_mate_limit(engine: chess.engine.SimpleEngine) -> None:
    # White mates in 2: 1. Qh6+ ... (a classic short mate)
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1")
    result = engine.play(board, chess.engine.Limit(mate=1), info=chess.engine.INFO_SCORE)
    assert result.move == chess.Move.from_uci("d1d8")
    assert result.info["score"].relative == chess.engine.Mate(1)


def test_root_moves(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    result = engine.play(board, chess.engine.Limit(depth=3), root_moves=[chess.Move.from_uci("a2a3")])
    assert result.move == chess.Move.from_uci("a2a3")


def test_chess960_game(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board.from_chess960_pos(518 - 100)
    for _ in range(6):
        result = engine.play(board, chess.engine.Limit(depth=2))
        assert result.move in board.legal_moves
        board.push(result.move)
