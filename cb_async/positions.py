"""Positions from text: the one FEN parser of every protocol.

FEN, X-FEN and Shredder-FEN, with the move counters optional (a 4-field FEN gets `0 1`).
GUIs write FENs that are a little off (castling rights whose rook has moved, an en-passant
square no pawn can take), and a GUI engine plays them: those two faults are forgiven by
default, as python-chess's move generation ignores them anyway. CNP promises its clients an
exact check, so it asks for `strict=True`, which refuses them too.
"""

from __future__ import annotations

import chess


class FenError(ValueError):
    """A FEN that gives no playable position; the message says what is wrong."""


_FORGIVEN = chess.STATUS_BAD_CASTLING_RIGHTS | chess.STATUS_INVALID_EP_SQUARE


def parse_fen(fen: str, *, chess960: bool, strict: bool = False) -> chess.Board:
    """The board of `fen` (a Chess960 board if `chess960`), or FenError."""
    fields = fen.split()
    if len(fields) == 4:
        fields += ["0", "1"]
    if len(fields) != 6:
        raise FenError(f"a FEN has 6 fields, not {len(fields)}")
    try:
        board = chess.Board(" ".join(fields), chess960=chess960)
    except ValueError as error:
        raise FenError(f"bad FEN: {error}") from None
    status = board.status()
    if strict and status & chess.STATUS_BAD_CASTLING_RIGHTS and not chess960:
        raise FenError("castling rights without their rooks in the corners "
                       "(a Chess960 position needs chess960: true)")
    if status & ~(0 if strict else _FORGIVEN):
        raise FenError("not a legal position")
    return board
