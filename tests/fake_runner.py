"""The one scripted search runner of the tests: it stands in for the worker process.

It follows `cb_async.runner.SearchRunner`. A test decides when the running search reports an
iteration (`post`) or ends by itself (`finish`); a stop ends it at once, as the real stop token
does, with the runner's `stop_result(board)` (by default the first legal move at depth 1).
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import chess

from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.runner import WorkerAbandoned
from cb_async.search.settings import SearchSettings


def first_move_result(board: chess.Board, depth: int = 1) -> SearchResult:
    """A legal answer: the first legal move (or none, on a finished board)."""
    move = next(iter(board.legal_moves), None)
    if move is None:
        return SearchResult(None, None, Score(mate=0) if board.is_check() else Score(cp=0), 0, 0, 0, 0)
    return SearchResult(move, None, Score(cp=20), depth, depth, 100, 5, (move,))


class FakeSearch:
    """One scripted search; what the session did to it is kept for the test to read."""

    def __init__(self, runner: FakeRunner, search_id: int, board: chess.Board, limits: Limits, hash_mb: int,
                 settings: SearchSettings, deadlines: tuple[float, float] | None,
                 on_info: Callable[[SearchInfo], None], on_end: Callable[[int], None]) -> None:
        self.search_id = search_id
        self.board = board
        self.limits = limits
        self.hash_mb = hash_mb
        self.settings = settings
        self.deadlines = deadlines
        self.stopped = False
        self.stalled = False
        self.abandoned = False
        self._runner = runner
        self._on_info = on_info
        self._on_end = on_end
        self._ended = anyio.Event()
        self._result: SearchResult | None = None

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def stop(self) -> None:
        self.stopped = True
        if not self.stalled:
            self.finish(self._runner.stop_result(self.board))

    def stall(self) -> None:
        """The worker stops answering (SIGSTOP): a stop no longer ends the search."""
        self.stalled = True

    def abandon(self) -> bool:
        """The session gave up on the search: its worker is replaced, and it never answers."""
        if self.ended:
            return False
        self.abandoned = True
        self._runner.replacements += 1
        self._result = None
        self._ended.set()
        self._on_end(self.search_id)
        return True

    def result_nowait(self) -> SearchResult:
        assert self.ended
        if self._result is None:
            raise WorkerAbandoned("abandoned")
        return self._result

    def set_deadlines(self, soft: float, hard: float) -> None:
        self.deadlines = (soft, hard)

    def post(self, info: SearchInfo) -> None:
        """The search reports an iteration (ignored once it has ended, as a late info is)."""
        if not self.ended:
            self._on_info(info)

    def finish(self, result: SearchResult | None = None) -> None:
        """The search ends (by itself, unless `stop` called this)."""
        if self.ended or self.stalled:
            return
        self._result = result if result is not None else first_move_result(self.board, depth=5)
        self._ended.set()
        self._on_end(self.search_id)

    async def result(self) -> SearchResult:
        await self._ended.wait()
        return self.result_nowait()


class FakeRunner:
    def __init__(self, stop_result: Callable[[chess.Board], SearchResult] = first_move_result) -> None:
        self.stop_result = stop_result
        self.searches: list[FakeSearch] = []
        self.new_games = 0
        #: Workers replaced because a search was abandoned.
        self.replacements = 0
        #: The `EvalFile` values the session asked the worker to build a net for.
        self.prepared: list[str] = []

    @property
    def active(self) -> FakeSearch | None:
        """The search that has not ended yet, if any."""
        if self.searches and not self.searches[-1].ended:
            return self.searches[-1]
        return None

    def begin(self, board: chess.Board, limits: Limits, *, hash_mb: int, settings: SearchSettings,
              deadlines: tuple[float, float] | None, on_info: Callable[[SearchInfo], None],
              on_end: Callable[[int], None]) -> FakeSearch:
        assert self.active is None, "one search at a time"
        search = FakeSearch(self, len(self.searches) + 1, board, limits, hash_mb, settings, deadlines, on_info,
                            on_end)
        self.searches.append(search)
        return search

    async def new_game(self) -> None:
        self.new_games += 1

    async def wait_ready(self) -> None:
        pass

    async def prepare(self, eval_file: str) -> None:
        self.prepared.append(eval_file)
