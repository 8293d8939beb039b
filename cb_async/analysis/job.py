"""The job: reads the input, hands out batches, journals every answer, assembles the results.

One driver, many workers. The driver reads games or positions lazily, a window ahead of what
it has finished, and turns each into a batch of positions for one worker (a game's positions
stay together, as fishnet keeps them). A position already answered (in the journal from an
earlier run, or earlier in this run by another game) is not searched again; a position another
game is waiting for is searched once and shared. Each answer goes to the journal the moment it
arrives, then to every item waiting for it; an item whose positions are all answered is yielded.

The first game (in input order) that reaches a position owns its search, so which batch holds
which position does not depend on timing; since every search starts from an empty table
(`analyst`), the results do not depend on the number of workers, their speed, or interruptions.

A worker that dies gives its unfinished positions back to the queue, ahead of new work, and
the pool replaces it. A position that has killed `MAX_CRASHES` workers is given up, and so is
one whose engine answered with a `Failure` (a UCI engine that died on it twice): the items that
need it are reported as problems, nothing is journaled for it, and the job goes on.

The job runs its workers' loops in a task group of the caller's (anyio: asyncio or trio), the
one `async with Job(...) as job` opens; leaving that block ends the workers and the engines.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType

import anyio
import chess
import chess.pgn

from cb_async.analysis.inputs import count_items, game_input, position_input, read_items
from cb_async.analysis.engines import EngineSpec, reproducibility
from cb_async.analysis.journal import Journal
from cb_async.analysis.model import (
    Answer,
    Evaluation,
    Failure,
    GameAnalysis,
    GameInput,
    Item,
    PositionAnalysis,
    PositionInput,
    PositionTask,
    Problem,
    Result,
)
from cb_async.analysis.pool import Pool, Worker, WorkerLost
from cb_async.limits import Limits
from cb_async.version import __version__

#: The default budget per position: a node count, so that results do not depend on the machine.
DEFAULT_NODES = 20_000
#: A position that kills this many workers is given up.
MAX_CRASHES = 3

Source = str | os.PathLike[str] | Iterable[Item | Problem | chess.pgn.Game | chess.Board]


@dataclass(slots=True)
class Progress:
    """Counts for a progress bar: positions are counted per item (a shared one in each)."""

    done: int = 0
    searched: int = 0
    from_journal: int = 0
    shared: int = 0
    positions_read: int = 0
    items_read: int = 0
    items_total: int | None = None
    reading_done: bool = False
    #: Workers that died (their unfinished positions went back to the queue), and the
    #: replacements that came up (a job that ends first does not wait for one).
    workers_lost: int = 0
    workers_replaced: int = 0
    #: Positions given up (the engine died on them again and again): their items are problems.
    failed: int = 0

    @property
    def total(self) -> int | None:
        """Positions in the whole input: exact once it is all read, estimated before."""
        if self.reading_done:
            return self.positions_read
        if self.items_total is None or self.items_read == 0:
            return None
        return max(self.positions_read, round(self.positions_read / self.items_read * self.items_total))


@dataclass(eq=False, slots=True)
class _Open:
    """An item read and not yet finished: its positions and those still missing."""

    sequence: int
    item: Item
    keys: tuple[str, ...]
    missing: set[str] = field(default_factory=set)


def job_header(limits: Limits, engine: EngineSpec = EngineSpec(), name: str | None = None) -> dict[str, object]:
    """What a journal must match to be reused: the engine (its name and, for a UCI engine, the
    command and options) and the budget."""
    header: dict[str, object] = {"engine": name or f"cb-async {__version__}"}
    if engine.command is not None:
        header["command"] = engine.describe()
    return {**header, "nodes": limits.nodes, "depth": limits.depth, "movetime": limits.movetime,
            "multipv": limits.multipv}


class _Batches:
    """The batches waiting for a worker, retried ones first (anyio has no priority queue)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, tuple[PositionTask, ...]]] = []
        self._numbers = itertools.count()
        self._ready = anyio.Semaphore(0)

    def put(self, priority: int, batch: tuple[PositionTask, ...]) -> None:
        heapq.heappush(self._heap, (priority, next(self._numbers), batch))
        self._ready.release()

    async def get(self) -> tuple[PositionTask, ...]:
        await self._ready.acquire()
        return heapq.heappop(self._heap)[2]


class Job:
    """One analysis, run inside `async with Job(...) as job:` by `async for result in job.results()`.

    Entering starts the workers (their loops in a task group the caller's context owns), checks
    the engine (a command that cannot serve is a `PoolError` before any work) and opens the
    journal; leaving ends the workers, their engines and the journal.
    """

    def __init__(
        self,
        source: Source,
        limits: Limits | None = None,
        *,
        workers: int | None = None,
        cluster: str | None = None,
        journal: str | None = None,
        restart: bool = False,
        ordered: bool = False,
        on_progress: Callable[[Progress], None] | None = None,
        pool: Pool | None = None,
        engine: EngineSpec | None = None,
    ) -> None:
        self.limits = limits if limits is not None else Limits(nodes=DEFAULT_NODES)
        self.engine = engine if engine is not None else EngineSpec()
        #: The engine's own name (its UCI `id name`), known once the workers are up.
        self.engine_name: str | None = None
        #: Whether the output is a function of the input and the budget alone, and why (or why not).
        self.reproducible, self.reproducible_why = reproducibility(self.engine, self.limits)
        self.progress = Progress()
        self._source = source
        self._workers = workers
        self._cluster = cluster
        self._journal_path = journal
        self._journal: Journal | None = None
        self._restart = restart
        self._ordered = ordered
        self._on_progress = on_progress
        self.pool = pool
        self._known: dict[str, Evaluation] = {}
        self._failed: dict[str, str] = {}
        self._pending: set[str] = set()
        self._waiting: dict[str, list[_Open]] = {}
        self._crashes: dict[str, int] = {}
        self._journaled: set[str] = set()
        self._open = 0
        self._send, self._finished = anyio.create_memory_object_stream[tuple[int, Result] | BaseException](math.inf)
        self._queue = _Batches()
        self._stack: AsyncExitStack | None = None
        self._items: Iterator[Item | Problem] | None = None
        self._window = 16

    # -- the public loop ----------------------------------------------------------------------

    async def __aenter__(self) -> Job:
        stack = AsyncExitStack()
        await stack.__aenter__()
        stack.callback(self._send.close)
        stack.callback(self._finished.close)
        try:
            self._items = self._reader()  # raises InputError now, before any worker starts
            pool = self.pool if self.pool is not None else self._make_pool()
            self.pool = pool
            stack.push_async_callback(_shielded, pool.close)
            workers = await pool.start()
            self.engine_name = workers[0].engine if workers else None
            if self._journal_path is not None:
                self._journal = Journal(self._journal_path, job_header(self.limits, self.engine, self.engine_name))
                self._known.update(self._journal.open(self._restart))
                stack.callback(self._journal.close)
            self._journaled = set(self._known)
            group = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(group.cancel_scope.cancel)
            for worker in workers:
                group.start_soon(self._serve, pool, worker)
            self._window = max(16, 4 * len(workers))
        except BaseException as error:
            await stack.__aexit__(type(error), error, error.__traceback__)
            raise
        self._stack = stack
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        stack, self._stack = self._stack, None
        if stack is None:
            return
        try:
            await stack.__aexit__(kind, error, traceback)
        except BaseExceptionGroup as group:
            # The block's own error, wrapped by the task group on its way out: give it back as
            # it was raised (a `PoolError` stays a `PoolError`); the workers were only cancelled.
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise

    def results(self) -> AsyncIterator[Result]:
        """Every result: in completion order, or in input order with `ordered=True`.

        A plain iterator, not an async generator: leaving the loop early leaves nothing to
        finalize (trio warns about async generators dropped unfinished); leaving the `async with`
        ends the job.
        """
        if self._stack is None or self._items is None:
            raise RuntimeError("Job.results() runs inside `async with Job(...) as job:`")
        return _Results(self, self._items)

    async def _next(self, reader: Iterator[Item | Problem], held: dict[int, Result], cursor: list[int]) -> Result:
        """The next result to hand out (`cursor[0]` is the next input number when ordered)."""
        while True:
            if self._ordered and cursor[0] in held:
                self._open -= 1
                cursor[0] += 1
                return held.pop(cursor[0] - 1)
            self._read_ahead(reader, self._window)
            if (self.progress.reading_done and self._open == 0 and not held
                    and self._finished.statistics().current_buffer_used == 0):
                raise StopAsyncIteration
            message = await self._finished.receive()
            if isinstance(message, BaseException):
                raise message
            sequence, result = message
            if not self._ordered:
                self._open -= 1
                return result
            held[sequence] = result

    # -- reading ------------------------------------------------------------------------------

    def _reader(self) -> Iterator[Item | Problem]:
        source = self._source
        if isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            items = read_items(path)  # raises InputError now, before any worker starts
            try:
                self.progress.items_total = count_items(path)
            except OSError:
                pass
            return items
        return _convert(source)

    def _read_ahead(self, reader: Iterator[Item | Problem], window: int) -> None:
        progress = self.progress
        while not progress.reading_done and self._open < window:
            try:
                entry = next(reader)
            except StopIteration:
                progress.reading_done = True
                break
            sequence = progress.items_read
            progress.items_read += 1
            self._open += 1
            if isinstance(entry, Problem):
                self._send.send_nowait((sequence, entry))
                continue
            tasks = entry.positions if isinstance(entry, GameInput) else (entry.position,)
            progress.positions_read += len(tasks)
            opened = _Open(sequence, entry, tuple(task.key for task in tasks))
            batch: list[PositionTask] = []
            for task in tasks:
                key = task.key
                if key in self._known:
                    progress.done += 1
                    if key in self._journaled:
                        progress.from_journal += 1
                    else:
                        progress.shared += 1
                    continue
                if key in self._failed:
                    continue
                if key not in opened.missing:
                    self._waiting.setdefault(key, []).append(opened)
                opened.missing.add(key)
                if key in self._pending:
                    progress.shared += 1  # another item (or this one) has it searched already
                else:
                    self._pending.add(key)
                    batch.append(task)
            if batch:
                self._queue.put(1, tuple(batch))
            if not opened.missing:
                self._complete(opened)
        self._report()

    # -- the workers' side --------------------------------------------------------------------

    async def _serve(self, pool: Pool, worker: Worker) -> None:
        """One worker's loop: take a batch, evaluate it; on a death give the rest back."""
        try:
            while True:
                batch = await self._queue.get()
                try:
                    await worker.evaluate(batch, self.limits, self._evaluated)
                except WorkerLost as lost:
                    self.progress.workers_lost += 1
                    self._requeue(batch[lost.finished:], str(lost))
                    worker = await pool.replace(worker)
                    self.progress.workers_replaced += 1
        except Exception as error:  # noqa: BLE001 - a pool that cannot go on: results() raises it
            self._send.send_nowait(error)

    def _requeue(self, rest: Sequence[PositionTask], reason: str) -> None:
        rest = [task for task in rest if task.key not in self._known]
        if not rest:
            return
        victim = rest[0].key
        self._crashes[victim] = self._crashes.get(victim, 0) + 1
        if self._crashes[victim] >= MAX_CRASHES:
            self._give_up(victim, f"the engine died {MAX_CRASHES} times on position {rest[0].fen} ({reason})")
            rest = rest[1:]
        if rest:
            self._queue.put(0, tuple(rest))

    def _evaluated(self, answer: Answer) -> None:
        if isinstance(answer, Failure):
            if answer.key not in self._known and answer.key not in self._failed:
                self._give_up(answer.key, answer.reason)
            return
        evaluation = answer
        key = evaluation.key
        if key in self._known:
            return
        if self._journal is not None:
            self._journal.append(evaluation)
        self._known[key] = evaluation
        self._pending.discard(key)
        self.progress.searched += 1
        for opened in self._waiting.pop(key, ()):
            self.progress.done += opened.keys.count(key)
            opened.missing.discard(key)
            if not opened.missing:
                self._complete(opened)
        self._report()

    def _give_up(self, key: str, reason: str) -> None:
        self._failed[key] = reason
        self._pending.discard(key)
        self.progress.failed += 1
        for opened in self._waiting.pop(key, ()):
            opened.missing.discard(key)
            if not opened.missing:
                self._complete(opened)
        self._report()

    # -- results ------------------------------------------------------------------------------

    def _complete(self, opened: _Open) -> None:
        item = opened.item
        failed = next((self._failed[key] for key in opened.keys if key in self._failed), None)
        result: Result
        if failed is not None:
            file = os.fspath(self._source) if isinstance(self._source, (str, os.PathLike)) else "<input>"
            result = Problem(file, item.number, "game" if isinstance(item, GameInput) else "line", failed)
        elif isinstance(item, GameInput):
            result = GameAnalysis(item, tuple(self._known[key] for key in opened.keys))
        else:
            result = PositionAnalysis(item, self._known[opened.keys[0]])
        self._send.send_nowait((opened.sequence, result))

    def _report(self) -> None:
        if self._on_progress is not None:
            self._on_progress(self.progress)

    def _make_pool(self) -> Pool:
        if self._cluster is None:
            from cb_async.analysis.local import LocalPool

            return LocalPool(self._workers, self.engine)
        from cb_async.analysis.ray_pool import RayPool

        return RayPool(self._cluster, self._workers, self.engine)


class _Results:
    """`Job.results()`: each `__anext__` waits for the next result."""

    def __init__(self, job: Job, reader: Iterator[Item | Problem]) -> None:
        self._job = job
        self._reader = reader
        self._held: dict[int, Result] = {}
        self._cursor = [0]

    def __aiter__(self) -> _Results:
        return self

    async def __anext__(self) -> Result:
        return await self._job._next(self._reader, self._held, self._cursor)


async def _shielded(close: Callable[[], Awaitable[None]]) -> None:
    """End the pool even when the job is being cancelled (its engines must not outlive it)."""
    with anyio.CancelScope(shield=True):
        await close()


def _convert(source: Iterable[Item | Problem | chess.pgn.Game | chess.Board]) -> Iterator[Item | Problem]:
    """Library sources: parsed games and boards become items, numbered from 1."""
    for number, entry in enumerate(source, start=1):
        if isinstance(entry, chess.pgn.Game):
            yield game_input("<games>", number, entry)
        elif isinstance(entry, chess.Board):
            yield position_input("<positions>", number, entry.fen())
        else:
            yield entry


@asynccontextmanager
async def analyse(
    source: Source,
    limits: Limits | None = None,
    *,
    workers: int | None = None,
    cluster: str | None = None,
    journal: str | None = None,
    restart: bool = False,
    ordered: bool = False,
    on_progress: Callable[[Progress], None] | None = None,
    engine: EngineSpec | None = None,
) -> AsyncIterator[AsyncIterator[Result]]:
    """Analyse every game or position of `source`: `async with analyse(...) as results:` then
    `async for result in results:`, each result as it completes.

    `source` is a PGN, EPD or FEN file, or an iterable of `chess.pgn.Game` / `chess.Board`.
    `limits` is the budget per position (default: `DEFAULT_NODES` nodes). `workers` engines run
    in local processes (default: one per core), or on a Ray cluster with `cluster="auto"`,
    `"ray://host:port"` or `"local"`; `engine` chooses them (default: cb-async's own search;
    `EngineSpec.parse("stockfish", ["Threads=1"])` for a UCI engine). With `journal`, every
    finished position is recorded there and a later call with the same journal resumes without
    searching anything twice. Results come in completion order, or in input order with
    `ordered=True`. The workers run in a task group of the calling task (asyncio or trio) and
    end when the block is left.
    """
    async with Job(source, limits, workers=workers, cluster=cluster, journal=journal, restart=restart,
                   ordered=ordered, on_progress=on_progress, engine=engine) as job:
        yield job.results()
