"""The evaluation's structure terms: passed, isolated, doubled and supported pawns, and the
bishop pair.

PeSTO's piece-square tables (`evaluation`) know where a pawn stands but not whether anything
can stop it: a passed pawn on the fifth rank and a blocked one score the same. These terms add
what the tables cannot see, and they are chosen so that they cost the search little: they
depend only on the pawns and the number of bishops, which most moves do not touch. `play` adds
their change to a move's evaluation delta only when the move moves or takes a pawn (a lookup
in a cache keyed by the two sides' pawns: a line of the search revisits the same few pawn
skeletons again and again) or takes a bishop (a bit count). Terms that involve the kings
cannot be kept that way, since every king move changes them: the king's pawn shelter was left
out, and the kings' distances to a passed pawn's next square (`passer_kings`) are counted apart,
from the cached passed pawns, only in the endgame and not in the sums `play` carries.

Every term is a count (White's minus Black's) times a midgame and an endgame weight, from
White's point of view like the tables. The weights are set by hand from what engines of this
size use, kept small where the tables already pay (an advanced pawn scores by its square) and
each on its term's side (`SIGNS`); `features` gives the counts in `WEIGHTS`' order, for tests and
fits (`python3 dev.py tune`).
"""

from __future__ import annotations

import chess

#: (name, midgame weight, endgame weight) of each term, in centipawns per unit of its count.
WEIGHTS: tuple[tuple[str, int, int], ...] = (
    ("passed rank 2", 0, 5),
    ("passed rank 3", 0, 10),
    ("passed rank 4", 5, 20),
    ("passed rank 5", 10, 40),
    ("passed rank 6", 15, 50),
    ("passed rank 7", 20, 60),
    ("isolated", -8, -10),
    ("doubled", -12, -22),
    ("supported", 5, 5),
    ("bishop pair", 20, 35),
)
NAMES = tuple(name for name, _, _ in WEIGHTS)
#: The side each term's weights keep in a fit: a bonus (+1) or a penalty (-1).
SIGNS: dict[str, int] = {name: -1 if name in ("isolated", "doubled") else 1 for name in NAMES}
#: The terms that depend on the pawns alone (cached together); the bishop pair follows.
PAWN_TERMS = 9

_FILES = chess.BB_FILES
_ADJACENT = tuple(
    (_FILES[file - 1] if file > 0 else 0) | (_FILES[file + 1] if file < 7 else 0) for file in range(8)
)


def _ahead(square: int, colour: bool) -> int:
    """Every square on the ranks in front of `square`, as seen by `colour`."""
    rank = square >> 3
    if colour:
        return chess.BB_ALL & (chess.BB_ALL << (8 * (rank + 1))) if rank < 7 else 0
    return chess.BB_ALL >> (8 * (8 - rank)) if rank else 0


#: [colour][square]: the squares in front of a pawn on its own and the neighbouring files (no
#: enemy pawn there means the pawn is passed).
_PASSED_SPAN: tuple[tuple[int, ...], ...] = tuple(
    tuple((_FILES[square & 7] | _ADJACENT[square & 7]) & _ahead(square, bool(colour)) for square in range(64))
    for colour in (chess.BLACK, chess.WHITE)
)
_PAWN_ATTACKS = chess.BB_PAWN_ATTACKS


def _passers(ours: int, theirs: int, colour: bool) -> int:
    """The passed pawns among one side's pawns `ours` (the enemy's `theirs`), as a bitboard."""
    span = _PASSED_SPAN[colour]
    passers = 0
    pawns = ours
    while pawns:
        square = pawns.bit_length() - 1
        pawns ^= 1 << square
        if not span[square] & theirs:
            passers |= 1 << square
    return passers


def _side_counts(ours: int, theirs: int, colour: bool) -> list[int]:
    """The pawn counts of one side (its pawns `ours`, the enemy's `theirs`)."""
    counts = [0] * PAWN_TERMS
    passers = _passers(ours, theirs, colour)
    pawns = ours
    while pawns:
        square = pawns.bit_length() - 1
        pawns ^= 1 << square
        if passers >> square & 1:
            rank = square >> 3 if colour else 7 - (square >> 3)  # 1 (second rank) to 6 (seventh)
            counts[rank - 1] += 1
        if not ours & _ADJACENT[square & 7]:
            counts[6] += 1
        if _PAWN_ATTACKS[not colour][square] & ours:
            counts[8] += 1
    for file_mask in _FILES:
        on_file = (ours & file_mask).bit_count()
        if on_file > 1:
            counts[7] += on_file - 1
    return counts


def pawn_features(white_pawns: int, black_pawns: int) -> list[int]:
    """White's pawn counts minus Black's."""
    white = _side_counts(white_pawns, black_pawns, chess.WHITE)
    black = _side_counts(black_pawns, white_pawns, chess.BLACK)
    return [w - b for w, b in zip(white, black)]


def bishop_pair(board: chess.Board) -> int:
    """1 if only White has two bishops or more, -1 if only Black, else 0."""
    bishops = board.bishops
    occupied_co = board.occupied_co
    return ((bishops & occupied_co[1]).bit_count() >= 2) - ((bishops & occupied_co[0]).bit_count() >= 2)


def features(board: chess.Board) -> list[int]:
    """Every term's count, White's minus Black's, in `WEIGHTS`' order."""
    pawns, white = board.pawns, board.occupied_co[1]
    return pawn_features(pawns & white, pawns & ~white) + [bishop_pair(board)]


_PAWN_MG = tuple(mg for _, mg, _ in WEIGHTS[:PAWN_TERMS])
_PAWN_EG = tuple(eg for _, _, eg in WEIGHTS[:PAWN_TERMS])
#: The bishop pair's weights, which `play` applies itself when a bishop is taken.
PAIR_MG, PAIR_EG = WEIGHTS[PAWN_TERMS][1:]
#: (white pawns, black pawns) -> (midgame, endgame) of the pawn terms.
_cache: dict[tuple[int, int], tuple[int, int]] = {}
#: Entries kept before the cache starts over (a few MB; a search meets far fewer skeletons).
CACHE_LIMIT = 1 << 16


#: (white pawns, black pawns) -> (White's passed pawns, Black's), as bitboards.
_passer_cache: dict[tuple[int, int], tuple[int, int]] = {}


def passed_pawns(white_pawns: int, black_pawns: int) -> tuple[int, int]:
    """Each side's passed pawns (no enemy pawn in front on its own or a neighbouring file)."""
    key = (white_pawns, black_pawns)
    cached = _passer_cache.get(key)
    if cached is None:
        if len(_passer_cache) >= CACHE_LIMIT:
            _passer_cache.clear()
        cached = _passer_cache[key] = (
            _passers(white_pawns, black_pawns, chess.WHITE),
            _passers(black_pawns, white_pawns, chess.BLACK),
        )
    return cached


#: Below this phase (an endgame share above a sixth) `passer_kings` is counted.
PASSER_PHASE = 20
#: [relative rank 1..6]: how much the kings' distances to a passed pawn's next square weigh.
_PASSER_RANK = (0, 0, 0, 2, 4, 7, 9)
#: [a * 64 + b]: the king distance between two squares, capped at 5 (farther is as far).
_DISTANCE = tuple(min(chess.square_distance(a, b), 5) for a in range(64) for b in range(64))


def passer_kings(board: chess.Board) -> int:
    """The endgame bonus of passed pawns whose square ahead the enemy king is far from and
    their own king near, from White's point of view.

    A passed pawn the enemy king cannot catch, or that its own king escorts, is worth far more
    than its rank says, and the pawn terms cannot see it (they leave the kings out to stay
    cached). Counted only in the endgame's share of the evaluation, the kings' distances
    being what decides a pawn race.
    """
    pawns, white = board.pawns, board.occupied_co[1]
    white_passers, black_passers = passed_pawns(pawns & white, pawns & ~white)
    if not (white_passers or black_passers):
        return 0
    kings = board.kings
    white_king = (kings & white).bit_length() - 1
    black_king = (kings & ~white).bit_length() - 1
    total = 0
    while white_passers:
        square = white_passers.bit_length() - 1
        white_passers ^= 1 << square
        weight = _PASSER_RANK[square >> 3]
        if weight:
            stop = square + 8
            total += (4 * _DISTANCE[black_king * 64 + stop] - 2 * _DISTANCE[white_king * 64 + stop]) * weight
    while black_passers:
        square = black_passers.bit_length() - 1
        black_passers ^= 1 << square
        weight = _PASSER_RANK[7 - (square >> 3)]
        if weight:
            stop = square - 8
            total -= (4 * _DISTANCE[white_king * 64 + stop] - 2 * _DISTANCE[black_king * 64 + stop]) * weight
    return total


def pawn_structure(white_pawns: int, black_pawns: int) -> tuple[int, int]:
    """(midgame, endgame) of the pawn terms, from White's point of view, from the cache."""
    key = (white_pawns, black_pawns)
    cached = _cache.get(key)
    if cached is None:
        mg = eg = 0
        for count, w_mg, w_eg in zip(pawn_features(white_pawns, black_pawns), _PAWN_MG, _PAWN_EG):
            if count:
                mg += count * w_mg
                eg += count * w_eg
        if len(_cache) >= CACHE_LIMIT:
            _cache.clear()
        cached = _cache[key] = (mg, eg)
    return cached


def structure(board: chess.Board) -> tuple[int, int]:
    """(midgame, endgame) of all these terms, from White's point of view."""
    pawns, white = board.pawns, board.occupied_co[1]
    mg, eg = pawn_structure(pawns & white, pawns & ~white)
    pair = bishop_pair(board)
    return mg + pair * PAIR_MG, eg + pair * PAIR_EG
