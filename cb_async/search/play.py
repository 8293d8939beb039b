"""Making a move on the search's board, and what it does to the evaluation.

python-chess's `Board.push` is general: it handles drops, null moves, castling in both
notations, promoted-piece bookkeeping and cleans the castling rights on every call; it costs
about 2 us, most of a search node's own time. Most moves in a search are plain ones (no
promotion, no en passant, no castling), and for those `play_known` updates the bitboards
directly, about three times faster. It pushes the move and a lighter copy of the state
(`_Undo`, or `_UndoRights` for a move that costs a castling right) where `push` pushes a
`_BoardState`, so `Board.pop` takes either back. Anything unusual goes to `push`. `push` also
cleans the castling rights of rights the position cannot use; the search cleans them once, on
its own copy of the root, so that the two ways of making a move agree.

The structure terms (`structure`) change only when a pawn moves or is taken, or a bishop is
taken; only those moves pay for them.
"""

from __future__ import annotations

import chess

from cb_async.search.evaluation import EG, MG, PHASE_WEIGHT, move_delta
from cb_async.search.quiets import HOME_RANK
from cb_async.search.structure import PAIR_EG, PAIR_MG, pawn_structure, structure

_SQUARES = chess.BB_SQUARES


class _Undo(tuple[int, int, int, int, int, int, int, int, int, "int | None", int, int, bool]):
    """What `Board.pop` restores after a plain move: python-chess's `_BoardState` without the
    fields such a move cannot change (castling rights, promoted pieces).

    A tuple built in one step costs about half what `_BoardState`'s fifteen attribute copies
    do, on a path every search node takes; `pop` asks only for `restore` (and a repetition
    test for `occupied`)."""

    __slots__ = ()

    @property
    def occupied(self) -> int:
        return self[8]

    def restore(self, board: chess.Board) -> None:
        occupied_co = board.occupied_co
        (board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, occupied_co[1],
         occupied_co[0], board.occupied, board.ep_square, board.halfmove_clock, board.fullmove_number,
         board.turn) = self


class _UndoRights(tuple[_Undo, int]):
    """An `_Undo` and the castling rights, for a plain move that costs a right (a king or a
    rook leaving its square, a rook taken on its own)."""

    __slots__ = ()

    @property
    def occupied(self) -> int:
        return self[0].occupied

    def restore(self, board: chess.Board) -> None:
        self[0].restore(board)
        board.castling_rights = self[1]


def play(board: chess.Board, move: chess.Move) -> tuple[int, int, int]:
    """Push `move` (pseudo-legal) and return its (midgame, endgame, phase) evaluation delta."""
    to_square = move.to_square
    captured = 0
    if board.occupied_co[not board.turn] & _SQUARES[to_square]:
        captured = board.piece_type_at(to_square)  # type: ignore[assignment]
    return play_known(board, move, board.piece_type_at(move.from_square), captured)  # type: ignore[arg-type]


def play_known(board: chess.Board, move: chess.Move, piece: int, captured: int) -> tuple[int, int, int]:
    """`play` when the moving piece's type and the captured type (0 for none) are known."""
    from_square = move.from_square
    to_square = move.to_square
    to_bb = _SQUARES[to_square]
    both = _SQUARES[from_square] | to_bb
    us = board.turn
    occupied_co = board.occupied_co
    rights = board.castling_rights
    # A king move is plain once its side has no castling right left (none to lose, no castling).
    rights_lost = (piece == 6 and rights & HOME_RANK[us]) or rights & both
    if rights_lost or move.promotion or board.promoted or (piece == 1 and to_square == board.ep_square):
        # Castling (the king two files over, or onto its own rook in Chess960 notation),
        # promotions and en passant go to `push`; a move that only costs a castling right
        # is made here like any other, its undo keeping the rights.
        if (
            move.promotion or board.promoted or piece == 1
            or (piece == 6 and (occupied_co[us] & to_bb or abs(to_square - from_square) == 2))
        ):
            if piece != 1 and captured != 1 and captured != 3:
                delta = move_delta(board, move)
                board.push(move)
                return delta
            d_mg, d_eg, d_phase = move_delta(board, move)
            before_mg, before_eg = structure(board)
            board.push(move)
            after_mg, after_eg = structure(board)
            return d_mg + after_mg - before_mg, d_eg + after_eg - before_eg, d_phase
    pawn_change = piece == 1 or captured == 1
    if pawn_change:
        pawns = board.pawns
        white = occupied_co[1]
        before_mg, before_eg = pawn_structure(pawns & white, pawns & ~white)
    undo = _Undo((
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings, occupied_co[1],
        occupied_co[0], board.occupied, board.ep_square, board.halfmove_clock, board.fullmove_number, us,
    ))
    if rights_lost:
        board._stack.append(_UndoRights((undo, rights)))  # type: ignore[arg-type]
        rights &= ~both
        if piece == 6:
            rights &= ~HOME_RANK[us]
        board.castling_rights = rights
    else:
        board._stack.append(undo)  # type: ignore[arg-type]
    board.move_stack.append(move)
    board.ep_square = None
    if not us:
        board.fullmove_number += 1
    mg_us = MG[us][piece]
    eg_us = EG[us][piece]
    d_mg = mg_us[to_square] - mg_us[from_square]
    d_eg = eg_us[to_square] - eg_us[from_square]
    d_phase = 0
    if captured:
        board.halfmove_clock = 0
        if captured == 1:
            board.pawns ^= to_bb
        elif captured == 2:
            board.knights ^= to_bb
        elif captured == 3:
            # Their bishop pair is lost with the second-last bishop.
            if (board.bishops & board.occupied_co[not us]).bit_count() == 2:
                if us:
                    d_mg += PAIR_MG
                    d_eg += PAIR_EG
                else:
                    d_mg -= PAIR_MG
                    d_eg -= PAIR_EG
            board.bishops ^= to_bb
        elif captured == 4:
            board.rooks ^= to_bb
        else:
            board.queens ^= to_bb
        board.occupied_co[not us] ^= to_bb
        board.occupied ^= _SQUARES[from_square]
        d_mg -= MG[not us][captured][to_square]
        d_eg -= EG[not us][captured][to_square]
        d_phase = -PHASE_WEIGHT[captured]
    else:
        board.occupied ^= both
        if piece == 1:
            board.halfmove_clock = 0
            if to_square - from_square == 16:
                board.ep_square = from_square + 8
            elif from_square - to_square == 16:
                board.ep_square = from_square - 8
        else:
            board.halfmove_clock += 1
    if piece == 1:
        board.pawns ^= both
    elif piece == 2:
        board.knights ^= both
    elif piece == 3:
        board.bishops ^= both
    elif piece == 4:
        board.rooks ^= both
    elif piece == 5:
        board.queens ^= both
    else:
        board.kings ^= both
    board.occupied_co[us] ^= both
    board.turn = not us
    if pawn_change:
        pawns = board.pawns
        white = board.occupied_co[1]
        after_mg, after_eg = pawn_structure(pawns & white, pawns & ~white)
        d_mg += after_mg - before_mg
        d_eg += after_eg - before_eg
    return d_mg, d_eg, d_phase
