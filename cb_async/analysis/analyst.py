"""The analyst: one engine that evaluates positions, run inside a worker process or a Ray actor.

It runs the search core directly (no session, no stdio daemon): a worker holds one `Searcher`
for its whole life and calls it synchronously. Every position starts from an empty hash table
(`new_game()`), which is what makes a result a function of the position and the budget alone:
the same under any number of workers, after any interruption, and whichever worker retries a
position that a dead one left behind. Carrying the table from one position of a game to the
next would help the search a little (about half a ply at 20,000 nodes), but then a game resumed
half-way or retried elsewhere could not be reproduced without searching its first half again,
and the job promises never to do that (docs/analysis.md, "Why a fresh table per position").
"""

from __future__ import annotations

import chess

from cb_async.analysis.model import Evaluation, Line, PositionTask
from cb_async.limits import Limits
from cb_async.search import Searcher
from cb_async.timeman import stop_token
from cb_async.version import __version__

#: A node or depth budget never needs more: 16 MB holds about 100,000 entries.
HASH_MB = 16


class Analyst:
    """cb-async's own search and its hash table; `evaluate` answers one position."""

    def __init__(self, hash_mb: int = HASH_MB) -> None:
        self.searcher = Searcher(hash_mb)
        self.name = f"cb-async {__version__}"

    def close(self) -> None:
        """Nothing to end: the search lives in this process."""

    def evaluate(self, task: PositionTask, limits: Limits) -> Evaluation:
        board = chess.Board(task.fen, chess960=task.chess960)
        self.searcher.new_game()
        result = self.searcher.search(board, task.history, limits, stop_token(limits, board.turn))
        pv = tuple(move.uci() for move in result.pv)
        # The first line's moves are the result's: share the tuple (the driver keeps every result).
        lines = tuple(Line(info.score, pv if info.pv == result.pv else tuple(move.uci() for move in info.pv))
                      for info in result.lines)
        return Evaluation(
            key=task.key,
            best=result.best_move.uci() if result.best_move is not None else None,
            score=result.score,
            pv=pv,
            depth=result.depth,
            seldepth=result.seldepth,
            nodes=result.nodes,
            time_ms=result.time,
            lines=lines or (Line(result.score, pv),),
        )
