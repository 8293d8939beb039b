"""Who answers a search: the opening book, the tablebases, or the search (at a level or not).

This runs in the worker process, beside the `Searcher`, for two reasons. The kind of search is
plain from its limits (analysis is `infinite`; a ponder search has `Limits.pondering()`, which
is not), so the worker can apply the rules without asking the session: analysis never uses the
book and ignores the strength level; game and ponder searches use both. And the book reader and
the open tablebase files are the worker's own, opened once and kept, like the hash table.

A book or tablebase answer comes back at once as a normal `SearchResult` with its `source`;
for a ponder search the session then holds it until the ponder hit, as it holds any ponder
search that ended by itself, and answers at once on the hit.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Hashable, Sequence

import chess

from cb_async.search import book, tablebase
from cb_async.search.eval_file import DEFAULT_EVAL_FILE, resolve
from cb_async.search.network import Network, NetworkError
from cb_async.search.levels import level_for
from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo, SearchResult, Source
from cb_async.search.control import StopToken
from cb_async.search.scores import TB_WIN, to_score
from cb_async.search.searcher import Searcher
from cb_async.search.settings import SearchSettings

#: A mate counts as this many centipawns when a level weighs its candidates.
_MATE_CP = 100_000


class MoveSources:
    """The worker's book and tablebase state; `search` answers one request."""

    def __init__(self, searcher: Searcher, seed: int = 0x5EED) -> None:
        self.searcher = searcher
        self.rng = random.Random(seed)
        self._tables_path: str | None = None
        self._tables: tablebase.Tables | None = None
        self._network_file = DEFAULT_EVAL_FILE
        self._network: Network | None = resolve(DEFAULT_EVAL_FILE)

    def tables(self, path: str) -> tablebase.Tables | None:
        """The open tables of `path`, opened on first use and kept until the path changes."""
        if path != self._tables_path:
            if self._tables is not None:
                self._tables.close()
            self._tables_path = path
            self._tables = tablebase.open_tables(path) if path else None
        return self._tables

    def network(self, eval_file: str) -> Network | None:
        """The net of `eval_file` (see `eval_file.resolve`), read on first use and kept until the
        option changes. The session checked the file when the option was set; one that went bad
        since is reported as the search's failure, not replaced by another evaluation."""
        if eval_file != self._network_file:
            self._network = resolve(eval_file)
            self._network_file = eval_file
        return self._network

    def prepare(self, eval_file: str) -> None:
        """Build the net of `eval_file` and give it to the searcher now, so that the next search
        does not pay for it. A file that went bad is left for that search to report."""
        try:
            self._evaluate_with(self.network(eval_file))
        except NetworkError:
            pass

    def _evaluate_with(self, net: Network | None) -> None:
        """Give the searcher `net`, forgetting what its table learnt with another evaluation."""
        if self.searcher.network is not net:
            self.searcher.network = net
            self.searcher.new_game()

    def search(
        self,
        board: chess.Board,
        history: Sequence[Hashable],
        limits: Limits,
        settings: SearchSettings,
        stop: StopToken,
        on_info: Callable[[SearchInfo], None] | None = None,
    ) -> SearchResult:
        start = time.monotonic()
        analysis = limits.infinite
        if not analysis and settings.own_book and settings.book_file:
            move = book.choose(book.book_moves(settings.book_file, board), settings.book_best_move,
                               self.rng, limits.search_moves)
            if move is not None:
                return _direct(move, board, Score(cp=0), "book", start)
        tables = self.tables(settings.syzygy_path)
        self.searcher.tablebase = tables
        # A strength level plays with the hand-written evaluation alone: its node and depth caps
        # and its noise were calibrated with it (docs/levels.md), and a stronger evaluation would
        # move every label.
        level_search = settings.limit_strength and not analysis
        self._evaluate_with(None if level_search else self.network(settings.eval_file))
        if tables is not None and tables.usable(board):
            ranked = tablebase.rank_root_moves(tables, board)
            if ranked:
                if limits.search_moves:
                    allowed = set(limits.search_moves)
                    ranked = [entry for entry in ranked if entry.move in allowed] or ranked
                best = ranked[0]
                keep = tuple(entry.move for entry in ranked if entry.outcome == best.outcome)
                if best.outcome != tablebase.DRAW and not analysis:
                    value = TB_WIN - best.dtz if best.outcome == tablebase.WIN else -TB_WIN - best.dtz
                    return _direct(best.move, board, to_score(value), "tablebase", start, tbhits=len(ranked))
                # A draw (or analysis): the search chooses among the moves that keep the result.
                result = self._search(board, history, limits.replace(search_moves=keep), settings, stop, on_info)
                return dataclasses.replace(result, source="tablebase", tbhits=result.tbhits + len(ranked))
        return self._search(board, history, limits, settings, stop, on_info)

    def help(
        self,
        board: chess.Board,
        history: Sequence[Hashable],
        limits: Limits,
        settings: SearchSettings,
        stop: StopToken,
        helper: int,
    ) -> None:
        """Search beside the main search as its Lazy SMP helper `helper` (1, 2, ...): what it
        finds goes into the shared hash table, where the main search reads it; its own result
        is not wanted. A level's search (strength limited, not analysis) gets no help, since
        the help would make it stronger than its label; the book and the tablebases answer at
        once in the main search, which then stops the helpers."""
        if settings.limit_strength and not limits.infinite:
            return
        self.searcher.tablebase = self.tables(settings.syzygy_path)
        self._evaluate_with(self.network(settings.eval_file))
        self.searcher.search(board, history, limits.replace(multipv=1), stop, None, helper)

    def _search(
        self,
        board: chess.Board,
        history: Sequence[Hashable],
        limits: Limits,
        settings: SearchSettings,
        stop: StopToken,
        on_info: Callable[[SearchInfo], None] | None,
    ) -> SearchResult:
        if not settings.limit_strength or limits.infinite:
            return self.searcher.search(board, history, limits, stop, on_info)
        level = level_for(settings.elo)
        wanted = limits.multipv
        capped = limits.replace(
            depth=min(limits.depth or level.depth, level.depth),
            nodes=min(limits.nodes or level.nodes, level.nodes),
            multipv=max(wanted, level.candidates),
        )

        def shown(info: SearchInfo) -> None:
            if on_info is not None and info.multipv <= wanted:
                on_info(info)

        result = self.searcher.search(board, history, capped, stop, shown)
        if len(result.lines) < 2:
            return result
        scored = [(_centipawns(info.score), index) for index, info in enumerate(result.lines)]
        scored.sort(key=lambda item: -item[0])
        from cb_async.search.searcher import position_key

        chosen = result.lines[level.choose(scored, hash(position_key(board)) & 0xFFFFFFFF)]
        others = [info for info in result.lines if info is not chosen][: wanted - 1]
        lines = tuple(dataclasses.replace(info, multipv=i + 1) for i, info in enumerate((chosen, *others)))
        ponder = chosen.pv[1] if len(chosen.pv) > 1 else None
        return dataclasses.replace(result, best_move=chosen.pv[0], ponder_move=ponder, score=chosen.score,
                                   pv=chosen.pv, lines=lines)


def _centipawns(score: Score) -> int:
    if score.mate is not None:
        return _MATE_CP - score.mate if score.mate > 0 else -_MATE_CP - score.mate
    return score.cp or 0


def _direct(move: chess.Move, board: chess.Board, score: Score, source: Source, start: float,
            tbhits: int = 0) -> SearchResult:
    """The answer without a search: one move, a score, depth 0."""
    elapsed = int((time.monotonic() - start) * 1000)
    info = SearchInfo(depth=0, seldepth=0, multipv=1, score=score, nodes=0, nps=0, time=elapsed,
                      pv=(move,), tbhits=tbhits)
    return SearchResult(move, None, score, 0, 0, 0, elapsed, pv=(move,), lines=(info,), tbhits=tbhits,
                        source=source)
