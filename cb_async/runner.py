"""The search executor: one worker process that owns a `Searcher` and its hash table.

Why a process and not a thread: a pure-Python search holds the GIL, and a thread would delay
the event loop by up to the interpreter's switch interval each time it runs (5 ms; see
DESIGN.md's measurements). A worker process leaves the loop free: `isready` and `stop` are
answered in well under a millisecond and a host application's loop keeps ticking. The hash
table lives in the worker, so it persists between searches.

The control block is a small shared array the search polls through `SharedStopToken`: the id of
the highest stopped search, and the deadlines of one search id. A stop names its search, so a
stop can never leak into the next search, and a ponder hit writes its deadlines while the
search runs.
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import chess

from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.search.control import StopToken
from cb_async.search.settings import SearchSettings

if TYPE_CHECKING:
    import asyncio

_STOPPED_ID, _DEADLINE_ID, _SOFT, _HARD = range(4)


class WorkerDied(RuntimeError):
    """The search process ended unexpectedly; the runner starts a new one."""


class WorkerBroken(WorkerDied):
    """The search process keeps dying as soon as it starts: the runner gave up restarting it."""


#: A worker that dies this soon after its start, this many times in a row, is not restarted.
QUICK_DEATH_SECONDS = 2.0
QUICK_DEATHS_TO_GIVE_UP = 3


class SharedStopToken(StopToken):
    """A `StopToken` view of the shared control block for one search id."""

    __slots__ = ("_control", "_search_id")

    def __init__(self, control: Any, search_id: int) -> None:
        super().__init__()
        self._control = control
        self._search_id = search_id

    def set(self) -> None:
        stop_search(self._control, self._search_id)

    def set_deadlines(self, soft: float, hard: float) -> None:
        write_deadlines(self._control, self._search_id, soft, hard)

    def is_set(self) -> bool:
        return self._control[_STOPPED_ID] >= self._search_id

    @property
    def soft_deadline(self) -> float:
        control = self._control
        return control[_SOFT] if control[_DEADLINE_ID] == self._search_id else math.inf

    @property
    def hard_deadline(self) -> float:
        control = self._control
        return control[_HARD] if control[_DEADLINE_ID] == self._search_id else math.inf


def stop_search(control: Any, search_id: int) -> None:
    if control[_STOPPED_ID] < search_id:
        control[_STOPPED_ID] = search_id


def write_deadlines(control: Any, search_id: int, soft: float, hard: float) -> None:
    # Deadlines first, then the id that makes them visible to that search.
    control[_SOFT] = soft
    control[_HARD] = hard
    control[_DEADLINE_ID] = search_id


@dataclass(frozen=True, slots=True)
class SearchRequest:
    search_id: int
    board: chess.Board
    limits: Limits
    hash_mb: int
    #: Book, tablebases and strength level (the session's options for this search).
    settings: SearchSettings = SearchSettings()


def _worker_main(conn: multiprocessing.connection.Connection, host_end: Any, control: Any) -> None:
    """The worker process: receive a request, search, send infos and the result.

    (The host imports asyncio only after the fork, so the worker never loads it.)"""
    if host_end is not None:
        host_end.close()  # so that the host's death reads as end of input here
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # GUIs send SIGINT to XBoard engines
    _detach_stdio()
    from cb_async.search import Searcher, history_keys
    from cb_async.search.sources import MoveSources

    searcher = Searcher()
    sources = MoveSources(searcher)
    hash_mb = 16
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        kind = message[0]
        if kind == "search":
            request: SearchRequest = message[1]
            if request.hash_mb != hash_mb:
                hash_mb = request.hash_mb
                searcher.set_hash_size(hash_mb)
            search_id = request.search_id
            token = SharedStopToken(control, search_id)

            def on_info(info: SearchInfo, search_id: int = search_id) -> None:
                conn.send(("info", search_id, info))

            try:
                result = sources.search(request.board, history_keys(request.board), request.limits,
                                        request.settings, token, on_info)
            except Exception as error:  # a bug must not kill the worker: answer, say why
                conn.send(("error", search_id, f"{type(error).__name__}: {error}"))
                continue
            conn.send(("result", search_id, result))
        elif kind == "new_game":
            searcher.new_game()
            conn.send(("done", message[1]))
        elif kind == "quit":
            return


def _detach_stdio() -> None:
    """The worker must never write protocol: point its stdout at stderr, its stdin at nothing."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    except OSError:
        pass


def fallback_result(board: chess.Board) -> SearchResult:
    """A legal answer without a search: what a dead or failed worker still owes the GUI."""
    move = next(iter(board.legal_moves), None)
    if move is None:
        score = Score(mate=0) if board.is_check() else Score(cp=0)
        return SearchResult(None, None, score, 0, 0, 0, 0)
    return SearchResult(move, None, Score(cp=0), 0, 0, 0, 0, pv=(move,))


class SearchHandle:
    """One running search: its future, and the controls that act on it alone."""

    def __init__(self, runner: SearchRunner, search_id: int, board: chess.Board,
                 on_info: Callable[[SearchInfo], None] | None) -> None:
        self.search_id = search_id
        self.board = board
        self.on_info = on_info
        self.future: asyncio.Future[SearchResult] = runner.loop.create_future()
        self._runner = runner

    def stop(self) -> None:
        stop_search(self._runner.control, self.search_id)

    def set_deadlines(self, soft: float, hard: float) -> None:
        """Absolute `time.monotonic()` seconds (a ponder hit starts the clock)."""
        write_deadlines(self._runner.control, self.search_id, soft, hard)


class SearchRunner:
    """Starts searches in the worker process and resolves their futures on the event loop.

    One search at a time (the session sees to that). A thread blocks on the worker's pipe and
    hands each message to the loop with `call_soon_threadsafe`, so infos and results never
    block the loop, on every OS.
    """

    _ids = itertools.count(1)

    def __init__(self, context: multiprocessing.context.BaseContext | None = None) -> None:
        self._context = context or default_context()
        self.control: Any = self._context.RawArray("d", 4)
        self.control[_STOPPED_ID] = 0.0
        self.control[_DEADLINE_ID] = 0.0
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: multiprocessing.connection.Connection | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._active: SearchHandle | None = None
        self._pending_acks: dict[int, asyncio.Future[None]] = {}
        self._closed = False
        self.restarts = 0
        self._started_at = 0.0
        self._quick_deaths = 0
        self.broken = False

    # -- life cycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start the worker process. With `fork` this is cheap, and it is best done before the
        host starts threads of its own."""
        host_end, worker_end = self._context.Pipe(duplex=True)
        process = self._context.Process(
            target=_worker_main, args=(worker_end, host_end, self.control), name="cb-async-search", daemon=True
        )
        self._started_at = time.monotonic()
        process.start()
        worker_end.close()
        self._process = process
        self._conn = host_end
        if self._loop is not None:
            self._start_reader()

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bind to the event loop that awaits the searches; starts the pipe reader."""
        self._loop = loop
        if self._process is None:
            self.start()
        else:
            self._start_reader()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None, "attach() the runner to a loop first"
        return self._loop

    def _start_reader(self) -> None:
        conn, process = self._conn, self._process
        thread = threading.Thread(target=self._read, args=(conn, process), name="cb-async-results", daemon=True)
        thread.start()

    def _read(self, conn: multiprocessing.connection.Connection, process: Any) -> None:
        loop = self.loop
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                if not self._closed:
                    # Reap the dead worker here, off the loop: else each restart leaves a zombie.
                    process.join(1.0)
                    try:
                        loop.call_soon_threadsafe(self._worker_died, process)
                    except RuntimeError:
                        pass  # the loop is closed: the host is leaving
                return
            try:
                loop.call_soon_threadsafe(self._dispatch, message)
            except RuntimeError:
                return

    def close(self) -> None:
        """End the worker process. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._active is not None:
            self._active.stop()
        conn, process = self._conn, self._process
        if conn is not None:
            try:
                conn.send(("quit",))
            except (OSError, ValueError):
                pass
        if process is not None:
            process.join(0.5)
            if process.is_alive():
                process.terminate()
                process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join()
        if conn is not None:
            conn.close()

    # -- searches ---------------------------------------------------------------------------

    def begin(self, board: chess.Board, limits: Limits, *, hash_mb: int,
              settings: SearchSettings | None = None,
              deadlines: tuple[float, float] | None = None,
              on_info: Callable[[SearchInfo], None] | None = None) -> SearchHandle:
        """Start a search now; await `handle.future` for its result."""
        assert self._active is None or self._active.future.done(), "one search at a time"
        search_id = next(self._ids)
        handle = SearchHandle(self, search_id, board, on_info)
        if self.broken:
            handle.future.set_exception(WorkerBroken("the search process cannot be started"))
            return handle
        if deadlines is not None:
            write_deadlines(self.control, search_id, *deadlines)
        self._active = handle
        request = SearchRequest(search_id, board, limits, hash_mb, settings or SearchSettings())
        try:
            assert self._conn is not None
            self._conn.send(("search", request))
        except (OSError, ValueError):
            self._worker_died(self._process)
        return handle

    async def new_game(self) -> None:
        """Clear the hash and what searches keep between moves."""
        assert self._conn is not None
        ack_id = next(self._ids)
        future: asyncio.Future[None] = self.loop.create_future()
        self._pending_acks[ack_id] = future
        try:
            self._conn.send(("new_game", ack_id))
        except (OSError, ValueError):
            self._pending_acks.pop(ack_id, None)
            return
        await future

    # -- messages from the worker -----------------------------------------------------------

    def _dispatch(self, message: tuple[Any, ...]) -> None:
        kind = message[0]
        if kind == "done":
            future = self._pending_acks.pop(message[1], None)
            if future is not None and not future.done():
                future.set_result(None)
            return
        handle = self._active
        if handle is None or handle.search_id != message[1] or handle.future.done():
            return
        if kind == "info":
            if handle.on_info is not None:
                handle.on_info(message[2])
        elif kind == "result":
            self._active = None
            handle.future.set_result(message[2])
        elif kind == "error":
            self._active = None
            handle.future.set_exception(RuntimeError(f"search failed: {message[2]}"))

    def _worker_died(self, process: Any) -> None:
        if self._closed or process is not self._process:
            return
        handle, self._active = self._active, None
        for future in self._pending_acks.values():
            if not future.done():
                future.set_result(None)
        self._pending_acks.clear()
        if self._conn is not None:
            self._conn.close()
        quick = time.monotonic() - self._started_at < QUICK_DEATH_SECONDS
        self._quick_deaths = self._quick_deaths + 1 if quick else 0
        if self._quick_deaths >= QUICK_DEATHS_TO_GIVE_UP:
            self.broken = True
            error: WorkerDied = WorkerBroken("the search process dies as soon as it starts; not restarting it")
        else:
            self.restarts += 1
            self.start()
            error = WorkerDied("the search process ended unexpectedly")
        if handle is not None and not handle.future.done():
            handle.future.set_exception(error)


def default_context() -> multiprocessing.context.BaseContext:
    """`fork` where it is safe and fast (Linux): the worker starts in milliseconds with the
    modules already imported. Elsewhere `spawn`."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")
