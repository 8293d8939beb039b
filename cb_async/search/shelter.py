"""The king's pawn shelter and the enemy pawns storming it: a midgame term.

PeSTO's tables (`evaluation`) like a king on g1 and a pawn on g2, each on its own square, but
cannot see the two together: a castled king whose shelter pawns have advanced or gone scores
as well as one behind an intact wall. This term looks at the three files around the king: on
each, our pawn nearest the king in front of it (none, or one far up the board, shelters
little) and their pawn nearest our king there (one close by is about to open the file).

A king that can still castle is judged at the better of where it stands and where castling
would take it (the g- or the c-file), as a player would: an uncastled king with an intact
kingside is not in danger yet.

An open king costs what the enemy queen can make of it: with no queen on the board the term is
0. So it depends on the pawns, the kings' squares, the castling rights and whether a queen is
left, and `play` adds its change only for the moves that change those (pawn moves and captures,
king moves, queen captures, moves that cost a castling right), from a cache, and only while a
queen is on the board; every other move leaves it as it was.
"""

from __future__ import annotations

import chess

#: Our pawn nearest the king on a shelter file, by how many ranks it stands in front of the
#: king's rank (1 = right in front); farther, or no pawn at all, is `MISSING`.
SHIELD = (0, 0, -7, -16)
MISSING = -25
#: Their pawn nearest our king on a shelter file, by how many ranks in front of the king it
#: stands (2 = one square from our pawn's home in front of a king on its back rank); farther is 0.
STORM = (0, 0, -16, -8)

_FILES = chess.BB_FILES
#: (castling right's rook side) -> the file castling takes the king to.
_KINGSIDE_FILE = 6
_QUEENSIDE_FILE = 2


_FILE_A = chess.BB_FILE_A
#: Multiplying a file (as `_FILE_A` shifted) by this gathers its eight squares into the top
#: byte, rank 1 as its lowest bit.
_GATHER = 0x0102040810204080


def _nearest_ahead(ranks: int, rank: int, colour: bool) -> int | None:
    """How many ranks in front of `rank`, as `colour` sees it, the nearest of `ranks` (a byte,
    bit r for rank r) stands; None if none is in front."""
    ahead = range(rank + 1, 8) if colour else range(rank - 1, -1, -1)
    for distance, other in enumerate(ahead, 1):
        if ranks >> other & 1:
            return distance
    return None


def _shield_value(ranks: int, rank: int, colour: bool) -> int:
    distance = _nearest_ahead(ranks, rank, colour)
    return SHIELD[distance] if distance is not None and distance < len(SHIELD) else MISSING


def _storm_value(ranks: int, rank: int, colour: bool) -> int:
    distance = _nearest_ahead(ranks, rank, colour)
    return STORM[distance] if distance is not None and distance < len(STORM) else 0


#: [colour][king's rank][our pawns on a file, as a byte]: that file's shield; likewise their
#: pawns' storm. A file's term is two table reads instead of a scan.
_SHIELD_BY_FILE = tuple(
    tuple(tuple(_shield_value(ranks, rank, colour) for ranks in range(256)) for rank in range(8))
    for colour in (chess.BLACK, chess.WHITE)
)
_STORM_BY_FILE = tuple(
    tuple(tuple(_storm_value(ranks, rank, colour) for ranks in range(256)) for rank in range(8))
    for colour in (chess.BLACK, chess.WHITE)
)


def _shelter_at(ours: int, theirs: int, file: int, rank: int, colour: bool) -> int:
    """The shelter of a king of `colour` on (`file`, `rank`): a penalty, 0 at best."""
    centre = 1 if file < 1 else 6 if file > 6 else file
    shield = _SHIELD_BY_FILE[colour][rank]
    storm = _STORM_BY_FILE[colour][rank]
    total = 0
    for shelter_file in (centre - 1, centre, centre + 1):
        total += shield[((ours >> shelter_file) & _FILE_A) * _GATHER >> 56 & 0xFF]
        total += storm[((theirs >> shelter_file) & _FILE_A) * _GATHER >> 56 & 0xFF]
    return total


def _side(ours: int, theirs: int, king: int, castling: int, colour: bool) -> int:
    """One side's shelter: at its king, or where castling would take it if that is better."""
    rank = king >> 3
    best = _shelter_at(ours, theirs, king & 7, rank, colour)
    if castling:
        home = chess.BB_RANK_1 if colour else chess.BB_RANK_8
        rights = castling & home
        if rights & ~((1 << king) - 1) & home:  # a rook beyond the king: the king's side
            best = max(best, _shelter_at(ours, theirs, _KINGSIDE_FILE, rank, colour))
        if rights & ((1 << king) - 1):  # a rook before the king: the queen's side
            best = max(best, _shelter_at(ours, theirs, _QUEENSIDE_FILE, rank, colour))
    return best


#: The files a king's shelter reads, by the king's file: its own and its neighbours (the edge
#: files read the two next to them, as `_shelter_at` does).
_ZONE = tuple(
    _FILES[centre - 1] | _FILES[centre] | _FILES[centre + 1]
    for centre in (1 if file < 1 else 6 if file > 6 else file for file in range(8))
)
_HOME = (chess.BB_RANK_8, chess.BB_RANK_1)
#: (pawns, kings, White's pawns and king, castling rights) -> the term.
_cache: dict[tuple[int, int, int, int], int] = {}
#: (colour, king, its castling rights, our and their pawns on the files read) -> one side's
#: term: a miss above (a pawn moved far from one king) is mostly a hit here for that king.
_side_cache: dict[tuple[bool, int, int, int, int], int] = {}
#: Entries kept before a cache starts over.
CACHE_LIMIT = 1 << 16


def _cached_side(ours: int, theirs: int, king: int, castling: int, colour: bool) -> int:
    castling &= _HOME[colour]
    if not castling:
        zone = _ZONE[king & 7]
        ours &= zone
        theirs &= zone
    key = (colour, king, castling, ours, theirs)
    cached = _side_cache.get(key)
    if cached is None:
        if len(_side_cache) >= CACHE_LIMIT:
            _side_cache.clear()
        cached = _side_cache[key] = _side(ours, theirs, king, castling, colour)
    return cached


def shelter(board: chess.Board) -> int:
    """White's shelter less Black's, in midgame centipawns; 0 with no queen on the board (the
    piece that makes an open king pay).

    `play` asks this twice for every pawn or king move, so a hit costs only the key: the pawns,
    the kings, which of them are White's and the castling rights."""
    if not board.queens:
        return 0
    pawns = board.pawns
    kings = board.kings
    castling = board.castling_rights
    white = board.occupied_co[1] & (pawns | kings)
    key = (pawns, kings, white, castling)
    cached = _cache.get(key)
    if cached is None:
        white_pawns = pawns & white
        black_pawns = pawns & ~white
        white_king = (kings & white).bit_length() - 1
        black_king = (kings & ~white).bit_length() - 1
        if white_king < 0 or black_king < 0:
            cached = 0
        else:
            cached = (
                _cached_side(white_pawns, black_pawns, white_king, castling, chess.WHITE)
                - _cached_side(black_pawns, white_pawns, black_king, castling, chess.BLACK)
            )
        if len(_cache) >= CACHE_LIMIT:
            _cache.clear()
        _cache[key] = cached
    return cached
