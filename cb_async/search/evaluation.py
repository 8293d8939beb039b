"""The evaluation: tapered material and piece-square tables, kept incrementally.

The tables began as PeSTO's (Ronald Friederich's tuned midgame/endgame values) and are
refitted with the structure's weights by `cb-async tune fit --tables` to Stockfish's evaluations
of quiet positions (`scripts/make-tuning-data.sh`, the table set of docs/strength.md). The search never
scans the board to evaluate: it carries the (midgame, endgame, phase) sums down the tree and
updates them per move from the moving piece, the captured piece and the promotion, which costs
a few table reads instead of a walk over 32 pieces.

All sums are from White's point of view (Black's entries are negated), so that one update rule
serves both colours: add the piece on its new square, subtract it from the old one, subtract
whatever it captured.

On top of the tables, `structure` adds the terms they cannot see (passed, isolated and doubled
pawns, the king's shelter, the bishop pair); `play` carries their change down the tree the same
way, for the few moves that change them.
"""

from __future__ import annotations

import chess

from cb_async.search.structure import structure

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
        -141, 46, 120, -3, 2, -137, -25, 57,
        -60, 4, 28, 48, 4, 78, 107, -23,
        -34, -29, -27, -8, -3, 25, -11, -15,
        -52, -47, -36, -23, -18, -16, -15, -27,
        -61, -48, -40, -41, -38, -21, -28, -28,
        -67, -53, -54, -51, -39, -12, -10, -30,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    chess.KNIGHT: (
        -138, -47, 18, 0, 129, -56, 40, -68,
        -28, 11, 79, 9, 20, 130, 66, 38,
        3, 50, 69, 81, 152, 107, 151, 109,
        44, 27, 42, 69, 33, 76, 43, 53,
        19, 16, 28, 26, 24, 39, -1, 21,
        -1, 15, 20, 34, 24, 15, 25, 11,
        24, -24, 11, 5, 17, 56, 21, 26,
        -65, -2, -11, -35, -16, 1, -20, 31,
    ),
    chess.BISHOP: (
        29, 67, -34, 19, 33, 13, 71, 53,
        -33, 9, -28, 61, 85, 29, 25, 7,
        21, 78, -4, 90, 236, 52, 151, 21,
        46, -3, 36, 44, 0, 78, 5, 41,
        -33, 19, -1, -4, 18, 1, 35, 12,
        -12, 14, 23, 12, 1, 7, 19, 8,
        6, 3, 32, -5, 1, 15, 33, 64,
        -10, 56, -20, -38, -22, -13, 17, 38,
    ),
    chess.ROOK: (
        117, 177, 48, 160, 12, 251, 310, 253,
        64, 56, 160, 117, 161, 129, 59, 66,
        84, 87, 74, 99, 106, 106, 283, 170,
        24, 66, 75, 38, 15, 105, 110, 98,
        28, 63, 28, 25, 79, 36, 39, 39,
        -9, -14, 17, -2, 19, 22, 24, -18,
        3, 21, 45, 42, 7, 7, 71, -11,
        15, 32, 31, 33, 33, 8, 29, -2,
    ),
    chess.QUEEN: (
        23, 162, 209, 190, 245, 227, 226, 292,
        136, 104, 150, 177, 157, 242, 208, 239,
        156, 171, 104, 161, 209, 241, 231, 217,
        159, 144, 157, 147, 143, 117, 129, 157,
        157, 163, 166, 149, 178, 173, 162, 153,
        149, 178, 153, 151, 146, 149, 177, 153,
        134, 155, 167, 175, 176, 173, 172, 177,
        154, 139, 159, 157, 160, 162, 139, 117,
    ),
    chess.KING: (
        -76, 27, 19, -18, -66, -40, 2, 15,
        203, 127, 106, -177, -315, -208, -178, 147,
        20, -13, 51, -110, -306, -168, 73, 103,
        179, 145, -101, -181, -140, -159, -40, -69,
        142, 5, -25, -194, -155, -82, -157, -124,
        34, -51, -18, 3, -76, -51, -66, 7,
        13, 90, 7, -31, -12, -24, 7, 9,
        -49, 24, 44, -22, -5, -20, 23, 23,
    ),
}

_EG_TABLES: dict[int, tuple[int, ...]] = {
    chess.PAWN: (
        0, 0, 0, 0, 0, 0, 0, 0,
        214, 127, 159, 200, 179, 250, 216, 142,
        41, 12, 37, -27, -8, -13, -36, 6,
        5, 15, 5, -16, -5, 1, -7, -19,
        4, 16, 4, -6, -1, 3, -1, -12,
        11, 11, -16, -6, 7, 4, 7, -23,
        4, 3, 13, -45, 13, 1, 1, -14,
        0, 0, 0, 0, 0, 0, 0, 0,
    ),
    chess.KNIGHT: (
        -20, 4, 33, 15, 12, 16, -26, -68,
        19, 10, -57, -7, -39, 19, 20, -13,
        20, 31, 30, -6, -97, -12, -53, 0,
        -21, -11, -15, -8, 21, 2, 16, -68,
        -37, -68, 7, 25, 18, -8, -19, -28,
        -38, -14, 10, 13, 8, 14, -40, 12,
        -1, -51, -8, -1, 2, -23, -60, -88,
        14, -35, -52, -19, 9, -34, -21, -27,
    ),
    chess.BISHOP: (
        34, 26, 38, 41, 43, 40, 31, 23,
        -25, -18, 5, -66, -88, -1, -34, 34,
        -29, -71, -23, -40, -117, -12, -127, -14,
        -56, -21, -33, 0, 19, -72, 2, -59,
        -12, -27, 7, 9, -13, 13, -63, 9,
        7, 16, -14, -14, 7, -6, -13, -20,
        -18, -12, -33, -23, -10, -4, -12, 19,
        1, 9, -44, 13, 5, -28, 45, 31,
    ),
    chess.ROOK: (
        -44, -75, -42, -36, -7, -89, -113, -92,
        -20, -26, -68, -37, -54, -71, -63, -57,
        -48, -56, -37, -46, -47, -66, -157, -83,
        -24, -52, -16, -10, 1, -36, -48, -56,
        -32, -33, -24, -22, -32, -29, -51, -31,
        -19, -8, -6, -3, -12, 5, -21, -54,
        -14, -45, -28, -33, -27, -34, -51, -48,
        -29, -48, -18, -22, -25, -21, -35, -25,
    ),
    chess.QUEEN: (
        45, -12, 186, 192, 192, 183, 172, -83,
        38, 32, 29, 208, 228, 190, 195, 160,
        -33, -35, 62, 45, 215, 201, 183, -75,
        14, -18, -5, 37, 2, 108, 54, 22,
        -51, 18, -38, -16, -11, -12, 27, -21,
        3, -67, -8, -13, -5, 45, -52, -86,
        -31, -56, -66, -86, -69, -47, 118, 123,
        -68, -16, -24, -81, -115, -130, 137, 112,
    ),
    chess.KING: (
        -87, -41, -21, -21, -13, 18, 5, -20,
        -45, -25, 3, 38, 78, 32, 75, -121,
        -5, 10, 19, 46, 69, 79, -13, -95,
        -50, -18, 48, 37, 29, 42, 0, -24,
        -72, -23, -11, 29, 34, 13, 25, 5,
        -22, -9, 3, -3, 5, -1, 1, -14,
        -30, -36, -15, -13, -7, -12, -15, -22,
        25, -20, -26, -55, -54, -12, -28, -28,
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
    return mg + structure_mg, eg + structure_eg, phase


def blend(mg: int, eg: int, phase: int, turn: bool) -> int:
    """The tapered score from the side to move's point of view, in centipawns."""
    if phase > MAX_PHASE:
        phase = MAX_PHASE
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
