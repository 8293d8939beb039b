"""`cb_async.Engine`: cb-async inside another Python service, with python-chess's API.

The same session actor and worker process the daemon uses, driven from the host's own event
loop instead of stdin. The search runs in a worker process, so the host's loop keeps ticking
while it thinks (a thread would hold the GIL for up to the switch interval at a time), and
cancelling the task that awaits `play` or `analyse` stops the search at once.

Arguments, defaults, return types and exceptions follow `chess.engine.Protocol`, so switching
from a Stockfish subprocess to embedded cb-async is one line:

    engine = await cb_async.Engine().start()     # instead of chess.engine.popen_uci(...)
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import multiprocessing
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import chess
import chess.engine
from chess.engine import (
    INFO_ALL, INFO_BASIC, INFO_NONE, INFO_PV, INFO_SCORE, AnalysisResult, EngineError,
    EngineTerminatedError, Info as InfoSelector, InfoDict, Limit, PlayResult,
)

from cb_async import options as option_table
from cb_async.commands import (
    Cancel, Command, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop,
)
from cb_async.events import (
    Acknowledged, BestMove, Info, Message, NewGameDone, OptionError, OptionsSet, Ready, SearchCancelled,
)
from cb_async.limits import Limits
from cb_async.results import SearchInfo
from cb_async.runner import SearchRunner, default_context
from cb_async.session import Session
from cb_async.version import ENGINE_AUTHOR, ENGINE_NAME, __version__

LOGGER = logging.getLogger("cb_async")

#: Options python-chess sets itself per command; `configure` refuses them, as it does.
MANAGED_OPTIONS = frozenset({"multipv", "ponder", "uci_chess960", "uci_variant"})

_NO_GAME = object()


def library_context() -> multiprocessing.context.BaseContext:
    """The worker's start method inside a host application.

    `fork` on Linux: the worker starts in milliseconds, imports nothing again and, unlike
    `spawn`/`forkserver`, never re-runs the host's `__main__` (a script without the
    `if __name__ == "__main__":` guard would otherwise start itself again). The host's other
    threads do not come along, and the worker touches none of their locks. Elsewhere `spawn`,
    Python's default there, which asks the usual `__main__` guard of the host script.
    """
    return default_context()


def limits_from(limit: Limit | None, *, multipv: int = 1, root_moves: Iterable[chess.Move] | None = None,
                infinite_if_empty: bool = False) -> Limits:
    """python-chess's `Limit` (seconds) as our `Limits` (milliseconds)."""
    ms = lambda seconds: None if seconds is None else max(0, int(round(seconds * 1000)))  # noqa: E731
    search_moves = tuple(root_moves) if root_moves is not None else ()
    if limit is None:
        return Limits(infinite=True, multipv=multipv, search_moves=search_moves)
    limits = Limits(
        movetime=ms(limit.time),
        white_clock=ms(limit.white_clock), black_clock=ms(limit.black_clock),
        white_inc=ms(limit.white_inc) or 0, black_inc=ms(limit.black_inc) or 0,
        moves_to_go=limit.remaining_moves or None,
        depth=limit.depth or None, nodes=limit.nodes or None, mate=limit.mate or None,
        multipv=multipv, search_moves=search_moves,
    )
    if infinite_if_empty and not (limits.is_timed or limits.depth or limits.nodes or limits.mate):
        limits = limits.replace(infinite=True)
    return limits


def info_dict(info: SearchInfo, board: chess.Board, selector: InfoSelector = INFO_ALL) -> InfoDict:
    """One `SearchInfo` as python-chess's `InfoDict`, with the fields `selector` asks for."""
    result: InfoDict = {}
    if selector & INFO_BASIC:
        result.update(depth=info.depth, seldepth=info.seldepth, multipv=info.multipv, nodes=info.nodes,
                      nps=info.nps, time=info.time / 1000, hashfull=info.hashfull, tbhits=info.tbhits)
    if selector & INFO_SCORE:
        score = chess.engine.Mate(info.score.mate) if info.score.mate is not None else chess.engine.Cp(info.score.cp or 0)
        result["score"] = chess.engine.PovScore(score, board.turn)
        if info.bound == "lower":
            result["lowerbound"] = True
        elif info.bound == "upper":
            result["upperbound"] = True
        if info.wdl is not None:
            result["wdl"] = chess.engine.PovWdl(chess.engine.Wdl(*info.wdl), board.turn)
    if selector & INFO_PV:
        result["pv"] = list(info.pv)
    return result


@dataclasses.dataclass(eq=False)
class _Pondering:
    tag: int
    board: chess.Board
    game: object


class _SearchWaiter:
    """Collects the events of one search: infos for an analysis, the answer for everyone."""

    def __init__(self, loop: asyncio.AbstractEventLoop, analysis: AnalysisResult | None = None,
                 selector: InfoSelector = INFO_ALL) -> None:
        self.answer: asyncio.Future[BestMove] = loop.create_future()
        self.analysis = analysis
        self.selector = selector

    def on_event(self, event: Any) -> bool:
        """True when the search is over."""
        match event:
            case Info(info=info, board=board):
                if self.analysis is not None:
                    self.analysis.post(info_dict(info, board, self.selector))
                return False
            case BestMove(result=result):
                if not self.answer.done():
                    self.answer.set_result(event)
                if self.analysis is not None:
                    self.analysis.set_finished(chess.engine.BestMove(result.best_move, result.ponder_move))
                return True
            case SearchCancelled():
                if not self.answer.done():
                    self.answer.set_exception(EngineError("the search was cancelled"))
                    self.answer.exception()  # retrieved: nobody may be waiting
                if self.analysis is not None:
                    self.analysis.set_finished(chess.engine.BestMove(None, None))
                return True
        return False


class Engine:
    """An embedded engine. Use `async with Engine(...) as engine:` or `await Engine().start()`."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self._initial_options = dict(options or {})
        self.id: dict[str, str] = {"name": ENGINE_NAME, "author": ENGINE_AUTHOR}
        self.options: dict[str, chess.engine.Option] = {
            spec.name: chess.engine.Option(spec.name, spec.type, spec.default, spec.min, spec.max, list(spec.choices))
            for spec in option_table.OPTIONS if "uci" in spec.protocols
        }
        self.config: dict[str, Any] = {}
        self._runner: SearchRunner | None = None
        self._session: Session | None = None
        self._task: asyncio.Task[None] | None = None
        self._tags = itertools.count(1)
        self._replies: dict[int, asyncio.Future[Any]] = {}
        self._searches: dict[int, _SearchWaiter] = {}
        self._running_search: int | None = None
        self._pondering: _Pondering | None = None
        self._game: object = _NO_GAME
        self._lock = asyncio.Lock()
        self._closed = False

    # -- life cycle -------------------------------------------------------------------------

    async def start(self) -> Engine:
        loop = asyncio.get_running_loop()
        runner = SearchRunner(library_context())
        await loop.run_in_executor(None, runner.start)  # a process start must not stall the loop
        runner.attach(loop)
        self._runner = runner
        self._session = Session(runner, self._sink)
        self._task = asyncio.create_task(self._session.run(), name="cb-async-session")
        self.id["name"] = f"{ENGINE_NAME} {__version__}"
        if self._initial_options:
            await self.configure(self._initial_options)
        return self

    async def __aenter__(self) -> Engine:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel any search and end the worker process. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        session, task, runner = self._session, self._task, self._runner
        if session is not None and task is not None and not task.done():
            session.submit(Quit())
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except (asyncio.TimeoutError, Exception):
                task.cancel()
        if runner is not None:
            await asyncio.get_running_loop().run_in_executor(None, runner.close)
        for future in self._replies.values():
            if not future.done():
                future.set_exception(EngineTerminatedError("engine closed"))
        self._replies.clear()

    quit = aclose

    # -- events from the session ------------------------------------------------------------

    def _sink(self, event: Any) -> list[Command]:
        tag = getattr(event, "search_tag", None)
        if isinstance(event, (Info, BestMove, SearchCancelled)):
            waiter = self._searches.get(tag) if tag is not None else None
            if waiter is not None and waiter.on_event(event):
                del self._searches[tag]
                if self._running_search == tag:
                    self._running_search = None
            return []
        if isinstance(event, Message):
            LOGGER.warning("%s", event.text)
            return []
        future = self._replies.pop(getattr(event, "tag", None), None) if getattr(event, "tag", None) is not None else None
        if future is not None and not future.done():
            if isinstance(event, OptionError):
                future.set_exception(EngineError(event.message))
            else:
                future.set_result(event)
        return []

    def _submit(self, command: Command) -> None:
        if self._closed or self._session is None or self._task is None or self._task.done():
            raise EngineTerminatedError("the engine is not running (closed, or start() was not awaited)")
        self._session.submit(command)

    async def _request(self, make: Callable[[int], Command]) -> Any:
        tag = next(self._tags)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[tag] = future
        self._submit(make(tag))
        return await future

    def _start_search(self, go: Go, waiter: _SearchWaiter) -> None:
        assert go.tag is not None
        self._searches[go.tag] = waiter
        self._running_search = go.tag
        self._submit(go)

    async def _finish_running(self) -> None:
        """python-chess semantics: a new command ends the one before it (an analysis, a ponder)."""
        self._pondering = None
        tag = self._running_search
        if tag is not None and tag in self._searches:
            waiter = self._searches[tag]
            await self._request(lambda t: Cancel(tag=t))
            if not waiter.answer.done():
                waiter.answer.cancel()

    async def _new_game_if(self, game: object) -> None:
        if self._game is _NO_GAME or game != self._game:
            await self._request(lambda t: NewGame(tag=t))
        self._game = game

    # -- python-chess's Protocol ------------------------------------------------------------

    async def ping(self) -> None:
        await self._request(lambda t: IsReady(tag=t))

    async def configure(self, options: Mapping[str, Any]) -> None:
        for name in options:
            if name.lower() in MANAGED_OPTIONS:
                raise EngineError(f"cannot set {name} which is automatically managed")
        event: OptionsSet = await self._request(lambda t: SetOptions(tuple(options.items()), tag=t))
        self.config.update(event.values)

    async def play(self, board: chess.Board, limit: Limit, *, game: object = None, info: InfoSelector = INFO_NONE,
                   ponder: bool = False, draw_offered: bool = False, root_moves: Iterable[chess.Move] | None = None,
                   options: Mapping[str, Any] = {}, opponent: object = None) -> PlayResult:
        async with self._lock:
            hit = await self._hit_or_drop_ponder(board, game)
            if hit is None:
                await self._new_game_if(game)
                async with self._temporary_options(options):
                    tag = next(self._tags)
                    waiter = _SearchWaiter(asyncio.get_running_loop())
                    limits = limits_from(limit, root_moves=root_moves)
                    self._start_search(Go(limits, board=board.copy(), multipv=1, tag=tag), waiter)
                    event = await self._await_answer(tag, waiter)
            else:
                event = await self._await_answer(*hit)
            result = event.result
            final = result.lines[0] if result.lines else None
            play_result = PlayResult(result.best_move, result.ponder_move,
                                     info_dict(final, event.board, info) if final is not None and info else {})
            if result.source != "search" and result.best_move is not None:
                # As UCI's `info string book move e2e4`: python-chess keeps it under "string".
                play_result.info["string"] = f"{result.source} move {result.best_move.uci()}"
            if ponder and result.best_move is not None and result.ponder_move is not None:
                self._start_ponder(board, result.best_move, result.ponder_move, limit, event.elapsed_ms, game)
            return play_result

    async def analyse(self, board: chess.Board, limit: Limit, *, multipv: int | None = None, game: object = None,
                      info: InfoSelector = INFO_ALL, root_moves: Iterable[chess.Move] | None = None,
                      options: Mapping[str, Any] = {}) -> InfoDict | list[InfoDict]:
        async with self._lock:
            await self._finish_running()
            await self._new_game_if(game)
            async with self._temporary_options(options):
                tag = next(self._tags)
                waiter = _SearchWaiter(asyncio.get_running_loop())
                limits = limits_from(limit, multipv=multipv or 1, root_moves=root_moves)
                self._start_search(Go(limits, board=board.copy(), multipv=limits.multipv, tag=tag), waiter)
                event = await self._await_answer(tag, waiter)
        infos = [info_dict(line, event.board, info) for line in event.result.lines]
        if multipv is None:
            return infos[0] if infos else {}
        return infos

    async def analysis(self, board: chess.Board, limit: Limit | None = None, *, multipv: int | None = None,
                       game: object = None, info: InfoSelector = INFO_ALL,
                       root_moves: Iterable[chess.Move] | None = None,
                       options: Mapping[str, Any] = {}) -> AnalysisResult:
        async with self._lock:
            await self._finish_running()
            await self._new_game_if(game)
            if options:
                await self.configure(options)
            tag = next(self._tags)
            analysis = AnalysisResult(stop=lambda: self._stop_search(tag))
            waiter = _SearchWaiter(asyncio.get_running_loop(), analysis, info)
            limits = limits_from(limit, multipv=multipv or 1, root_moves=root_moves, infinite_if_empty=True)
            self._start_search(Go(limits, board=board.copy(), multipv=limits.multipv, tag=tag), waiter)
            return analysis

    # -- helpers ----------------------------------------------------------------------------

    def _stop_search(self, tag: int) -> None:
        if self._running_search == tag and not self._closed:
            self._submit(Stop())

    async def _await_answer(self, tag: int, waiter: _SearchWaiter) -> BestMove:
        try:
            return await asyncio.shield(waiter.answer)
        except asyncio.CancelledError:
            # The caller gave up: stop the search now, leave the engine ready for the next call.
            if self._running_search == tag and not self._closed:
                self._submit(Cancel())
            raise

    async def _hit_or_drop_ponder(self, board: chess.Board, game: object) -> tuple[int, _SearchWaiter] | None:
        """The next `play` on the position pondered on is a hit: the same search goes on.
        Anything else ends the ponder search without a move."""
        pondering, self._pondering = self._pondering, None
        waiter = self._searches.get(pondering.tag) if pondering is not None else None
        if (pondering is not None and waiter is not None and game == pondering.game
                and board == pondering.board and board.move_stack == pondering.board.move_stack):
            self._submit(PonderHit())
            return pondering.tag, waiter
        await self._finish_running()
        return None

    def _start_ponder(self, board: chess.Board, move: chess.Move, reply: chess.Move, limit: Limit,
                      elapsed_ms: int, game: object) -> None:
        ponder_board = board.copy()
        ponder_board.push(move)
        ponder_board.push(reply)
        # As python-chess does: the engine's clock less the time it used, plus its increment.
        limit = dataclasses.replace(limit)
        used = elapsed_ms / 1000
        if board.turn == chess.WHITE and limit.white_clock is not None:
            limit.white_clock = max(0.001, limit.white_clock - used + (limit.white_inc or 0))
        if board.turn == chess.BLACK and limit.black_clock is not None:
            limit.black_clock = max(0.001, limit.black_clock - used + (limit.black_inc or 0))
        tag = next(self._tags)
        waiter = _SearchWaiter(asyncio.get_running_loop())
        self._start_search(Go(limits_from(limit), board=ponder_board, ponder=True, multipv=1, tag=tag), waiter)
        self._pondering = _Pondering(tag, ponder_board, game)

    def _temporary_options(self, options: Mapping[str, Any]) -> _TemporaryOptions:
        return _TemporaryOptions(self, options)


class _TemporaryOptions:
    """python-chess's per-command `options`: set for this command, restored after it."""

    def __init__(self, engine: Engine, options: Mapping[str, Any]) -> None:
        self._engine = engine
        self._options = dict(options)
        self._previous: dict[str, Any] = {}

    async def __aenter__(self) -> None:
        if self._options:
            for name in self._options:
                spec = option_table.find(name)
                if spec.type != "button":
                    self._previous[spec.name] = self._engine.config.get(spec.name, spec.default)
            await self._engine.configure(self._options)

    async def __aexit__(self, *exc: object) -> None:
        if self._previous and not self._engine._closed:
            await self._engine.configure(self._previous)
