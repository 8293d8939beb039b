"""The evaluation: tapered material and piece-square tables, kept incrementally.

The tables are PeSTO's (Ronald Friederich's tuned midgame/endgame values). The search never
scans the board to evaluate: it carries the (midgame, endgame, phase) sums down the tree and
updates them per move from the moving piece, the captured piece and the promotion, which costs
a few table reads instead of a walk over 32 pieces.

All sums are from White's point of view (Black's entries are negated), so that one update rule
serves both colours: add the piece on its new square, subtract it from the old one, subtract
whatever it captured.

On top of the tables, `structure` adds the terms they cannot see (passed, isolated and doubled
pawns, the bishop pair) and `shelter` the king's pawn shelter in the midgame; `play` carries
their change down the tree the same way, for the few moves that change them. The one term that involves the kings, how far each
king is from a passed pawn's next square (`passer_kings`), cannot be carried that way (every
king move changes it), so `blend` and the search add it where they read the endgame share, and
only in the endgame, where it decides pawn races.
"""

from __future__ import annotations

import chess

from cb_async.search.shelter import shelter
from cb_async.search.structure import PASSER_PHASE, passer_kings, structure

#: Phase weight of each piece type (index by python-chess piece type; 0 unused).
PHASE_WEIGHT = (0, 0, 1, 1, 2, 4, 0)
#: The phase of the full starting material; more (after promotions) is clamped to it.
MAX_PHASE = 24
#: A small bonus for having the move, which evens out odd/even iteration swings.
TEMPO = 10

_MG_VALUE = (0, 82, 337, 365, 477, 1025, 0)
_EG_VALUE = (0, 94, 281, 297, 512, 936, 0)

# Tables from White's side, first entry a8, last h1 (as printed: rank 8 on top).
_MG_TABLES: dict[int, tuple[int, ...]] = {
    chess.PAWN: (
        0, 0, 0, 0, 0, 0, 0, 0,
        98, 134, 61, 95, 68, 126, 34, -11,
        -6, 7, 26, 31, 65, 56, 25, -20,
        -14, 13, 6, 21, 23, 12, 17, -23,
        -27, -2, -5, 12, 17, 6, 10, -25,
        -26, -4, -4, -10, 3, 3, 33, -12,
        -35, -1, -20, -23, -15, 24, 38, -22,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    chess.KNIGHT: (
        -167, -89, -34, -49, 61, -97, -15, -107,
        -73, -41, 72, 36, 23, 62, 7, -17,
        -47, 60, 37, 65, 84, 129, 73, 44,
        -9, 17, 19, 53, 37, 69, 18, 22,
        -13, 4, 16, 13, 28, 19, 21, -8,
        -23, -9, 12, 10, 19, 17, 25, -16,
        -29, -53, -12, -3, -1, 18, -14, -19,
        -105, -21, -58, -33, -17, -28, -19, -23,
    ),
    chess.BISHOP: (
        -29, 4, -82, -37, -25, -42, 7, -8,
        -26, 16, -18, -13, 30, 59, 18, -47,
        -16, 37, 43, 40, 35, 50, 37, -2,
        -4, 5, 19, 50, 37, 37, 7, -2,
        -6, 13, 13, 26, 34, 12, 10, 4,
        0, 15, 15, 15, 14, 27, 18, 10,
        4, 15, 16, 0, 7, 21, 33, 1,
        -33, -3, -14, -21, -13, -12, -39, -21,
    ),
    chess.ROOK: (
        32, 42, 32, 51, 63, 9, 31, 43,
        27, 32, 58, 62, 80, 67, 26, 44,
        -5, 19, 26, 36, 17, 45, 61, 16,
        -24, -11, 7, 26, 24, 35, -8, -20,
        -36, -26, -12, -1, 9, -7, 6, -23,
        -45, -25, -16, -17, 3, 0, -5, -33,
        -44, -16, -20, -9, -1, 11, -6, -71,
        -19, -13, 1, 17, 16, 7, -37, -26,
    ),
    chess.QUEEN: (
        -28, 0, 29, 12, 59, 44, 43, 45,
        -24, -39, -5, 1, -16, 57, 28, 54,
        -13, -17, 7, 8, 29, 56, 47, 57,
        -27, -27, -16, -16, -1, 17, -2, 1,
        -9, -26, -9, -10, -2, -4, 3, -3,
        -14, 2, -11, -2, -5, 2, 14, 5,
        -35, -8, 11, 2, 8, 15, -3, 1,
        -1, -18, -9, 10, -15, -25, -31, -50,
    ),
    chess.KING: (
        -65, 23, 16, -15, -56, -34, 2, 13,
        29, -1, -20, -7, -8, -4, -38, -29,
        -9, 24, 2, -16, -20, 6, 22, -22,
        -17, -20, -12, -27, -30, -25, -14, -36,
        -49, -1, -27, -39, -46, -44, -33, -51,
        -14, -14, -22, -46, -44, -30, -15, -27,
        1, 7, -8, -64, -43, -16, 9, 8,
        -15, 36, 12, -54, 8, -28, 24, 14,
    ),
}

_EG_TABLES: dict[int, tuple[int, ...]] = {
    chess.PAWN: (
        0, 0, 0, 0, 0, 0, 0, 0,
        178, 173, 158, 134, 147, 132, 165, 187,
        94, 100, 85, 67, 56, 53, 82, 84,
        32, 24, 13, 5, -2, 4, 17, 17,
        13, 9, -3, -7, -7, -8, 3, -1,
        4, 7, -6, 1, 0, -5, -1, -8,
        13, 8, 8, 10, 13, 0, 2, -7,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    chess.KNIGHT: (
        -58, -38, -13, -28, -31, -27, -63, -99,
        -25, -8, -25, -2, -9, -25, -24, -52,
        -24, -20, 10, 9, -1, -9, -19, -41,
        -17, 3, 22, 22, 22, 11, 8, -18,
        -18, -6, 16, 25, 16, 17, 4, -18,
        -23, -3, -1, 15, 10, -3, -20, -22,
        -42, -20, -10, -5, -2, -20, -23, -44,
        -29, -51, -23, -15, -22, -18, -50, -64,
    ),
    chess.BISHOP: (
        -14, -21, -11, -8, -7, -9, -17, -24,
        -8, -4, 7, -12, -3, -13, -4, -14,
        2, -8, 0, -1, -2, 6, 0, 4,
        -3, 9, 12, 9, 14, 10, 3, 2,
        -6, 3, 13, 19, 7, 10, -3, -9,
        -12, -3, 8, 10, 13, 3, -7, -15,
        -14, -18, -7, -1, 4, -9, -15, -27,
        -23, -9, -23, -5, -9, -16, -5, -17,
    ),
    chess.ROOK: (
        13, 10, 18, 15, 12, 12, 8, 5,
        11, 13, 13, 11, -3, 3, 8, 3,
        7, 7, 7, 5, 4, -3, -5, -3,
        4, 3, 13, 1, 2, 1, -1, 2,
        3, 5, 8, 4, -5, -6, -8, -11,
        -4, 0, -5, -1, -7, -12, -8, -16,
        -6, -6, 0, 2, -9, -9, -11, -3,
        -9, 2, 3, -1, -5, -13, 4, -20,
    ),
    chess.QUEEN: (
        -9, 22, 22, 27, 27, 19, 10, 20,
        -17, 20, 32, 41, 58, 25, 30, 0,
        -20, 6, 9, 49, 47, 35, 19, 9,
        3, 22, 24, 45, 57, 40, 57, 36,
        -18, 28, 19, 47, 31, 34, 39, 23,
        -16, -27, 15, 6, 9, 17, 10, 5,
        -22, -23, -30, -16, -16, -23, -36, -32,
        -33, -28, -22, -43, -5, -32, -20, -41,
    ),
    chess.KING: (
        -74, -35, -18, -18, -11, 15, 4, -17,
        -12, 17, 14, 17, 17, 38, 23, 11,
        10, 17, 23, 15, 20, 45, 44, 13,
        -8, 22, 24, 27, 26, 33, 26, 3,
        -18, -4, 21, 24, 27, 23, 9, -11,
        -19, -3, 11, 21, 23, 16, 7, -9,
        -27, -11, 4, 13, 14, 4, -5, -17,
        -53, -34, -21, -11, -28, -14, -24, -43,
    ),
}


def _signed_tables(values: tuple[int, ...], tables: dict[int, tuple[int, ...]]) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """[colour][piece type][square] -> signed value (material + square), White positive."""
    by_colour = []
    for colour in (chess.BLACK, chess.WHITE):
        rows: list[tuple[int, ...]] = [(0,) * 64]
        for piece_type in chess.PIECE_TYPES:
            table = tables[piece_type]
            if colour == chess.WHITE:
                rows.append(tuple(values[piece_type] + table[square ^ 56] for square in chess.SQUARES))
            else:
                rows.append(tuple(-(values[piece_type] + table[square]) for square in chess.SQUARES))
        by_colour.append(tuple(rows))
    return tuple(by_colour)


#: MG[colour][piece_type][square], EG likewise; colour is python-chess's bool used as an index.
MG = _signed_tables(_MG_VALUE, _MG_TABLES)
EG = _signed_tables(_EG_VALUE, _EG_TABLES)


def evaluate_from_scratch(board: chess.Board) -> tuple[int, int, int]:
    """(midgame, endgame, phase) sums of a whole board: the start of the incremental chain."""
    mg = eg = phase = 0
    for square, piece in board.piece_map().items():
        mg += MG[piece.color][piece.piece_type][square]
        eg += EG[piece.color][piece.piece_type][square]
        phase += PHASE_WEIGHT[piece.piece_type]
    structure_mg, structure_eg = structure(board)
    return mg + structure_mg + shelter(board), eg + structure_eg, phase


def blend(board: chess.Board, mg: int, eg: int, phase: int) -> int:
    """The tapered score from the side to move's point of view, in centipawns, with the kings'
    part of the passed pawns (`passer_kings`, not in the sums) in the endgame's share."""
    if phase > MAX_PHASE:
        phase = MAX_PHASE
    elif phase < PASSER_PHASE:
        eg += passer_kings(board)
    turn = board.turn
    value = (mg * phase + eg * (MAX_PHASE - phase)) // MAX_PHASE
    return (value if turn else -value) + TEMPO


def move_delta(board: chess.Board, move: chess.Move) -> tuple[int, int, int]:
    """How (midgame, endgame, phase) change when `move` is played on `board` (before the push).

    Handles captures, en passant, promotions and castling in both notations (king to its
    destination, or king takes own rook as in Chess960).
    """
    from_square = move.from_square
    to_square = move.to_square
    us = board.turn
    piece = board.piece_type_at(from_square)
    mg_us = MG[us]
    eg_us = EG[us]
    d_phase = 0
    if piece == chess.KING and (
        board.occupied_co[us] & chess.BB_SQUARES[to_square] or abs(to_square - from_square) == 2
    ):
        return _castling_delta(board, move, us)
    captured = board.piece_type_at(to_square)
    if captured:
        d_mg = -MG[not us][captured][to_square]
        d_eg = -EG[not us][captured][to_square]
        d_phase = -PHASE_WEIGHT[captured]
    elif piece == chess.PAWN and to_square == board.ep_square and (to_square - from_square) & 7:
        victim = to_square ^ 8
        d_mg = -MG[not us][chess.PAWN][victim]
        d_eg = -EG[not us][chess.PAWN][victim]
    else:
        d_mg = d_eg = 0
    promotion = move.promotion
    if promotion:
        return (
            d_mg + mg_us[promotion][to_square] - mg_us[chess.PAWN][from_square],
            d_eg + eg_us[promotion][to_square] - eg_us[chess.PAWN][from_square],
            d_phase + PHASE_WEIGHT[promotion],
        )
    return (
        d_mg + mg_us[piece][to_square] - mg_us[piece][from_square],  # type: ignore[index]
        d_eg + eg_us[piece][to_square] - eg_us[piece][from_square],  # type: ignore[index]
        d_phase,
    )


def _castling_delta(board: chess.Board, move: chess.Move, us: bool) -> tuple[int, int, int]:
    """King and rook both move; works for the e1g1 and the king-takes-rook notation."""
    king_from = move.from_square
    rank = king_from & 56
    if board.occupied_co[us] & chess.BB_SQUARES[move.to_square]:
        rook_from = move.to_square
    else:
        rook_from = rank | (7 if move.to_square > king_from else 0)
    kingside = rook_from > king_from
    king_to = rank | (6 if kingside else 2)
    rook_to = rank | (5 if kingside else 3)
    mg_us = MG[us]
    eg_us = EG[us]
    return (
        mg_us[chess.KING][king_to] - mg_us[chess.KING][king_from] + mg_us[chess.ROOK][rook_to] - mg_us[chess.ROOK][rook_from],
        eg_us[chess.KING][king_to] - eg_us[chess.KING][king_from] + eg_us[chess.ROOK][rook_to] - eg_us[chess.ROOK][rook_from],
        0,
    )
