"""Moves and positions as the clients see them: legality and notation, never which move.

python-chess is the judge, as it is for lichess-bot: a UCI move must be in the position's legal
moves in the position's own castling convention (`e1g1` in standard chess, king takes rook with
UCI_Chess960), lower-case; an XBoard move must be one python-chess's `push_xboard` (its SAN
parser, which also takes coordinates and O-O) accepts as legal.
"""

from __future__ import annotations

import re

import chess

from cb_async.tools.gui_habits.driver import CheckFailed

UCI_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][qrbn]?")
#: What UCI clients take as "no move": python-chess (`(none)`, `NULL`), cutechess (`0000`).
NO_MOVE = ("(none)", "0000", "NULL")


def uci_move(board: chess.Board, text: str, what: str = "bestmove") -> chess.Move:
    """The legal move `text` names in `board`, or a failure saying why it is not one."""
    if not UCI_MOVE.fullmatch(text):
        raise CheckFailed(f"{what} {text!r} is not a move in UCI notation (e2e4, e7e8q) in {board.fen()}")
    move = chess.Move.from_uci(text)
    if not board.is_legal(move):
        raise CheckFailed(f"{what} {text!r} is illegal in {board.fen()}")
    # python-chess takes castling in both forms; the GUIs take only the position's own.
    canonical = board.uci(move)
    if canonical != text:
        convention = "king takes rook (UCI_Chess960 is on)" if board.chess960 else "e1g1 (standard chess)"
        raise CheckFailed(f"{what} {text!r} is castling in the wrong notation: {canonical!r}, "
                          f"{convention}, in {board.fen()}")
    return board.parse_uci(canonical)


def xboard_move(board: chess.Board, text: str) -> chess.Move:
    """The legal move an XBoard `move` names (python-chess's parser), or a failure."""
    try:
        return board.parse_san(text)
    except ValueError:
        raise CheckFailed(f"move {text!r} is not a legal move python-chess can read in {board.fen()}") from None


def uci_position(board: chess.Board) -> str:
    """The `position` command a GUI sends for `board`: its root and every move since."""
    root = board.root()
    # python-chess keeps castling in the board's own convention: e1g1, or king takes rook in 960.
    moves = " ".join(move.uci() for move in board.move_stack)
    if root.fen() == chess.STARTING_FEN and not board.chess960:
        head = "position startpos"
    else:
        # python-chess writes the e.p. square after every double push, capturable or not.
        head = f"position fen {root.fen(shredder=board.chess960, en_passant='fen')}"
    return f"{head} moves {moves}" if moves else head

