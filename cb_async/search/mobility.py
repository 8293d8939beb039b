"""Mobility: how many safe squares each knight, bishop, rook and queen reaches.

PeSTO's tables (`evaluation`) score a piece by its square alone: a bishop on a good diagonal
and one shut in by its own pawns score the same. Mobility counts what the piece actually
reaches: empty or enemy-occupied squares that no enemy pawn attacks, less what a piece of its
type typically reaches (`TYPICAL`), so that a piece with ordinary scope scores about what its
table says and the material values stay PeSTO's.

It needs the attack sets of every piece, which no per-move update keeps, so it is the one term
computed at the node, and only where it can matter: the quiescence search asks for it when the
rest of the evaluation is within `LAZY_MARGIN` of the window (a few safe squares more or less
cannot lift a score from far below alpha or sink one from far above beta).
"""

from __future__ import annotations

import chess

#: (midgame, endgame) centipawns per safe square, by piece type (knight, bishop, rook, queen).
WEIGHTS: dict[int, tuple[int, int]] = {
    chess.KNIGHT: (4, 4),
    chess.BISHOP: (5, 5),
    chess.ROOK: (2, 4),
    chess.QUEEN: (1, 2),
}
#: Safe squares a piece of each type reaches in an ordinary middlegame position.
TYPICAL: dict[int, int] = {chess.KNIGHT: 4, chess.BISHOP: 6, chess.ROOK: 6, chess.QUEEN: 12}
#: How far outside the window the rest of the evaluation may be and still ask for mobility.
LAZY_MARGIN = 120

_KNIGHT = chess.BB_KNIGHT_ATTACKS
_DIAG_MASKS = chess.BB_DIAG_MASKS
_DIAG = chess.BB_DIAG_ATTACKS
_FILE_MASKS = chess.BB_FILE_MASKS
_FILE = chess.BB_FILE_ATTACKS
_RANK_MASKS = chess.BB_RANK_MASKS
_RANK = chess.BB_RANK_ATTACKS
_NOT_FILE_A = chess.BB_ALL & ~chess.BB_FILE_A
_NOT_FILE_H = chess.BB_ALL & ~chess.BB_FILE_H
_ALL = chess.BB_ALL

_N_MG, _N_EG = WEIGHTS[chess.KNIGHT]
_B_MG, _B_EG = WEIGHTS[chess.BISHOP]
_R_MG, _R_EG = WEIGHTS[chess.ROOK]
_Q_MG, _Q_EG = WEIGHTS[chess.QUEEN]
_N_TYPICAL = TYPICAL[chess.KNIGHT]
_B_TYPICAL = TYPICAL[chess.BISHOP]
_R_TYPICAL = TYPICAL[chess.ROOK]
_Q_TYPICAL = TYPICAL[chess.QUEEN]


def counts(board: chess.Board) -> tuple[int, int, int, int]:
    """(knight, bishop, rook, queen) safe squares beyond the typical, White's minus Black's."""
    occupied = board.occupied
    knights = board.knights
    bishops = board.bishops
    rooks = board.rooks
    pawns = board.pawns
    white = board.occupied_co[1]
    black = board.occupied_co[0]
    black_pawns = pawns & black
    white_pawns = pawns & white
    # Squares each side's pawns attack: the other side's pieces are not safe there.
    by_black = ((black_pawns >> 7) & _NOT_FILE_A) | ((black_pawns >> 9) & _NOT_FILE_H)
    by_white = ((white_pawns << 7) & _NOT_FILE_H & _ALL) | ((white_pawns << 9) & _NOT_FILE_A & _ALL)
    n = b = r = q = 0
    for ours, free, sign in ((white, _ALL & ~(white | by_black), 1), (black, _ALL & ~(black | by_white), -1)):
        pieces = ours & ~pawns & ~board.kings
        while pieces:
            square = pieces.bit_length() - 1
            bit = 1 << square
            pieces ^= bit
            if bit & knights:
                n += sign * ((_KNIGHT[square] & free).bit_count() - _N_TYPICAL)
            elif bit & bishops:
                b += sign * ((_DIAG[square][_DIAG_MASKS[square] & occupied] & free).bit_count() - _B_TYPICAL)
            elif bit & rooks:
                r += sign * (
                    ((_FILE[square][_FILE_MASKS[square] & occupied] | _RANK[square][_RANK_MASKS[square] & occupied]) & free).bit_count()
                    - _R_TYPICAL
                )
            else:
                q += sign * (
                    (
                        (_DIAG[square][_DIAG_MASKS[square] & occupied]
                         | _FILE[square][_FILE_MASKS[square] & occupied]
                         | _RANK[square][_RANK_MASKS[square] & occupied])
                        & free
                    ).bit_count()
                    - _Q_TYPICAL
                )
    return n, b, r, q


def mobility(board: chess.Board, phase: int) -> int:
    """The mobility score from White's point of view, tapered by `phase` (0 to 24)."""
    n, b, r, q = counts(board)
    mg = n * _N_MG + b * _B_MG + r * _R_MG + q * _Q_MG
    eg = n * _N_EG + b * _B_EG + r * _R_EG + q * _Q_EG
    return (mg * phase + eg * (24 - phase)) // 24
