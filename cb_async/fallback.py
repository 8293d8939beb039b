"""A legal answer without the worker: what the session still owes a GUI when the search could not answer.

The worker died, raised, or stalled past its deadline (stopped by a debugger, starved, SIGSTOP):
the host process is alive and owns the clock, so it answers anyway, with the best it has, in
this order:

1. the best move of the deepest iteration the search reported (its `info` lines), which is what
   a stop at that moment would have answered;
2. a move from the opening book (`BookFile`), the heaviest;
3. a move from the Syzygy tables (`SyzygyPath`), the best ranked;
4. the first legal move.

Each is checked against the board and the search's `searchmoves`, so an illegal move never
leaves the engine. The session says which one it used (`describe`), in an `info string`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chess

from cb_async.results import Score, SearchInfo, SearchResult, Source


@dataclass(frozen=True, slots=True)
class Fallback:
    result: SearchResult
    #: Where the move came from, for the user: "the depth 7 iteration", "the book", ...
    source: str


def fallback_answer(board: chess.Board, seen: SearchInfo | None = None, options: dict[str, Any] | None = None,
                    allowed: tuple[chess.Move, ...] = ()) -> Fallback:
    """The best legal answer without a search: `seen` (the last info of the main line), the
    book, the tables, the first legal move."""
    legal = [move for move in board.legal_moves if not allowed or move in allowed] or list(board.legal_moves)
    if not legal:
        score = Score(mate=0) if board.is_check() else Score(cp=0)
        return Fallback(SearchResult(None, None, score, 0, 0, 0, 0), "no legal move")
    if seen is not None and seen.pv and seen.pv[0] in legal:
        ponder = seen.pv[1] if len(seen.pv) > 1 and _legal_after(board, seen.pv[0], seen.pv[1]) else None
        result = SearchResult(seen.pv[0], ponder, seen.score, seen.depth, seen.seldepth, seen.nodes, seen.time,
                              pv=seen.pv[:2] if ponder is not None else seen.pv[:1])
        return Fallback(result, f"the best move of its depth {seen.depth} iteration")
    options = options or {}
    move = _book_move(board, options.get("BookFile") or "", legal)
    if move is not None:
        return Fallback(_bare(move, "book"), "a book move")
    move = _table_move(board, options.get("SyzygyPath") or "", legal)
    if move is not None:
        return Fallback(_bare(move, "tablebase"), "a tablebase move")
    return Fallback(_bare(legal[0]), "the first legal move")


def _bare(move: chess.Move, source: Source = "search") -> SearchResult:
    return SearchResult(move, None, Score(cp=0), 0, 0, 0, 0, pv=(move,), source=source)


def _legal_after(board: chess.Board, move: chess.Move, reply: chess.Move) -> bool:
    after = board.copy(stack=False)
    after.push(move)
    return after.is_legal(reply)


def _book_move(board: chess.Board, path: str, legal: list[chess.Move]) -> chess.Move | None:
    if not path:
        return None
    from cb_async.search import book

    return next((entry.move for entry in book.book_moves(path, board) if entry.move in legal), None)


def _table_move(board: chess.Board, path: str, legal: list[chess.Move]) -> chess.Move | None:
    if not path:
        return None
    from cb_async.search import tablebase

    tables = tablebase.open_tables(path)
    if tables is None:
        return None
    try:
        if not tables.usable(board):
            return None
        ranked = tablebase.rank_root_moves(tables, board)
    except (OSError, KeyError, ValueError):
        return None
    finally:
        tables.close()
    return next((entry.move for entry in ranked or () if entry.move in legal), None)
