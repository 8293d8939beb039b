"""python-chess's own XBoard client (lichess-bot's protocol "xboard") drives the real binary.

It is strict in ways that matter: it requires `ping` and `setboard`, raises on any `Error` or
`Illegal move` line, emulates node limits with `nps`, and waits for `pong` after every move.
"""

from __future__ import annotations

from collections.abc import Iterator

import chess
import chess.engine
import pytest

from conformance.engine_process import engine_command

TIMEOUT = 30


@pytest.fixture
def engine() -> Iterator[chess.engine.SimpleEngine]:
    with chess.engine.SimpleEngine.popen_xboard(engine_command(), timeout=TIMEOUT) as engine:
        yield engine


def test_identity_features_and_options(engine: chess.engine.SimpleEngine) -> None:
    assert engine.id["name"].startswith("cb-async")
    assert {"MultiPV", "MoveOverhead", "ClearHash", "memory", "cores"} <= set(engine.options)
    assert engine.options["MoveOverhead"].default == 30
    engine.configure({"MoveOverhead": 50, "memory": 32, "cores": 1})
    engine.ping()


def test_game_with_clock_and_pondering(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    clock = {chess.WHITE: 4.0, chess.BLACK: 4.0}
    game = object()
    for ply in range(10):
        if board.is_game_over():
            break
        limit = chess.engine.Limit(white_clock=clock[chess.WHITE], black_clock=clock[chess.BLACK],
                                   white_inc=0.05, black_inc=0.05, clock_id=game)
        result = engine.play(board, limit, game=game, ponder=True, info=chess.engine.INFO_ALL)
        assert result.move is not None and result.move in board.legal_moves
        if result.ponder is not None:
            after = board.copy()
            after.push(result.move)
            assert result.ponder in after.legal_moves
        if ply >= 2:
            assert "score" in result.info and "depth" in result.info
        board.push(result.move)
    engine.send_game_result(board)  # type: ignore[attr-defined]
    engine.ping()


def test_first_move_with_st_then_level(engine: chess.engine.SimpleEngine) -> None:
    """lichess-bot's first move uses `st` (Limit.time), the next ones a clock (`level`)."""
    board = chess.Board()
    result = engine.play(board, chess.engine.Limit(time=0.2))
    assert result.move in board.legal_moves
    board.push(result.move)
    board.push(next(iter(board.legal_moves)))
    result = engine.play(board, chess.engine.Limit(white_clock=2.0, black_clock=2.0, white_inc=0.1,
                                                   black_inc=0.1, clock_id="game"))
    assert result.move in board.legal_moves


def test_depth_limit(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    result = engine.play(board, chess.engine.Limit(depth=2), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    assert result.info.get("depth") == 2


def test_node_limit_through_nps(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    result = engine.play(board, chess.engine.Limit(nodes=500), info=chess.engine.INFO_ALL)
    assert result.move in board.legal_moves
    assert result.info.get("nodes", 0) < 5000


def test_mate_in_one_is_found_and_the_game_is_over(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    result = engine.play(board, chess.engine.Limit(depth=3), info=chess.engine.INFO_SCORE)
    assert result.move == chess.Move.from_uci("a1a8")
    assert result.info["score"].relative == chess.engine.Mate(1)


def test_analysis_with_depth_and_root_moves(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    info = engine.analyse(board, chess.engine.Limit(depth=3))
    assert info.get("depth", 0) >= 3
    assert info["pv"][0] in board.legal_moves
    root_moves = [chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3")]
    info = engine.analyse(board, chess.engine.Limit(depth=2), root_moves=root_moves)
    assert info["pv"][0] in root_moves


def test_analysis_stopped_and_then_a_game_move(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 2:
                break
    result = engine.play(board, chess.engine.Limit(time=0.1))
    assert result.move in board.legal_moves


def test_chess960_castling(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board("3k4/2p1p3/1N3N2/8/8/8/P7/R1K5 w A - 0 1", chess960=True)
    result = engine.play(board, chess.engine.Limit(depth=3))
    assert result.move is not None and board.is_castling(result.move)
    board.push(result.move)
    assert board.is_checkmate()


def test_an_xboard_start_through_python_chess_logs_no_warning(caplog: pytest.LogCaptureFixture) -> None:
    """lichess-bot operators read python-chess's log: a start must not warn (it once said
    `Rejecting feature sigterm=0` every time)."""
    with caplog.at_level("DEBUG", logger="chess.engine"):
        with chess.engine.SimpleEngine.popen_xboard(engine_command(), timeout=TIMEOUT) as engine:
            engine.ping()
            opponent = chess.engine.Opponent(name="someone", title=None, rating=1500, is_engine=True)
            engine.send_opponent_information(opponent=opponent, engine_rating=1400)
            assert engine.play(chess.Board(), chess.engine.Limit(depth=1)).move is not None
    assert [r.getMessage() for r in caplog.records if r.levelno >= 30] == []
    sent = [r.getMessage() for r in caplog.records if "<< " in r.getMessage()]
    assert any(line.endswith("<< rating 1400 1500") for line in sent), sent
    assert not any("rejected" in line for line in sent), sent
