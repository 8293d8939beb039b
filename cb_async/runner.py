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
import multiprocessing.context
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from cb_async.lazy_smp_helpers import HelperPool
from cb_async.search.eval_file import DEFAULT_EVAL_FILE
from cb_async.search.worker import (
    CONTROL_SLOTS, DEADLINE_ID, STOPPED_ID, DoneReply, FailedReply, InfoReply, NewGameRequest, PrepareRequest,
    QuitRequest, ReadyReply, Reply, ResultReply, SearchRequest, stop_search, worker_main, write_deadlines,
)
from cb_async.worker_process import (
    START_METHOD_VARIABLE, QuickDeaths, WorkerProcess, default_context, start_context,
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
#: How long setting `EvalFile` waits for the worker to build the net, in seconds.
PREPARE_GRACE = 5.0


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

    def abandon(self) -> bool:
        """The search's worker did not answer in time (stalled): end that worker now, whatever
        it is doing, and start another for the next search. The search ends without a result
        and its worker can never answer it. False when the worker was kept: it was still
        starting (loading the search), not stalled, and skips this search instead."""


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

    async def prepare(self, eval_file: str) -> None:
        """Until the worker has built the net of `eval_file` (the `EvalFile` option): what a
        search would otherwise do in its own time."""


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

    def abandon(self) -> bool:
        return self._runner.abandon(self)

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
    The process itself (start, pipe, reader, ending, orphan watch) is a `WorkerProcess`.
    """

    _ids = itertools.count(1)

    def __init__(self, context: multiprocessing.context.BaseContext | None = None, *,
                 restart_context: multiprocessing.context.BaseContext | None = None) -> None:
        self._context: Any = context or default_context()  # a concrete context: BaseContext lacks RawArray
        self._restart_context = restart_context or library_context()
        self.control: Any = self._context.RawArray("d", CONTROL_SLOTS)
        self.control[STOPPED_ID] = 0.0
        self.control[DEADLINE_ID] = 0.0
        self._worker: WorkerProcess | None = None
        self._token: anyio.lowlevel.EventLoopToken | None = None
        self._ready: anyio.Event | None = None
        self._start_error: WorkerDied | None = None
        self._active: _RunningSearch | None = None
        #: The Lazy SMP helpers and their shared table, from the first search with Threads > 1.
        self._pool: HelperPool | None = None
        self._pending_acks: dict[int, Any] = {}
        #: The worker has started but not yet said it is ready (it loads and warms up the search).
        self._warming = False
        #: The thread starting a replacement worker, and what waits to be sent to it.
        self._starting: threading.Thread | None = None
        self._queued: list[SearchRequest | NewGameRequest | PrepareRequest] = []
        #: The `EvalFile` the worker was last told to prepare: a new worker builds its net first.
        self._eval_file = DEFAULT_EVAL_FILE
        self._closed = False
        self.restarts = 0
        self._deaths = QuickDeaths()
        self.broken = False

    @property
    def _process(self) -> Any:
        """The current worker's process object (None while one is being started)."""
        return self._worker.process if self._worker is not None else None

    # -- life cycle -------------------------------------------------------------------------

    def _new_worker(self, context: Any) -> WorkerProcess:
        # A replacement builds the net in its warm-up too, not in the first search it is sent.
        return WorkerProcess(context, worker_main, (self.control, self._eval_file), "cb-async-search")

    def start(self) -> None:
        """Start the worker process. With `fork` this is cheap, and it is best done before the
        host starts threads of its own."""
        worker = self._new_worker(self._context)
        worker.start()
        self._worker = worker
        self._warming = True
        if self._token is not None:
            self._read(worker)

    def _restart(self) -> None:
        """Start the next worker on a thread of its own: the first forkserver start loads the
        search, and the loop must not wait for it (the answer of an abandoned search goes out
        meanwhile). Requests sent until it is there wait for it, in order."""
        self.restarts += 1
        self._context = self._restart_context
        self._worker = None
        self._starting = threading.Thread(target=self._start_on_thread, name="cb-async-restart", daemon=True)
        self._starting.start()

    def _start_on_thread(self) -> None:
        worker: WorkerProcess | None = self._new_worker(self._context)
        assert worker is not None
        try:
            worker.start()
        except Exception:  # the same as a worker that died at once: counted as a quick death
            worker.release()
            worker = None
        if self._closed or not self._to_loop(self._started, worker):
            if worker is not None:
                worker.end(QuitRequest())

    def _started(self, worker: WorkerProcess | None) -> None:
        self._starting = None
        if worker is None:
            self._worker_died(None)
            return
        self._worker = worker
        self._warming = True
        self._read(worker)
        queued, self._queued = self._queued, []
        for message in queued:
            self._send(message)

    def _send(self, message: SearchRequest | NewGameRequest | PrepareRequest) -> bool:
        """Send to the worker, or keep it for the worker being started; False if the pipe broke."""
        if self._starting is not None:
            self._queued.append(message)
            return True
        return self._worker is not None and self._worker.send(message)

    async def attach(self) -> None:
        """Bind to the running event loop (asyncio or trio); starts the pipe reader."""
        import anyio
        import anyio.lowlevel

        self._token = anyio.lowlevel.current_token()
        self._ready = anyio.Event()
        if self._worker is None:
            self.start()
        else:
            self._read(self._worker)

    async def wait_ready(self) -> None:
        """Until the worker has loaded and warmed up the search; `WorkerDied` if it died first
        (it could not start at all)."""
        assert self._ready is not None, "attach() the runner first"
        await self._ready.wait()
        if self._start_error is not None:
            raise self._start_error

    def _read(self, worker: WorkerProcess) -> None:
        def deliver(reply: Reply) -> bool:
            if worker is not self._worker:
                return True  # an abandoned worker's late words: never delivered
            return self._to_loop(self._dispatch, reply)

        def gone() -> None:
            if not self._closed:
                self._to_loop(self._worker_died, worker)

        worker.read(deliver, gone)

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
        if self._worker is not None:
            self._worker.end(QuitRequest())

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
            self._worker_died(self._worker)
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

    async def prepare(self, eval_file: str) -> None:
        import anyio

        if eval_file == self._eval_file:
            return
        self._eval_file = eval_file
        ack_id = next(self._ids)
        done = anyio.Event()
        self._pending_acks[ack_id] = done
        if not self._send(PrepareRequest(ack_id, eval_file)):
            self._pending_acks.pop(ack_id, None)
            return
        # A net takes a fraction of a second to build; past the grace the next search waits in
        # the worker's queue behind it, as it would have anyway.
        with anyio.move_on_after(PREPARE_GRACE):
            await done.wait()
        if self._pool is not None:
            await self._pool.prepare(eval_file)

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

    def abandon(self, search: _RunningSearch) -> bool:
        """End the worker of `search` now (SIGKILL: a stopped process ends too) and start a new
        one; its reader then sees the pipe close and frees what the old one held. A search still
        waiting for a worker being started is only taken out of its queue, and one sent to a
        worker still loading is stopped before it begins: replacing a worker that is slow to
        start (a loaded machine) with another would only start the wait over."""
        if self._closed or search is not self._active or search.ended:
            return False
        self._active = None
        self._stop_helpers(search.search_id)
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        replaced = False
        if self._starting is not None:  # its worker is not there yet: the search never reaches it
            self._queued = [message for message in self._queued
                            if not (isinstance(message, SearchRequest) and message.search_id == search.search_id)]
        elif self._warming and self._worker is not None and time.monotonic() - self._worker.started_at < WARM_UP_LIMIT:
            # late because it is still loading, not stalled: it skips the search
            stop_search(self.control, search.search_id)
        else:
            self._replace_worker()
            replaced = True
        search.end(error=WorkerAbandoned("the search process did not answer in time"))
        return replaced

    def _replace_worker(self) -> None:
        """End the worker at once (SIGKILL: a stopped process ends too) and start another; the
        old one's reader sees its pipe close and frees what it held."""
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        if self._worker is not None:
            self._worker.kill()
        self._restart()

    def _worker_died(self, worker: WorkerProcess | None) -> None:
        if self._closed:
            return
        if worker is not None and worker is not self._worker:  # an abandoned worker, now gone
            worker.release()
            return
        search, self._active = self._active, None
        if search is not None:
            self._stop_helpers(search.search_id)
        for done in self._pending_acks.values():
            done.set()
        self._pending_acks.clear()
        exit_status = worker.process.exitcode if worker is not None and worker.process is not None else None
        started_at = worker.started_at if worker is not None else time.monotonic()
        if worker is not None:
            worker.release()
        if self._deaths.died(started_at):
            self.broken = True
            self._worker = None
            error: WorkerDied = WorkerBroken("the search process dies as soon as it starts; not restarting it")
        else:
            self._restart()
            error = WorkerDied("the search process ended unexpectedly")
        if search is not None:
            search.end(error=error)
        if self._ready is not None and not self._ready.is_set():
            self._start_error = WorkerDied(f"the search process could not start (exit status {exit_status})")
            self._ready.set()


#: The start methods, named as the library has always named them (`cb_async.worker_process`).
library_context = start_context
__all__ = ["default_context", "library_context", "START_METHOD_VARIABLE"]
