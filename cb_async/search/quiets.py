"""The quiet moves of a search node, generated and scored for ordering in one pass.

The search orders the moves that capture nothing (promotions, the two killers, then history)
after the table's move and the captures. python-chess's `generate_pseudo_legal_moves` yields
them one at a time from a generator, and the search then walked them again to score each one;
this builds the scored list directly from the same bitboards, in python-chess's order (so that
moves of equal score keep their order and the search stays the same, node for node).
"""

from __future__ import annotations

import chess

from cb_async.search.attacks import piece_attacks
from cb_async.search.moves import PLAIN_MOVES

_Move = chess.Move
_PLAIN = PLAIN_MOVES
_BACKRANKS = chess.BB_RANK_1 | chess.BB_RANK_8
_PROMOTIONS = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)
_DOUBLE_TARGETS = (chess.BB_RANK_6 | chess.BB_RANK_5, chess.BB_RANK_3 | chess.BB_RANK_4)
#: [colour]: the rank of that side's castling rooks (python-chess's castling rights are rook squares).
HOME_RANK = (chess.BB_RANK_8, chess.BB_RANK_1)
_EP_RANK = (chess.BB_RANKS[3], chess.BB_RANKS[4])
_PAWN_ATTACKS = chess.BB_PAWN_ATTACKS


def scored_quiets(
    board: chess.Board,
    history: list[int],
    history_base: int,
    skip: chess.Move | None,
    killers: list[int],
    promotion_base: int,
    killer_scores: tuple[int, int],
    attacks: list[tuple[int, int, int]] | None = None,
) -> list[tuple[int, chess.Move]]:
    """(order score, move) of the side to move's pseudo-legal moves to empty squares (with
    castling and en passant), without `skip`, unsorted: the promotions first, then the other
    moves in python-chess's generation order.

    A promotion scores `promotion_base` + its piece type; a move matching the first or second
    killer (from << 6 | to) its `killer_scores` entry; any other move its history score,
    `history[history_base | from << 6 | to]`.

    `attacks` is `piece_attacks(board, <side to move>)` when the caller has it already (the
    search builds it once for a node's captures and quiet moves).
    """
    us = board.turn
    occupied_co = board.occupied_co
    ours = occupied_co[us]
    occupied = board.occupied
    empty = ~occupied
    pawns_bb = board.pawns
    # The plain moves as from << 6 | to codes first, scored in one loop at the end; promotions
    # are scored as they are found (their scores are above all others, so where they stand in
    # the list does not change the sorted order).
    codes: list[int] = []
    add = codes.append
    scored: list[tuple[int, chess.Move]] = []
    append = scored.append

    if attacks is None:
        attacks = piece_attacks(board, ours)
    for source, targets, _ in attacks:
        targets &= empty
        code_base = source << 6
        while targets:
            target = targets.bit_length() - 1
            targets ^= 1 << target
            add(code_base | target)

    if board.castling_rights & HOME_RANK[us]:
        for move in board.generate_castling_moves(chess.BB_ALL, chess.BB_ALL & ~occupied_co[not us]):
            add(move.from_square << 6 | move.to_square)

    pawns = pawns_bb & ours
    if pawns:
        if us:
            singles = pawns << 8 & empty
            doubles = singles << 8 & empty & _DOUBLE_TARGETS[us]
            step = 8
        else:
            singles = pawns >> 8 & empty
            doubles = singles >> 8 & empty & _DOUBLE_TARGETS[us]
            step = -8
        skip_code = skip.from_square << 6 | skip.to_square if skip is not None else -1
        skip_promotion = skip.promotion if skip is not None else None
        while singles:
            target = singles.bit_length() - 1
            singles ^= 1 << target
            source = target - step
            if (1 << target) & _BACKRANKS:
                for piece in _PROMOTIONS:
                    if source << 6 | target != skip_code or skip_promotion != piece:
                        append((promotion_base + piece, _Move(source, target, piece)))
            else:
                add(source << 6 | target)
        while doubles:
            target = doubles.bit_length() - 1
            doubles ^= 1 << target
            add((target - 2 * step) << 6 | target)
        ep_square = board.ep_square
        if ep_square and not (1 << ep_square) & occupied:
            capturers = pawns & _PAWN_ATTACKS[not us][ep_square] & _EP_RANK[us]
            while capturers:
                source = capturers.bit_length() - 1
                capturers ^= 1 << source
                add(source << 6 | ep_square)

    first_killer, second_killer = killers
    killer_1, killer_2 = killer_scores
    skip_plain = skip.from_square << 6 | skip.to_square if skip is not None and not skip.promotion else -1
    for code in codes:
        if code == skip_plain:
            continue
        if code == first_killer:
            append((killer_1, _PLAIN[code]))
        elif code == second_killer:
            append((killer_2, _PLAIN[code]))
        else:
            append((history[history_base | code], _PLAIN[code]))
    return scored


def scored_captures(
    board: chess.Board,
    skip: chess.Move | None,
    values: tuple[int, ...],
    attacks: list[tuple[int, int, int]] | None = None,
) -> list[tuple[int, chess.Move]]:
    """(order score, move) of the side to move's captures of a piece (en passant is a quiet
    move here), unsorted, in python-chess's generation order, without `skip`.

    The score is MVV-LVA: `values` of the victim's type times 8, less the attacker's type;
    every promotion piece of a capturing promotion scores as the capture. `attacks` as for
    `scored_quiets`.
    """
    us = board.turn
    occupied_co = board.occupied_co
    ours = occupied_co[us]
    theirs = occupied_co[not us]
    pawns_bb = board.pawns
    knights = board.knights
    bishops = board.bishops
    rooks = board.rooks
    queens = board.queens
    if skip is not None:
        skip_code = skip.from_square << 6 | skip.to_square
        skip_promotion = skip.promotion
    else:
        skip_code = -1
        skip_promotion = None
    scored: list[tuple[int, chess.Move]] = []
    append = scored.append

    if attacks is None:
        attacks = piece_attacks(board, ours)
    for source, targets, attacker in attacks:
        targets &= theirs
        code_base = source << 6
        while targets:
            target = targets.bit_length() - 1
            targets ^= 1 << target
            if code_base | target == skip_code and skip_promotion is None:
                continue
            bit = 1 << target
            victim = (
                1 if bit & pawns_bb else 2 if bit & knights else 3 if bit & bishops
                else 4 if bit & rooks else 5 if bit & queens else 6
            )
            append((values[victim] * 8 - attacker, _PLAIN[code_base | target]))

    pawns = pawns_bb & ours
    while pawns:
        source = pawns.bit_length() - 1
        pawns ^= 1 << source
        targets = _PAWN_ATTACKS[us][source] & theirs
        while targets:
            target = targets.bit_length() - 1
            targets ^= 1 << target
            bit = 1 << target
            victim = (
                1 if bit & pawns_bb else 2 if bit & knights else 3 if bit & bishops
                else 4 if bit & rooks else 5 if bit & queens else 6
            )
            score = values[victim] * 8 - 1
            code = source << 6 | target
            if (1 << target) & _BACKRANKS:
                for piece in _PROMOTIONS:
                    if code == skip_code and skip_promotion == piece:
                        continue
                    append((score, _Move(source, target, piece)))
            elif code != skip_code or skip_promotion is not None:
                append((score, _PLAIN[code]))
    return scored
