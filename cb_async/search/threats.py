"""Two pieces attacked at once: the threat the quiescence search cannot see for the side to move.

The quiescence search lets the side to move stand pat: it assumes that side can always find a
quiet move no worse than the static evaluation. That holds against one threat (the attacked
piece steps away) but not against two: after a fork by a pawn or a knight, standing pat scores
the position as if nothing were lost, and a quiet move into such a fork, one ply before the
horizon, looks free. `forked` counts the side to move's pieces attacked by enemy pieces worth
less (pawns on knights and bishops; pawns, knights and bishops on rooks and queens; rooks too on
queens) and, when there are two or more, charges a share of the second most valuable: moving
the first away loses the second, unless a capture or a check (which the search does try) saves
both.
"""

from __future__ import annotations

import chess

#: Piece values for the charge (index by piece type).
VALUE = (0, 100, 320, 330, 500, 950, 0)
#: The charge is the second most valuable threatened piece's value divided by this.
SHARE = 3
#: The largest charge there can be: the second of a queen and a queen (more than one queen is
#: rare) is at most a queen's value over the share; the search skips the test when even this
#: would not move the score across its window.
MOST = VALUE[chess.QUEEN] // SHARE

_NOT_A = chess.BB_ALL & ~chess.BB_FILE_A
_NOT_H = chess.BB_ALL & ~chess.BB_FILE_H
_ALL = chess.BB_ALL
_KNIGHT = chess.BB_KNIGHT_ATTACKS
_DIAG_MASKS = chess.BB_DIAG_MASKS
_DIAG = chess.BB_DIAG_ATTACKS
_FILE_MASKS = chess.BB_FILE_MASKS
_FILE = chess.BB_FILE_ATTACKS
_RANK_MASKS = chess.BB_RANK_MASKS
_RANK = chess.BB_RANK_ATTACKS


def forked(board: chess.Board) -> int:
    """The charge, in centipawns (0 or more), against the side to move for two or more of its
    pieces attacked by enemy pieces worth less."""
    us = board.turn
    ours = board.occupied_co[us]
    theirs = board.occupied_co[not us]
    minors = ours & (board.knights | board.bishops)
    heavies = ours & (board.rooks | board.queens)
    if (minors | heavies).bit_count() < 2:
        return 0
    their_pawns = board.pawns & theirs
    if us:  # Black's pawns attack downwards
        attacked = ((their_pawns >> 7) & _NOT_A) | ((their_pawns >> 9) & _NOT_H)
    else:
        attacked = ((their_pawns << 7) & _NOT_H & _ALL) | ((their_pawns << 9) & _NOT_A & _ALL)
    threatened = minors & attacked
    if heavies:
        occupied = board.occupied
        pieces = theirs & board.knights
        while pieces:
            square = pieces.bit_length() - 1
            pieces ^= 1 << square
            attacked |= _KNIGHT[square]
        pieces = theirs & board.bishops
        while pieces:
            square = pieces.bit_length() - 1
            pieces ^= 1 << square
            attacked |= _DIAG[square][_DIAG_MASKS[square] & occupied]
        threatened |= heavies & attacked
        queens = ours & board.queens
        if queens and not queens & attacked:
            pieces = theirs & board.rooks
            while pieces:
                square = pieces.bit_length() - 1
                pieces ^= 1 << square
                threatened |= queens & (
                    _FILE[square][_FILE_MASKS[square] & occupied] | _RANK[square][_RANK_MASKS[square] & occupied]
                )
    if threatened.bit_count() < 2:
        return 0
    values = sorted(
        (VALUE[board.piece_type_at(square) or 0] for square in chess.scan_forward(threatened)), reverse=True
    )
    return values[1] // SHARE
