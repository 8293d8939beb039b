"""The search executor, host side: one worker process that owns a `Searcher` and its hash table.

Why a process and not a thread: a pure-Python search holds the GIL, and a thread would delay
the event loop by up to the interpreter's switch interval each time it runs (5 ms; see
docs/architecture.md, "Why the search runs in a worker process"). A worker process leaves the
loop free: `isready` and `stop` are answered in well under a millisecond and a host
application's loop keeps ticking. The hash table lives in the worker, so it persists between
searches. The worker's side, its messages and the shared stop block are `cb_async.search.worker`.

The session sees the runner through the `SearchRunner` protocol (tests give it a scripted
runner, `tests/fake_runner.py`); `ProcessRunner` is the real one. Results come back on the
event loop of whichever anyio backend runs the session (asyncio or trio): a thread blocks on
the worker's pipe and hands each reply to the loop, so replies never block it, on every OS.

Light on purpose, like `cb_async.search.worker`: the daemon forks the worker before it loads
python-chess, so that both processes load in parallel.
"""

from __future__ import annotations

import itertools
import multiprocessing
import multiprocessing.connection
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from cb_async.lazy_smp_helpers import HelperPool
from cb_async.search.worker import (
    CONTROL_SLOTS, DEADLINE_ID, STOPPED_ID, DoneReply, FailedReply, InfoReply, NewGameRequest, ReadyReply,
    Reply, ResultReply, SearchRequest, end_worker, stop_search, worker_main, write_deadlines,
)

if TYPE_CHECKING:
    import anyio.lowlevel
    import chess

    from cb_async.limits import Limits
    from cb_async.results import SearchInfo, SearchResult
    from cb_async.search.settings import SearchSettings


class WorkerDied(RuntimeError):
    """The search process ended unexpectedly; the runner starts a new one."""


class WorkerAbandoned(WorkerDied):
    """The search process did not answer in time and was replaced."""


class WorkerBroken(WorkerDied):
    """The search process keeps dying as soon as it starts: the runner gave up restarting it."""


class SearchFailed(RuntimeError):
    """The search raised an exception in the worker (a bug); the worker goes on."""


#: How long a worker may take to load and warm up before it counts as stuck: about 0.1 s on an
#: idle machine, 0.9 s at load average 13 on 2 cores.
WARM_UP_LIMIT = 10.0
#: How long a worker may take to clear its table before it counts as stalled and is replaced:
#: clearing the largest table (Hash 4096, 16M slots) takes about 50 ms.
CLEAR_GRACE = 1.0
#: A worker that dies this soon after its start, this many times in a row, is not restarted.
QUICK_DEATH_SECONDS = 2.0
QUICK_DEATHS_TO_GIVE_UP = 3


class SearchHandle(Protocol):
    """One running search, as the session drives it."""

    @property
    def search_id(self) -> int: ...

    def stop(self) -> None:
        """Ask the search to end now; its result still comes."""

    def set_deadlines(self, soft: float, hard: float) -> None:
        """Absolute `time.monotonic()` seconds (a ponder hit starts the clock)."""

    async def result(self) -> SearchResult:
        """The search's result once it has ended; `WorkerDied` or `SearchFailed` if it could not."""
        ...

    @property
    def ended(self) -> bool:
        """The search has ended: `result_nowait` has its outcome."""
        ...

    def result_nowait(self) -> SearchResult:
        """The result of a search that has ended (raises as `result` does)."""
        ...

    def abandon(self) -> None:
        """The search's worker did not answer in time (stalled): end that worker now, whatever
        it is doing, and start another for the next search. The search ends without a result
        and its worker can never answer it."""


class SearchRunner(Protocol):
    """Where searches run. One search at a time: the session sees to that."""

    def begin(self, board: chess.Board, limits: Limits, *, hash_mb: int, settings: SearchSettings,
              deadlines: tuple[float, float] | None, on_info: Callable[[SearchInfo], None],
              on_end: Callable[[int], None]) -> SearchHandle:
        """Start a search now. `on_info` is called with each iteration and `on_end(search_id)`
        once when the search has ended (by itself, stopped, or failed), both on the event loop."""
        ...

    async def new_game(self) -> None:
        """Clear the hash table and what searches keep between moves."""

    async def wait_ready(self) -> None:
        """Until the searches can start at full speed (the worker has loaded and warmed up);
        `WorkerDied` if the worker could not start at all."""


class _RunningSearch:
    """The `SearchHandle` of `ProcessRunner`: one search id and its outcome, set once."""

    def __init__(self, runner: ProcessRunner, search_id: int, on_info: Callable[[SearchInfo], None],
                 on_end: Callable[[int], None]) -> None:
        import anyio

        self.search_id = search_id
        self.on_info = on_info
        self._on_end = on_end
        self._runner = runner
        self._ended = anyio.Event()
        self._result: SearchResult | None = None
        self._error: Exception | None = None

    def stop(self) -> None:
        stop_search(self._runner.control, self.search_id)

    def set_deadlines(self, soft: float, hard: float) -> None:
        write_deadlines(self._runner.control, self.search_id, soft, hard)

    async def result(self) -> SearchResult:
        await self._ended.wait()
        return self.result_nowait()

    def result_nowait(self) -> SearchResult:
        assert self._ended.is_set(), "the search has not ended"
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def abandon(self) -> None:
        self._runner.abandon(self)

    @property
    def ended(self) -> bool:
        return self._ended.is_set()

    def end(self, result: SearchResult | None = None, error: Exception | None = None) -> None:
        if self._ended.is_set():
            return
        self._result, self._error = result, error
        self._ended.set()
        self._on_end(self.search_id)


class ProcessRunner:
    """Runs searches in a worker process and ends their handles on the event loop.

    `start()` the process (with `fork`, before the host starts threads of its own), then
    `attach()` it from inside the event loop that awaits the searches. A worker that dies is
    started again with `restart_context`: by then the host has threads, so never with `fork`.
    """

    _ids = itertools.count(1)

    def __init__(self, context: multiprocessing.context.BaseContext | None = None, *,
                 restart_context: multiprocessing.context.BaseContext | None = None) -> None:
        self._context: Any = context or default_context()  # a concrete context: BaseContext lacks Process
        self._restart_context = restart_context or library_context()
        self.control: Any = self._context.RawArray("d", CONTROL_SLOTS)
        self.control[STOPPED_ID] = 0.0
        self.control[DEADLINE_ID] = 0.0
        self._process: multiprocessing.process.BaseProcess | None = None
        self._conn: multiprocessing.connection.Connection | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._ready: anyio.Event | None = None
        self._reader: threading.Thread | None = None
        self._start_error: WorkerDied | None = None
        self._active: _RunningSearch | None = None
        #: The Lazy SMP helpers and their shared table, from the first search with Threads > 1.
        self._pool: HelperPool | None = None
        self._pending_acks: dict[int, Any] = {}
        #: The worker has started but not yet said it is ready (it loads and warms up the search).
        self._warming = False
        #: The thread starting a replacement worker, and what waits to be sent to it.
        self._starting: threading.Thread | None = None
        self._queued: list[SearchRequest | NewGameRequest] = []
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
            target=worker_main, args=(worker_end, host_end, self.control), name="cb-async-search", daemon=True
        )
        self._started_at = time.monotonic()
        self._warming = True
        process.start()
        worker_end.close()
        self._process = process
        self._conn = host_end
        if self._token is not None:
            self._start_reader()

    def _restart(self) -> None:
        """Start the next worker on a thread of its own: the first forkserver start loads the
        search, and the loop must not wait for it (the answer of an abandoned search goes out
        meanwhile). Requests sent until it is there wait for it, in order."""
        self.restarts += 1
        self._context = self._restart_context
        self._process = self._conn = None
        self._starting = threading.Thread(target=self._start_on_thread, name="cb-async-restart", daemon=True)
        self._starting.start()

    def _start_on_thread(self) -> None:
        host_end = process = None
        try:
            host_end, worker_end = self._context.Pipe(duplex=True)
            process = self._context.Process(
                target=worker_main, args=(worker_end, host_end, self.control), name="cb-async-search", daemon=True
            )
            process.start()
            worker_end.close()
        except Exception:  # the same as a worker that died at once: counted as a quick death
            host_end = process = None
        if self._closed or not self._to_loop(self._started, (host_end, process)):
            end_worker(host_end, process)
            if host_end is not None:
                host_end.close()

    def _started(self, started: tuple[Any, Any]) -> None:
        host_end, process = started
        self._starting = None
        self._started_at = time.monotonic()
        self._warming = True
        if process is None:
            self._worker_died(None)
            return
        self._process, self._conn = process, host_end
        self._start_reader()
        queued, self._queued = self._queued, []
        for message in queued:
            self._send(message)

    def _send(self, message: SearchRequest | NewGameRequest) -> bool:
        """Send to the worker, or keep it for the worker being started; False if the pipe broke."""
        if self._starting is not None:
            self._queued.append(message)
            return True
        try:
            assert self._conn is not None
            self._conn.send(message)
        except (OSError, ValueError):
            return False
        return True

    async def attach(self) -> None:
        """Bind to the running event loop (asyncio or trio); starts the pipe reader."""
        import anyio
        import anyio.lowlevel

        self._token = anyio.lowlevel.current_token()
        self._ready = anyio.Event()
        if self._process is None:
            self.start()
        else:
            self._start_reader()

    async def wait_ready(self) -> None:
        """Until the worker has loaded and warmed up the search; `WorkerDied` if it died first
        (it could not start at all)."""
        assert self._ready is not None, "attach() the runner first"
        await self._ready.wait()
        if self._start_error is not None:
            raise self._start_error

    def _start_reader(self) -> None:
        thread = threading.Thread(target=self._read, args=(self._conn, self._process), name="cb-async-results",
                                  daemon=True)
        thread.start()
        self._reader = thread

    def _read(self, conn: multiprocessing.connection.Connection, process: Any) -> None:
        while True:
            try:
                reply: Reply = conn.recv()
            except (EOFError, OSError, TypeError):  # TypeError: 3.13 reads a closed handle so
                if not self._closed:
                    # Reap the dead worker here, off the loop: else each restart leaves a zombie.
                    process.join(1.0)
                    self._to_loop(self._worker_died, process)
                    if process is not self._process:  # abandoned: its pipe is this reader's to free
                        conn.close()
                return
            if process is not self._process:
                continue  # an abandoned worker's late words: never delivered
            if not self._to_loop(self._dispatch, reply):
                return

    def _to_loop(self, function: Callable[[Any], None], argument: Any) -> bool:
        """Run `function(argument)` on the event loop; False once the loop has gone."""
        import anyio.from_thread

        try:
            anyio.from_thread.run_sync(function, argument, token=self._token)
        except Exception:
            return False  # the loop is closed: the host is leaving
        return True

    def close(self) -> None:
        """End the worker process and free its pipe and descriptors. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self._active is not None:
            self._active.stop()
        if self._pool is not None:
            self._pool.close()
        if self._starting is not None:
            self._starting.join(2.0)  # it ends the worker it started itself, seeing `_closed`
        conn = self._conn
        end_worker(conn, self._process)
        if self._reader is not None:
            self._reader.join(1.0)  # it reads the end of the pipe now that the worker is gone
        if conn is not None:
            conn.close()

    # -- searches ---------------------------------------------------------------------------

    def begin(self, board: chess.Board, limits: Limits, *, hash_mb: int, settings: SearchSettings,
              deadlines: tuple[float, float] | None, on_info: Callable[[SearchInfo], None],
              on_end: Callable[[int], None]) -> _RunningSearch:
        assert self._active is None or self._active.ended, "one search at a time"
        search = _RunningSearch(self, next(self._ids), on_info, on_end)
        if self.broken:
            search.end(error=WorkerBroken("the search process cannot be started"))
            return search
        if deadlines is not None:
            write_deadlines(self.control, search.search_id, *deadlines)
        self._active = search
        pool = self._pool
        if pool is None and settings.threads > 1:
            pool = self._pool = HelperPool(self._restart_context, self.control, self._to_loop)
        table = pool.table_for(settings.threads, hash_mb) if pool is not None else None
        request = SearchRequest(search.search_id, board, limits, hash_mb, settings, table=table)
        if not self._send(request):
            self._worker_died(self._process)
            return search
        if pool is not None:
            pool.search(request, settings.threads - 1 if table is not None else 0)
        return search

    async def wait_helpers(self) -> int:
        """Until the Lazy SMP helpers started for the searches so far are ready to join the
        next search (they start with the first search that asks for Threads > 1); how many."""
        return await self._pool.wait_ready() if self._pool is not None else 0

    async def new_game(self) -> None:
        import anyio

        ack_id = next(self._ids)
        done = anyio.Event()
        self._pending_acks[ack_id] = done
        if not self._send(NewGameRequest(ack_id)):
            self._pending_acks.pop(ack_id, None)
            return
        with anyio.move_on_after(CLEAR_GRACE):
            await done.wait()
        if not done.is_set() and self._starting is None:  # stalled: a new worker starts clear
            self._replace_worker()
        if self._pool is not None:
            await self._pool.new_game()

    # -- replies from the worker, on the loop -----------------------------------------------

    def _dispatch(self, reply: Reply) -> None:
        match reply:
            case ReadyReply():
                self._warming = False
                if self._ready is not None:
                    self._ready.set()
            case DoneReply(ack_id=ack_id):
                done = self._pending_acks.pop(ack_id, None)
                if done is not None:
                    done.set()
            case InfoReply(search_id=search_id, info=info):
                search = self._running(search_id)
                if search is not None:
                    search.on_info(info)
            case ResultReply(search_id=search_id, result=result):
                search = self._running(search_id)
                if search is not None:
                    self._active = None
                    self._stop_helpers(search_id)
                    search.end(result)
            case FailedReply(search_id=search_id, error=error):
                search = self._running(search_id)
                if search is not None:
                    self._active = None
                    self._stop_helpers(search_id)
                    search.end(error=SearchFailed(f"search failed: {error}"))

    def _stop_helpers(self, search_id: int) -> None:
        """The main search has answered: its helpers stop too (they would search on forever)."""
        if self._pool is not None:
            stop_search(self.control, search_id)

    def _running(self, search_id: int) -> _RunningSearch | None:
        """The search a reply is about, unless it has already ended (a late info)."""
        search = self._active
        if search is None or search.search_id != search_id or search.ended:
            return None
        return search

    def abandon(self, search: _RunningSearch) -> None:
        """End the worker of `search` now (SIGKILL: a stopped process ends too) and start a new
        one; its reader then sees the pipe close and frees what the old one held. A search still
        waiting for a worker being started is only taken out of its queue, and one sent to a
        worker still loading is stopped before it begins: replacing a worker that is slow to
        start (a loaded machine) with another would only start the wait over."""
        if self._closed or search is not self._active or search.ended:
            return
        self._active = None
        self._stop_helpers(search.search_id)
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        if self._starting is not None:  # its worker is not there yet: the search never reaches it
            self._queued = [message for message in self._queued
                            if not (isinstance(message, SearchRequest) and message.search_id == search.search_id)]
        elif self._warming and time.monotonic() - self._started_at < WARM_UP_LIMIT:
            # late because it is still loading, not stalled: it skips the search
            stop_search(self.control, search.search_id)
        else:
            self._replace_worker()
        search.end(error=WorkerAbandoned("the search process did not answer in time and was replaced"))

    def _replace_worker(self) -> None:
        """End the worker at once (SIGKILL: a stopped process ends too) and start another."""
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        if self._process is not None:
            self._process.kill()
        self._restart()

    def _worker_died(self, process: Any) -> None:
        if self._closed:
            return
        if process is not self._process:  # an abandoned worker, now gone
            process.join(1.0)
            if process.exitcode is not None:
                process.close()
            return
        search, self._active = self._active, None
        if search is not None:
            self._stop_helpers(search.search_id)
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        if self._conn is not None:
            self._conn.close()
        quick = time.monotonic() - self._started_at < QUICK_DEATH_SECONDS
        self._quick_deaths = self._quick_deaths + 1 if quick else 0
        if self._quick_deaths >= QUICK_DEATHS_TO_GIVE_UP:
            self.broken = True
            error: WorkerDied = WorkerBroken("the search process dies as soon as it starts; not restarting it")
        else:
            self._restart()
            error = WorkerDied("the search process ended unexpectedly")
        if search is not None:
            search.end(error=error)
        exit_status = process.exitcode if process is not None else None
        if self._ready is not None and not self._ready.is_set():
            self._start_error = WorkerDied(f"the search process could not start (exit status {exit_status})")
            self._ready.set()
        if process is not None and exit_status is not None:
            process.close()


def default_context() -> multiprocessing.context.BaseContext:
    """`fork` where it is safe and fast (Linux): the worker starts in milliseconds with the
    modules already imported. Elsewhere `spawn`."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


#: Names a start method for the embedded library's workers instead of the platform's choice
#: (the tests run the library under `spawn` on Linux, as macOS and Windows do).
START_METHOD_VARIABLE = "CB_ASYNC_START_METHOD"


def library_context() -> multiprocessing.context.BaseContext:
    """The worker's start method inside a host application, which may run threads of its own:
    never `fork` it (a lock held by another thread at that moment would stay held forever in
    the worker). `forkserver` on Linux: its server starts once, from a process without threads,
    and every later worker forks from it. Elsewhere `spawn`, the platform's own default."""
    wanted = os.environ.get(START_METHOD_VARIABLE)
    if wanted:
        if wanted not in multiprocessing.get_all_start_methods():
            raise ValueError(f"{START_METHOD_VARIABLE}={wanted}: not a start method here "
                             f"(one of {', '.join(multiprocessing.get_all_start_methods())})")
        return multiprocessing.get_context(wanted)
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        _preload_in_forkserver(context)
        return context
    return multiprocessing.get_context("spawn")


#: What the forkserver loads once, so that each worker it forks starts with the search loaded.
WORKER_MODULES = ("cb_async.search.sources",)


def _preload_in_forkserver(context: Any) -> None:
    """Add the search to the modules the forkserver loads when it starts (it starts once, on the
    first worker), keeping whatever the host asked for. A server already running is left as
    it is; its workers then load the search themselves."""
    from multiprocessing import forkserver

    wanted = list(getattr(forkserver._forkserver, "_preload_modules", []))  # the host's own choice
    wanted += [name for name in WORKER_MODULES if name not in wanted]
    context.set_forkserver_preload(wanted)
