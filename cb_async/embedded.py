"""`cb_async.Engine`: cb-async inside another Python service, with python-chess's API.

The same session actor and worker process the daemon uses, driven from the host's own event
loop instead of stdin. The search runs in a worker process, so the host's loop keeps ticking
while it thinks (a thread would hold the GIL for up to the switch interval at a time), and
cancelling the task that awaits `play` or `analyse` stops the search at once.

Arguments, defaults, return types and exceptions follow `chess.engine.Protocol`, so switching
from a Stockfish subprocess to embedded cb-async is one line (bot frameworks included: lichess-bot
calls `send_opponent_information`, `play` and `send_game_result`):

    engine = await cb_async.Engine().start()     # instead of chess.engine.popen_uci(...)

It is written against anyio, so the same engine serves asyncio and trio programs
(python-chess's own client is asyncio-only): `analysis()` therefore returns `Analysis`, which
has the API of python-chess's `AnalysisResult` on either backend.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import logging
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, Generic, TypeVar

import anyio
import anyio.abc
import chess
import chess.engine
from chess.engine import (
    INFO_ALL, INFO_BASIC, INFO_NONE, INFO_PV, INFO_SCORE, AnalysisComplete, EngineError, EngineTerminatedError,
    Info as InfoSelector, InfoDict, Limit, PlayResult,
)

from cb_async import options as option_table
from cb_async.commands import Cancel, Command, Go, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop
from cb_async.events import (
    Acknowledged, AdapterEvent, BestMove, Event, Info, Message, NewGameDone, OptionError, OptionsSet, Ready, SearchCancelled,
)
from cb_async.limits import Limits
from cb_async.results import SearchInfo
from cb_async.runner import ProcessRunner, WorkerDied, library_context
from cb_async.session import Session
from cb_async.version import ENGINE_AUTHOR, ENGINE_NAME, __version__

LOGGER = logging.getLogger("cb_async")

#: Options python-chess sets itself per command; `configure` refuses them, as it does.
MANAGED_OPTIONS = frozenset({"multipv", "ponder", "uci_chess960", "uci_variant"})

#: How long `aclose` waits for the session to end by itself before cancelling it.
CLOSE_TIMEOUT = 5.0

T = TypeVar("T")

_NO_GAME = object()


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else max(0, int(round(seconds * 1000)))


def limits_from(limit: Limit | None, *, multipv: int = 1, root_moves: Iterable[chess.Move] | None = None,
                infinite_if_empty: bool = False) -> Limits:
    """python-chess's `Limit` (seconds) as our `Limits` (milliseconds)."""
    search_moves = tuple(root_moves) if root_moves is not None else ()
    if limit is None:
        return Limits(infinite=True, multipv=multipv, search_moves=search_moves)
    limits = Limits(
        movetime=_ms(limit.time),
        white_clock=_ms(limit.white_clock), black_clock=_ms(limit.black_clock),
        white_inc=_ms(limit.white_inc) or 0, black_inc=_ms(limit.black_inc) or 0,
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
        result.update({"depth": info.depth, "seldepth": info.seldepth, "multipv": info.multipv, "nodes": info.nodes,
                       "nps": info.nps, "time": info.time / 1000, "hashfull": info.hashfull, "tbhits": info.tbhits})
    if selector & INFO_SCORE:
        score = chess.engine.Mate(info.score.mate) if info.score.mate is not None else chess.engine.Cp(info.score.cp or 0)
        result["score"] = chess.engine.PovScore(score, board.turn)
        if info.bound is not None:
            # python-chess's own UCI client sets these two keys, which its InfoDict does not declare.
            result[f"{info.bound}bound"] = True  # type: ignore[literal-required]
        if info.wdl is not None:
            result["wdl"] = chess.engine.PovWdl(chess.engine.Wdl(*info.wdl), board.turn)
    if selector & INFO_PV:
        result["pv"] = list(info.pv)
    return result


class _Pending(Generic[T]):
    """A reply that comes later, awaited on any anyio backend (asyncio's Future is asyncio's)."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._value: T | None = None
        self._error: BaseException | None = None

    def done(self) -> bool:
        return self._done.is_set()

    def set(self, value: T) -> None:
        if not self.done():
            self._value = value
            self._done.set()

    def fail(self, error: BaseException) -> None:
        if not self.done():
            self._error = error
            self._done.set()

    async def wait(self) -> T:
        await self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class ReturnCode:
    """`engine.returncode`, python-chess's future of the engine's exit code, on asyncio and trio:
    `done()`, `result()` (0 once the engine is closed, 1 if its session failed), or `await` it."""

    def __init__(self) -> None:
        self._code: _Pending[int] = _Pending()

    def done(self) -> bool:
        return self._code.done()

    def result(self) -> int:
        if not self._code.done():
            raise RuntimeError("the engine is still running")
        return self._code._value if self._code._value is not None else 1

    def set(self, code: int) -> None:
        self._code.set(code)

    def __await__(self) -> Any:
        return self._code.wait().__await__()


class Analysis:
    """A running analysis, with the API of python-chess's `AnalysisResult` on asyncio and trio:
    iterate it (`async for info in analysis`) for each info, read `info`/`multipv`, `stop()` it,
    `await wait()` for the best move; as a context manager it stops the analysis on exit."""

    def __init__(self, stop: Callable[[], None] | None = None) -> None:
        self._stop = stop
        self._infos: collections.deque[InfoDict] = collections.deque()
        self._arrived = anyio.Event()  # set when an info or the end arrives; renewed by `get`
        self._finished: _Pending[chess.engine.BestMove] = _Pending()
        self._seen_end = False
        self.multipv: list[InfoDict] = [{}]

    def post(self, info: InfoDict) -> None:
        if not info or self._finished.done():
            return
        multipv = info.get("multipv", 1)
        while len(self.multipv) < multipv:
            self.multipv.append({})
        self.multipv[multipv - 1].update(info)
        self._infos.append(info)
        self._arrived.set()

    def set_finished(self, best: chess.engine.BestMove) -> None:
        self._finished.set(best)
        self._arrived.set()

    def set_exception(self, error: BaseException) -> None:
        self._finished.fail(error)
        self._arrived.set()

    @property
    def info(self) -> InfoDict:
        return self.multipv[0]

    def stop(self) -> None:
        """Stops the analysis as soon as possible."""
        if self._stop is not None and not self._finished.done():
            self._stop()
            self._stop = None

    async def wait(self) -> chess.engine.BestMove:
        return await self._finished.wait()

    async def get(self) -> InfoDict:
        """The next info; `AnalysisComplete` once the analysis is over and all were read."""
        while not self._seen_end:
            if self._infos:
                return self._infos.popleft()
            if self._finished.done():
                self._seen_end = True
                await self._finished.wait()  # raises the search's error, if it had one
                break
            await self._arrived.wait()
            self._arrived = anyio.Event()
        raise AnalysisComplete()

    def would_block(self) -> bool:
        return not self._seen_end and not self._infos and not self._finished.done()

    def empty(self) -> bool:
        return self._seen_end or not self._infos

    async def next(self) -> InfoDict | None:
        try:
            return await self.get()
        except AnalysisComplete:
            return None

    def __aiter__(self) -> Analysis:
        return self

    async def __anext__(self) -> InfoDict:
        try:
            return await self.get()
        except AnalysisComplete:
            raise StopAsyncIteration from None

    def __enter__(self) -> Analysis:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.stop()


@dataclasses.dataclass(eq=False)
class _RunningSearch:
    """The one search the library has asked for: its events go to its answer (and analysis).

    `pondered` is set for a ponder search: the position it ponders, and the game it belongs to,
    which the next `play` must match for a hit."""

    tag: int
    answer: _Pending[BestMove]
    analysis: Analysis | None = None
    selector: InfoSelector = INFO_ALL
    pondered: tuple[chess.Board, object] | None = None

    def on_event(self, event: Info | BestMove | SearchCancelled) -> bool:
        """True when the search is over."""
        match event:
            case Info(info=info, board=board):
                if self.analysis is not None:
                    self.analysis.post(info_dict(info, board, self.selector))
                return False
            case BestMove(result=result, failure=failure):
                if failure is not None:
                    error = EngineTerminatedError(f"the search could not run: {failure}")
                    self.answer.fail(error)
                    if self.analysis is not None:
                        self.analysis.set_exception(error)
                    return True
                self.answer.set(event)
                if self.analysis is not None:
                    self.analysis.set_finished(chess.engine.BestMove(result.best_move, result.ponder_move))
                return True
            case SearchCancelled():
                self.answer.fail(EngineError("the search was cancelled"))
                if self.analysis is not None:
                    self.analysis.set_finished(chess.engine.BestMove(None, None))
                return True
        return False


class Engine:
    """An embedded engine. Use `async with Engine(...) as engine:` or `await Engine().start()`."""

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        self._initial_options = dict(options or {})
        self.id: dict[str, str] = {"name": f"{ENGINE_NAME} {__version__}", "author": ENGINE_AUTHOR}
        self.options: dict[str, chess.engine.Option] = {
            spec.name: chess.engine.Option(spec.name, spec.type, spec.default, spec.min, spec.max, list(spec.choices))
            for spec in option_table.OPTIONS if "uci" in spec.protocols
        }
        self.config: dict[str, Any] = {}
        #: python-chess keeps the options a command set for itself apart from `config`; every
        #: option here is set at once, so the two are the same mapping.
        self.target_config = self.config
        self.returncode = ReturnCode()
        self._runner: ProcessRunner | None = None
        self._session: Session | None = None
        self._session_scope: anyio.CancelScope | None = None
        self._session_ended: anyio.Event | None = None
        self._tags = itertools.count(1)
        self._replies: dict[int, _Pending[Any]] = {}
        self._running: _RunningSearch | None = None
        self._game: object = _NO_GAME
        self._lock: anyio.Lock | None = None
        self._closed = False
        #: The task group of `async with Engine()`, or the session's task without one.
        self._group: anyio.abc.TaskGroup | None = None
        self._background: object = None
        #: A search has run since the start: the table may hold something a new game must clear.
        self._searched = False

    # -- life cycle -------------------------------------------------------------------------

    async def start(self, task_group: anyio.abc.TaskGroup | None = None) -> Engine:
        """Start the worker process and the session; raises `EngineTerminatedError` if the
        worker cannot start (say, a script without the `if __name__ == "__main__":` guard).

        The session runs in `task_group`, which the caller's context owns (trio's rule: a task
        lives no longer than the block that started it). `async with Engine() as engine:` gives
        it one of its own, entered and left with the block. Without one (`await
        Engine().start()`, as python-chess's `popen_uci` is awaited) it runs beside the caller
        until `aclose()`: an asyncio task this engine holds, or a trio system task."""
        self._lock = anyio.Lock()
        runner = ProcessRunner(library_context())
        self._runner = runner
        try:
            await anyio.to_thread.run_sync(runner.start)  # a process start must not stall the loop
            await runner.attach()
            await runner.wait_ready()
        except WorkerDied as error:
            await anyio.to_thread.run_sync(runner.close)
            self._closed = True
            self.returncode.set(1)
            raise EngineTerminatedError(f"{error}. {_GUARD_HINT}") from None
        except BaseException:
            await anyio.to_thread.run_sync(runner.close)
            self._closed = True
            self.returncode.set(1)
            raise
        self._session = Session(runner, self._sink)
        self._session_scope = anyio.CancelScope()
        self._session_ended = anyio.Event()
        if task_group is not None:
            task_group.start_soon(self._run_session, name="cb-async session")
        else:
            self._background = _start_background(self._run_session)
        if self._initial_options:
            await self.configure(self._initial_options)
        return self

    async def _run_session(self) -> None:
        assert self._session is not None and self._session_scope is not None and self._session_ended is not None
        try:
            with self._session_scope:
                await self._session.run()
        except Exception:
            LOGGER.exception("the cb-async session failed")
            self.returncode.set(1)
        finally:
            self._session_ended.set()
            for pending in self._replies.values():
                pending.fail(EngineTerminatedError("engine closed"))
            self._replies.clear()
            if self._running is not None:
                self._running.answer.fail(EngineTerminatedError("engine closed"))
                if self._running.analysis is not None:
                    self._running.analysis.set_exception(EngineTerminatedError("engine closed"))

    async def __aenter__(self) -> Engine:
        group = anyio.create_task_group()
        await group.__aenter__()
        try:
            await self.start(group)
        except BaseException:
            await group.__aexit__(None, None, None)  # nothing runs in it yet: the error stays as it is
            raise
        self._group = group
        return self

    async def __aexit__(self, *exc: object) -> None:
        group, self._group = self._group, None
        try:
            await self.aclose()
        finally:
            if group is not None:
                await group.__aexit__(None, None, None)  # the session has ended: it returns at once

    async def aclose(self) -> None:
        """Cancel any search, end the session and the worker process. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        session, ended, runner = self._session, self._session_ended, self._runner
        with anyio.CancelScope(shield=True):
            if session is not None and ended is not None and not ended.is_set():
                session.submit(Quit())
                with anyio.move_on_after(CLOSE_TIMEOUT):
                    await ended.wait()
                if not ended.is_set() and self._session_scope is not None:
                    self._session_scope.cancel()
                    await ended.wait()
            if runner is not None:
                await anyio.to_thread.run_sync(runner.close)
            self.returncode.set(0)

    quit = aclose

    # -- events from the session ------------------------------------------------------------

    def _sink(self, event: Event | AdapterEvent) -> list[Command]:
        match event:
            case Info(search_tag=tag) | BestMove(search_tag=tag) | SearchCancelled(search_tag=tag):
                running = self._running
                if running is not None and running.tag == tag and running.on_event(event):
                    self._running = None
            case Message(text=text):
                LOGGER.warning("%s", text)
            case OptionError(tag=tag, message=message):
                pending = self._replies.pop(tag, None) if tag is not None else None
                if pending is not None:
                    pending.fail(EngineError(message))
            case Ready(tag=tag) | OptionsSet(tag=tag) | NewGameDone(tag=tag) | Acknowledged(tag=tag):
                pending = self._replies.pop(tag, None) if tag is not None else None
                if pending is not None:
                    pending.set(event)
        return []

    def _submit(self, command: Command) -> None:
        if self._closed or self._session is None or self._session.finished:
            raise EngineTerminatedError("the engine is not running (closed, or start() was not awaited)")
        self._session.submit(command)

    async def _request(self, make: Callable[[int], Command]) -> Any:
        tag = next(self._tags)
        pending: _Pending[Any] = _Pending()
        self._replies[tag] = pending
        self._submit(make(tag))
        return await pending.wait()

    def _start_search(self, go: Go, running: _RunningSearch) -> None:
        self._running = running
        self._searched = True
        self._submit(go)

    async def _finish_running(self) -> None:
        """python-chess semantics: a new command ends the one before it (an analysis, a ponder)."""
        running = self._running
        if running is not None:
            await self._request(lambda t: Cancel(tag=t))

    async def _new_game_if(self, game: object) -> None:
        """A new game clears the table; not before the first search, whose worker has just
        cleared it after its warm-up (a round trip to the worker that would carry nothing)."""
        if (self._game is _NO_GAME and self._searched) or (self._game is not _NO_GAME and game != self._game):
            await self._request(lambda t: NewGame(tag=t))
        self._game = game

    def _guarded(self) -> anyio.Lock:
        if self._lock is None:
            raise EngineTerminatedError("the engine is not running (start() was not awaited)")
        return self._lock

    # -- python-chess's Protocol ------------------------------------------------------------

    async def initialize(self) -> None:
        """python-chess's handshake; `start()` has done it. Raises if the engine is not running."""
        await self.ping()

    async def ping(self) -> None:
        await self._request(lambda t: IsReady(tag=t))

    async def send_opponent_information(self, *, opponent: chess.engine.Opponent | None = None,
                                        engine_rating: int | None = None) -> None:
        """Who the engine plays, as python-chess's UCI client sends it: the `UCI_Opponent`
        option (`title rating computer|human name`), set only for an opponent with a name.
        With UCI_LimitStrength and Level Follows Opponent the level follows its rating.
        `engine_rating` is for XBoard engines only, as in python-chess."""
        if opponent is not None and opponent.name:
            title = opponent.title or "none"
            rating = opponent.rating or "none"
            kind = "computer" if opponent.is_engine else "human"
            await self.configure({"UCI_Opponent": f"{title} {rating} {kind} {opponent.name}"})

    async def send_game_result(self, board: chess.Board, winner: chess.Color | None = None,
                               game_ending: str | None = None, game_complete: bool = True) -> None:
        """The game is over. As python-chess's UCI client: nothing to tell a UCI engine (the
        next game's `play` with another `game` starts a new one); a running ponder search ends.
        A game ending with a line break or braces is refused, as python-chess refuses it."""
        if game_ending and any(c in game_ending for c in "{}\n\r"):
            raise EngineError(f"invalid line break or curly braces in game ending message: {game_ending!r}")
        async with self._guarded():
            await self._finish_running()

    async def configure(self, options: Mapping[str, Any]) -> None:
        for name in options:
            if name.lower() in MANAGED_OPTIONS:
                raise EngineError(f"cannot set {name} which is automatically managed")
        event: OptionsSet = await self._request(lambda t: SetOptions(tuple(options.items()), tag=t))
        self.config.update(event.values)

    async def play(self, board: chess.Board, limit: Limit, *, game: object = None, info: InfoSelector = INFO_NONE,
                   ponder: bool = False, draw_offered: bool = False, root_moves: Iterable[chess.Move] | None = None,
                   options: Mapping[str, Any] = {}, opponent: chess.engine.Opponent | None = None) -> PlayResult:
        async with self._guarded():
            running = await self._hit_or_drop_ponder(board, game)
            if running is None:
                if opponent is not None:
                    await self.send_opponent_information(opponent=opponent)
                await self._new_game_if(game)
                async with _TemporaryOptions(self, options):
                    running = _RunningSearch(next(self._tags), _Pending())
                    limits = limits_from(limit, root_moves=root_moves)
                    self._start_search(Go(limits, board=board.copy(), multipv=1, tag=running.tag), running)
                    event = await self._await_answer(running)
            else:
                event = await self._await_answer(running)
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
        async with self._guarded():
            await self._finish_running()
            await self._new_game_if(game)
            async with _TemporaryOptions(self, options):
                running = _RunningSearch(next(self._tags), _Pending())
                limits = limits_from(limit, multipv=multipv or 1, root_moves=root_moves)
                self._start_search(Go(limits, board=board.copy(), multipv=limits.multipv, tag=running.tag), running)
                event = await self._await_answer(running)
        infos = [info_dict(line, event.board, info) for line in event.result.lines]
        if multipv is None:
            return infos[0] if infos else {}
        return infos

    async def analysis(self, board: chess.Board, limit: Limit | None = None, *, multipv: int | None = None,
                       game: object = None, info: InfoSelector = INFO_ALL,
                       root_moves: Iterable[chess.Move] | None = None,
                       options: Mapping[str, Any] = {}) -> Analysis:
        async with self._guarded():
            await self._finish_running()
            await self._new_game_if(game)
            if options:
                await self.configure(options)
            tag = next(self._tags)
            analysis = Analysis(stop=lambda: self._stop_search(tag))
            running = _RunningSearch(tag, _Pending(), analysis, info)
            limits = limits_from(limit, multipv=multipv or 1, root_moves=root_moves, infinite_if_empty=True)
            self._start_search(Go(limits, board=board.copy(), multipv=limits.multipv, tag=tag), running)
            return analysis

    # -- helpers ----------------------------------------------------------------------------

    def _stop_search(self, tag: int) -> None:
        running = self._running
        if running is not None and running.tag == tag and not self._closed:
            self._submit(Stop())

    async def _await_answer(self, running: _RunningSearch) -> BestMove:
        try:
            return await running.answer.wait()
        except anyio.get_cancelled_exc_class():
            # The caller gave up: stop the search now, leave the engine ready for the next call.
            if self._running is running and not self._closed:
                self._submit(Cancel())
            raise

    async def _hit_or_drop_ponder(self, board: chess.Board, game: object) -> _RunningSearch | None:
        """The next `play` on the position pondered on is a hit: the same search goes on.
        Anything else ends the ponder search without a move."""
        running = self._running
        if running is not None and running.pondered is not None:
            pondered, pondered_game = running.pondered
            if game == pondered_game and board == pondered and board.move_stack == pondered.move_stack:
                running.pondered = None
                self._submit(PonderHit())
                return running
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
        running = _RunningSearch(next(self._tags), _Pending(), pondered=(ponder_board, game))
        self._start_search(Go(limits_from(limit), board=ponder_board, ponder=True, multipv=1, tag=running.tag),
                           running)


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


_GUARD_HINT = ("If your script creates the engine when it is imported, put that code under "
               "`if __name__ == \"__main__\":` (the search process imports your main module)")


def _start_background(function: Callable[[], Awaitable[None]]) -> object:
    """Run `function` beside the caller, for as long as it runs: the session of an engine
    opened with `await Engine().start()` has no task group to live in. An asyncio task (the
    engine keeps the reference asyncio does not), or a trio system task; `function` must never
    raise (it cancels itself through its own scope)."""
    trio = sys.modules.get("trio")
    if trio is not None:
        try:
            trio.lowlevel.current_task()
        except RuntimeError:
            pass
        else:
            return trio.lowlevel.spawn_system_task(function)
    import asyncio

    return asyncio.get_running_loop().create_task(_awaited(function))


async def _awaited(function: Callable[[], Awaitable[None]]) -> None:
    await function()

