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
#: [colour][rank]: the ranks in front of that rank, as seen by that colour.
_AHEAD = (
    tuple(chess.BB_ALL >> (8 * (8 - rank)) if rank else 0 for rank in range(8)),
    tuple(chess.BB_ALL & (chess.BB_ALL << (8 * (rank + 1))) if rank < 7 else 0 for rank in range(8)),
)
#: (castling right's rook side) -> the file castling takes the king to.
_KINGSIDE_FILE = 6
_QUEENSIDE_FILE = 2


def _shelter_at(ours: int, theirs: int, file: int, rank: int, colour: bool) -> int:
    """The shelter of a king of `colour` on (`file`, `rank`): a penalty, 0 at best."""
    centre = 1 if file < 1 else 6 if file > 6 else file
    ahead = _AHEAD[colour][rank]
    total = 0
    for shelter_file in (centre - 1, centre, centre + 1):
        column = _FILES[shelter_file] & ahead
        mine = ours & column
        if mine:
            # The nearest to the king: the lowest square for White, the highest for Black.
            square = (mine & -mine).bit_length() - 1 if colour else mine.bit_length() - 1
            distance = (square >> 3) - rank if colour else rank - (square >> 3)
            total += SHIELD[distance] if distance < len(SHIELD) else MISSING
        else:
            total += MISSING
        storm = theirs & column
        if storm:
            square = (storm & -storm).bit_length() - 1 if colour else storm.bit_length() - 1
            distance = (square >> 3) - rank if colour else rank - (square >> 3)
            if distance < len(STORM):
                total += STORM[distance]
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
#: (white pawns, black pawns, white king, black king, castling rights) -> the term.
_cache: dict[tuple[int, int, int, int, int], int] = {}
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
    piece that makes an open king pay)."""
    if not board.queens:
        return 0
    pawns = board.pawns
    white = board.occupied_co[1]
    kings = board.kings
    white_pawns = pawns & white
    black_pawns = pawns & ~white
    white_king = (kings & white).bit_length() - 1
    black_king = (kings & ~white).bit_length() - 1
    castling = board.castling_rights
    key = (white_pawns, black_pawns, white_king, black_king, castling)
    cached = _cache.get(key)
    if cached is None:
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
