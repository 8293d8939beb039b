"""Whole Chess960 games through python-chess's own UCI and XBoard clients (depth-limited).

The engine plays both sides from Chess960 start positions in which castling is soon possible;
python-chess checks every move it gets against its own rules, in its own notation for each
protocol (UCI_Chess960 king-takes-rook; XBoard `variant fischerandom` with O-O/O-O-O).
"""

from __future__ import annotations

import chess
import chess.engine
import pytest

from conformance.engine_process import engine_command

TIMEOUT = 30
MAX_PLIES = 80
#: Start positions (Scharnagl numbers) with the king between two rooks close to it.
POSITIONS = (518, 100, 959)


def _play_game(engine: chess.engine.SimpleEngine, number: int) -> chess.Board:
    board = chess.Board.from_chess960_pos(number)
    board.chess960 = True
    game = object()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < MAX_PLIES:
        result = engine.play(board, chess.engine.Limit(depth=2), game=game)
        assert result.move is not None and board.is_legal(result.move), (board.fen(), result.move)
        board.push(result.move)
    return board


@pytest.mark.parametrize("protocol", ["uci", "xboard"])
def test_whole_chess960_games(protocol: str) -> None:
    popen = chess.engine.SimpleEngine.popen_uci if protocol == "uci" else chess.engine.SimpleEngine.popen_xboard
    castled = 0
    with popen(engine_command(), timeout=TIMEOUT) as engine:
        for number in POSITIONS:
            board = _play_game(engine, number)
            assert board.move_stack
            replay = chess.Board.from_chess960_pos(number)
            for move in board.move_stack:
                castled += replay.is_castling(move)
                replay.push(move)
    assert castled > 0  # castling crossed the protocol both ways (the engine plays both sides)
