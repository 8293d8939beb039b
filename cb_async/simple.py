"""`cb_async.SimpleEngine`: the embedded engine for code without an event loop.

Like python-chess's `SimpleEngine`: an event loop runs on a background thread (an anyio
blocking portal), and every method blocks the caller until the engine answers.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import chess
import chess.engine
from chess.engine import AnalysisComplete, InfoDict, Limit, PlayResult

from cb_async.embedded import Analysis, Engine, ReturnCode

T = TypeVar("T")


class SimpleEngine:
    """A blocking embedded engine. Use `with SimpleEngine() as engine:` or call `close()`."""

    def __init__(self, options: Mapping[str, Any] | None = None, timeout: float | None = 30.0) -> None:
        self.timeout = timeout
        self._portal_context: AbstractContextManager[anyio.from_thread.BlockingPortal] | None = (
            anyio.from_thread.start_blocking_portal())
        self._portal = self._portal_context.__enter__()
        self.engine = Engine(options)
        try:
            self._run(self.engine.start, timeout)
        except BaseException:
            self.close()
            raise

    def _run(self, function: Callable[[], Awaitable[T]], timeout: float | None = None) -> T:
        future = self._portal.start_task_soon(function)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    @property
    def id(self) -> dict[str, str]:
        return self.engine.id

    @property
    def options(self) -> dict[str, chess.engine.Option]:
        return self.engine.options

    @property
    def protocol(self) -> Engine:
        """python-chess's `SimpleEngine.protocol`: the async engine underneath."""
        return self.engine

    #: python-chess's subprocess transport: there is none (the search runs in a worker process
    #: the engine owns), so code like lichess-bot's `if engine.transport is not None` skips it.
    transport = None

    @property
    def returncode(self) -> ReturnCode:
        """`done()` and `result()` of the engine's exit code (0 once closed)."""
        return self.engine.returncode

    def send_opponent_information(self, *, opponent: chess.engine.Opponent | None = None,
                                  engine_rating: int | None = None) -> None:
        self._run(lambda: self.engine.send_opponent_information(opponent=opponent, engine_rating=engine_rating),
                  self.timeout)

    def send_game_result(self, board: chess.Board, winner: chess.Color | None = None,
                         game_ending: str | None = None, game_complete: bool = True) -> None:
        self._run(lambda: self.engine.send_game_result(board, winner, game_ending, game_complete), self.timeout)

    def ping(self) -> None:
        self._run(self.engine.ping, self.timeout)

    def configure(self, options: Mapping[str, Any]) -> None:
        self._run(lambda: self.engine.configure(options), self.timeout)

    def play(self, board: chess.Board, limit: Limit, **kwargs: Any) -> PlayResult:
        return self._run(lambda: self.engine.play(board, limit, **kwargs), _timeout_for(limit, self.timeout))

    def analyse(self, board: chess.Board, limit: Limit, **kwargs: Any) -> InfoDict | list[InfoDict]:
        return self._run(lambda: self.engine.analyse(board, limit, **kwargs), _timeout_for(limit, self.timeout))

    def analysis(self, board: chess.Board, limit: Limit | None = None, **kwargs: Any) -> SimpleAnalysis:
        return SimpleAnalysis(self, self._run(lambda: self.engine.analysis(board, limit, **kwargs), self.timeout))

    def close(self) -> None:
        """End the engine and the loop thread. Safe to call twice."""
        context, self._portal_context = self._portal_context, None
        if context is None:
            return
        try:
            self._run(self.engine.aclose, 10)
        finally:
            context.__exit__(None, None, None)

    quit = close

    def __enter__(self) -> SimpleEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SimpleAnalysis:
    """A blocking view of an `AnalysisResult`: iterate for infos, `stop()`, `wait()`."""

    def __init__(self, simple: SimpleEngine, inner: Analysis) -> None:
        self._simple = simple
        self.inner = inner

    @property
    def info(self) -> InfoDict:
        return self.inner.info

    @property
    def multipv(self) -> list[InfoDict]:
        return self.inner.multipv

    def stop(self) -> None:
        self._simple._portal.call(self.inner.stop)

    def wait(self) -> chess.engine.BestMove:
        return self._simple._run(self.inner.wait)

    def get(self) -> InfoDict:
        return self._simple._run(self.inner.get)

    def next(self) -> InfoDict | None:
        return self._simple._run(self.inner.next)

    def __iter__(self) -> SimpleAnalysis:
        return self

    def __next__(self) -> InfoDict:
        try:
            return self.get()
        except AnalysisComplete:
            raise StopIteration from None

    def __enter__(self) -> SimpleAnalysis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _timeout_for(limit: Limit, timeout: float | None) -> float | None:
    """Like python-chess: no timeout on clock limits, the move time plus `timeout` otherwise."""
    if timeout is None or limit.white_clock is not None or limit.black_clock is not None:
        return None
    if limit.time is not None:
        return limit.time + timeout
    if limit.depth is None and limit.nodes is None and limit.mate is None:
        return None
    return timeout
