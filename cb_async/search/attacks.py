"""Where pieces attack, and whether a square is attacked: python-chess's attack tables, read
directly.

`Board.attacks_mask` answers for one square at a time through a method call and a few type
tests; the move lists of the search (`captures`, `quiets`) want every non-pawn piece of one
side at once, with its type, to mask with the squares they are after (empty ones, or enemy
pieces).

The search also asks, at nearly every node, whether one square is attacked (is the king in
check, did the move just made leave it there, is a capture's victim defended). `attacked_by`
answers that by asking the cheap attackers first (pawns, knights, the king) and stopping at the
first one found, where `Board.is_attacked_by` builds the whole attacker mask. And it asks which
of its pieces are pinned to the king (`pinned`), so that only their moves, the king's and en
passant need that test after the push.
"""

from __future__ import annotations

import chess

_KNIGHT = chess.BB_KNIGHT_ATTACKS
_KING = chess.BB_KING_ATTACKS
_DIAG_MASKS = chess.BB_DIAG_MASKS
_DIAG = chess.BB_DIAG_ATTACKS
_FILE_MASKS = chess.BB_FILE_MASKS
_FILE = chess.BB_FILE_ATTACKS
_RANK_MASKS = chess.BB_RANK_MASKS
_RANK = chess.BB_RANK_ATTACKS


def piece_attacks(board: chess.Board, ours: int) -> list[tuple[int, int, int]]:
    """(square, attacked squares, piece type) of each non-pawn piece in `ours`, from the
    highest square down (python-chess's generation order).

    The attacked squares include the side's own pieces: mask them as the caller needs.
    """
    occupied = board.occupied
    knights = board.knights
    kings = board.kings
    diagonal = board.bishops | board.queens
    straight = board.rooks | board.queens
    found: list[tuple[int, int, int]] = []
    pieces = ours & ~board.pawns
    while pieces:
        source = pieces.bit_length() - 1
        bit = 1 << source
        pieces ^= bit
        if bit & knights:
            found.append((source, _KNIGHT[source], 2))
        elif bit & kings:
            found.append((source, _KING[source], 6))
        elif not bit & straight:
            found.append((source, _DIAG[source][_DIAG_MASKS[source] & occupied], 3))
        elif not bit & diagonal:
            found.append((source, _FILE[source][_FILE_MASKS[source] & occupied] | _RANK[source][_RANK_MASKS[source] & occupied], 4))
        else:
            found.append((
                source,
                _DIAG[source][_DIAG_MASKS[source] & occupied]
                | _FILE[source][_FILE_MASKS[source] & occupied]
                | _RANK[source][_RANK_MASKS[source] & occupied],
                5,
            ))
    return found


_PAWN = chess.BB_PAWN_ATTACKS


def attacked_by(board: chess.Board, colour: bool, square: int) -> bool:
    """`Board.is_attacked_by(colour, square)`, asking the cheapest attackers first.

    python-chess builds the whole attacker mask through two method calls; the search only
    wants a yes or no, and most of the time a pawn or a knight answers it.
    """
    attackers = board.occupied_co[colour]
    if _PAWN[not colour][square] & board.pawns & attackers or _KNIGHT[square] & board.knights & attackers:
        return True
    if _KING[square] & board.kings & attackers:
        return True
    occupied = board.occupied
    queens = board.queens
    diagonal = (board.bishops | queens) & attackers
    if diagonal and _DIAG[square][_DIAG_MASKS[square] & occupied] & diagonal:
        return True
    straight = (board.rooks | queens) & attackers
    return bool(
        straight
        and (_FILE[square][_FILE_MASKS[square] & occupied] | _RANK[square][_RANK_MASKS[square] & occupied]) & straight
    )


#: [a][b]: the squares strictly between two squares on a line (0 when not on one).
_BETWEEN = tuple(tuple(chess.between(a, b) for b in chess.SQUARES) for a in chess.SQUARES)


def pinned(board: chess.Board, king: int) -> int:
    """The side to move's pieces that stand alone between `king` (its king's square) and an
    enemy slider on that line: python-chess's `Board._slider_blockers`.

    The search asks this at every node to know which moves need a legality test; python-chess
    walks the sliders with a generator and two function calls each, this with table reads."""
    queens = board.queens
    theirs = board.occupied_co[not board.turn]
    snipers = (
        ((_RANK[king][0] | _FILE[king][0]) & (board.rooks | queens))
        | (_DIAG[king][0] & (board.bishops | queens))
    ) & theirs
    blockers = 0
    if snipers:
        occupied = board.occupied
        between = _BETWEEN[king]
        while snipers:
            sniper = snipers.bit_length() - 1
            snipers ^= 1 << sniper
            alone = between[sniper] & occupied
            if alone and not alone & (alone - 1):
                blockers |= alone
    return blockers & board.occupied_co[board.turn]


def was_into_check(board: chess.Board) -> bool:
    """`Board.was_into_check()`: whether the side that just moved left its king attacked."""
    mover = not board.turn
    king = board.kings & board.occupied_co[mover]
    return bool(king) and attacked_by(board, board.turn, king.bit_length() - 1)


def is_check(board: chess.Board) -> bool:
    """`Board.is_check()`: whether the side to move's king is attacked."""
    turn = board.turn
    king = board.kings & board.occupied_co[turn]
    return bool(king) and attacked_by(board, not turn, king.bit_length() - 1)


def exchange(
    board: chess.Board, source: int, target: int, values: tuple[int, ...], attacker: int = 0, victim: int = 0,
) -> int:
    """What the capture `source` x `target` wins, after the best series of recaptures on
    `target` (static exchange evaluation), in `values`' units. `attacker` and `victim` are the
    two pieces' types when the caller knows them (0: look them up).

    Each side recaptures with its least valuable piece or stops when that would lose; a
    slider behind a piece that has captured joins in (x-rays). Pins are not looked at, and a
    king recaptures only when the other side has nothing left to take it with. The
    quiescence search asks this only of a capture by a piece worth more than its victim on
    a defended square, where "defended" alone would throw away the captures that still win
    (a pawn guarded only by a queen, with a second attacker behind).
    """
    by_value = (
        (board.pawns, 1), (board.knights, 2), (board.bishops, 3),
        (board.rooks, 4), (board.queens, 5), (board.kings, 6),
    )
    white, black = board.occupied_co[chess.WHITE], board.occupied_co[chess.BLACK]
    diagonal = board.bishops | board.queens
    straight = board.rooks | board.queens
    occupied = board.occupied ^ (1 << source)
    diagonal_rays = _DIAG[target]
    diagonal_mask = _DIAG_MASKS[target]
    file_rays = _FILE[target]
    file_mask = _FILE_MASKS[target]
    rank_rays = _RANK[target]
    rank_mask = _RANK_MASKS[target]
    attackers = (
        (_PAWN[chess.BLACK][target] & board.pawns & white)
        | (_PAWN[chess.WHITE][target] & board.pawns & black)
        | (_KNIGHT[target] & board.knights)
        | (_KING[target] & board.kings)
        | (diagonal_rays[diagonal_mask & occupied] & diagonal)
        | ((file_rays[file_mask & occupied] | rank_rays[rank_mask & occupied]) & straight)
    ) & occupied
    colour_of = (black, white)
    side = not bool(white & (1 << source))
    gains = [values[victim or board.piece_type_at(target) or 0]]
    on_target = values[attacker or board.piece_type_at(source) or 0]
    while True:
        mine = attackers & colour_of[side]
        if not mine:
            break
        for pieces, piece_type in by_value:
            chosen = mine & pieces
            if chosen:
                break
        if piece_type == 6 and attackers & colour_of[not side]:
            break
        gains.append(on_target - gains[-1])
        on_target = values[piece_type]
        occupied ^= chosen & -chosen
        if piece_type == 1 or piece_type == 3 or piece_type == 5:
            attackers |= diagonal_rays[diagonal_mask & occupied] & diagonal
        if piece_type == 4 or piece_type == 5:
            attackers |= (file_rays[file_mask & occupied] | rank_rays[rank_mask & occupied]) & straight
        attackers &= occupied
        side = not side
    # Back from the last capture: the side to make capture i may instead stop, so capture
    # i - 1 is worth the lesser of its own gain and what stopping there leaves.
    for i in range(len(gains) - 1, 0, -1):
        if -gains[i] < gains[i - 1]:
            gains[i - 1] = -gains[i]
    return gains[0]
