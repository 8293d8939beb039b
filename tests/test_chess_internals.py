"""The python-chess internals the search reads for speed are still what it expects.

The search makes and takes back moves on python-chess's `Board` directly (cb_async/search/play.py
and searcher.py): it pushes its own undo records onto the private `Board._stack`, which
`Board.pop` must take back with `.restore(board)` and `is_repetition` reads for `.occupied`,
and its records copy exactly the fields of python-chess's `_BoardState`. pyproject bounds
`chess` to the releases tested (1.11); a release that changes any of this fails here, by name,
instead of as a wrong search.
"""

from __future__ import annotations

import chess
import pytest

from cb_async.search.play import play

#: What `_BoardState` copies from a board: the undo records hold the same (the castling rights
#: and promoted pieces only where a move can change them).
BOARD_STATE_FIELDS = {"pawns", "knights", "bishops", "rooks", "queens", "kings", "occupied_w", "occupied_b",
                      "occupied", "promoted", "turn", "castling_rights", "ep_square", "halfmove_clock",
                      "fullmove_number"}
CHANGED = ("python-chess {version} changed an internal the search relies on ({what}): check "
           "cb_async/search/play.py and the searcher's inlined pop before widening pyproject's bound on chess")


def state(board: chess.Board) -> dict[str, object]:
    return {name: getattr(chess._BoardState(board), name) for name in BOARD_STATE_FIELDS}


def test_board_state_copies_the_fields_the_undo_records_copy() -> None:
    fields = set(vars(chess._BoardState(chess.Board())))
    assert fields == BOARD_STATE_FIELDS, CHANGED.format(version=chess.__version__, what=f"_BoardState's fields {sorted(fields)}")


def test_the_stack_is_a_list_that_pop_restores_from() -> None:
    board = chess.Board()
    assert isinstance(board._stack, list) and board._stack == [], CHANGED.format(
        version=chess.__version__, what="Board._stack is no longer a list")
    board.push_uci("e2e4")
    assert len(board._stack) == 1 and hasattr(board._stack[0], "restore") and hasattr(board._stack[0], "occupied"), \
        CHANGED.format(version=chess.__version__, what="the stack's entries have no restore/occupied")


@pytest.mark.parametrize("fen,uci,own_record", [
    (chess.STARTING_FEN, "g1f3", True),  # a plain move: the light undo record
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "a1b1", True),  # one that costs a castling right
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "e1g1", False),  # castling: Board.push's own record
])
def test_board_pop_takes_back_the_searchs_own_moves_exactly(fen: str, uci: str, own_record: bool) -> None:
    board = chess.Board(fen)
    before = state(board)
    play(board, chess.Move.from_uci(uci))
    assert board.move_stack[-1] == chess.Move.from_uci(uci)
    assert isinstance(board._stack[-1], chess._BoardState) is not own_record
    board.pop()
    assert state(board) == before, CHANGED.format(version=chess.__version__, what="Board.pop and the stack's restore")
    assert board._stack == [] and board.move_stack == []


def test_repetition_reads_the_search_records() -> None:
    """`is_repetition` walks the stack for `.occupied`; the search's records answer it."""
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8") * 2:
        play(board, chess.Move.from_uci(uci))
    assert board.is_repetition(3), CHANGED.format(version=chess.__version__, what="Board.is_repetition over the stack")
