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
the pool replaces it. A position that has killed `MAX_CRASHES` workers is given up: the items
that need it are reported as problems, and the job goes on.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import chess
import chess.pgn

from cb_async.analysis.inputs import count_items, game_input, position_input, read_items
from cb_async.analysis.journal import Journal
from cb_async.analysis.model import (
    Evaluation,
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


def job_header(limits: Limits) -> dict[str, object]:
    """What a journal must match to be reused: the engine and the budget."""
    return {"engine": f"cb-async {__version__}", "nodes": limits.nodes, "depth": limits.depth,
            "movetime": limits.movetime, "multipv": limits.multipv}


class Job:
    """One analysis: `async for result in job.results()`; see `cb_async.analysis.analyse`."""

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
    ) -> None:
        self.limits = limits if limits is not None else Limits(nodes=DEFAULT_NODES)
        self.progress = Progress()
        self._source = source
        self._workers = workers
        self._cluster = cluster
        self._journal = Journal(journal, job_header(self.limits)) if journal is not None else None
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
        self._finished: asyncio.Queue[tuple[int, Result] | BaseException] = asyncio.Queue()
        self._queue: asyncio.PriorityQueue[tuple[int, int, tuple[PositionTask, ...]]] = asyncio.PriorityQueue()
        self._batch_numbers = itertools.count()

    # -- the public loop ----------------------------------------------------------------------

    async def results(self) -> AsyncIterator[Result]:
        """Every result: in completion order, or in input order with `ordered=True`."""
        reader = self._reader()
        if self._journal is not None:
            self._known.update(self._journal.open(self._restart))
        self._journaled = set(self._known)
        pool = self.pool if self.pool is not None else self._make_pool()
        self.pool = pool
        slots: list[asyncio.Task[None]] = []
        try:
            workers = await pool.start()
            slots = [asyncio.create_task(self._serve(pool, worker)) for worker in workers]
            window = max(16, 4 * len(workers))
            held: dict[int, Result] = {}
            next_out = 0
            while True:
                self._read_ahead(reader, window)
                if self.progress.reading_done and self._open == 0 and self._finished.empty() and not held:
                    return
                message = await self._finished.get()
                if isinstance(message, BaseException):
                    raise message
                sequence, result = message
                if not self._ordered:
                    self._open -= 1
                    yield result
                    continue
                held[sequence] = result
                while next_out in held:
                    self._open -= 1
                    yield held.pop(next_out)
                    next_out += 1
        finally:
            for slot in slots:
                slot.cancel()
            await asyncio.gather(*slots, return_exceptions=True)
            await pool.close()
            if self._journal is not None:
                self._journal.close()

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
                self._finished.put_nowait((sequence, entry))
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
                self._queue.put_nowait((1, next(self._batch_numbers), tuple(batch)))
            if not opened.missing:
                self._complete(opened)
        self._report()

    # -- the workers' side --------------------------------------------------------------------

    async def _serve(self, pool: Pool, worker: Worker) -> None:
        """One worker's loop: take a batch, evaluate it; on a death give the rest back."""
        try:
            while True:
                _, _, batch = await self._queue.get()
                try:
                    await worker.evaluate(batch, self.limits, self._evaluated)
                except WorkerLost as lost:
                    self.progress.workers_lost += 1
                    self._requeue(batch[lost.finished:], str(lost))
                    worker = await pool.replace(worker)
                    self.progress.workers_replaced += 1
        except Exception as error:  # noqa: BLE001 - a pool that cannot go on: results() raises it
            self._finished.put_nowait(error)

    def _requeue(self, rest: Sequence[PositionTask], reason: str) -> None:
        rest = [task for task in rest if task.key not in self._known]
        if not rest:
            return
        victim = rest[0].key
        self._crashes[victim] = self._crashes.get(victim, 0) + 1
        if self._crashes[victim] >= MAX_CRASHES:
            self._give_up(rest[0], f"the engine died {MAX_CRASHES} times on position {rest[0].fen} ({reason})")
            rest = rest[1:]
        if rest:
            self._queue.put_nowait((0, next(self._batch_numbers), tuple(rest)))

    def _evaluated(self, evaluation: Evaluation) -> None:
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

    def _give_up(self, task: PositionTask, reason: str) -> None:
        self._failed[task.key] = reason
        self._pending.discard(task.key)
        for opened in self._waiting.pop(task.key, ()):
            opened.missing.discard(task.key)
            if not opened.missing:
                self._complete(opened)

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
        self._finished.put_nowait((opened.sequence, result))

    def _report(self) -> None:
        if self._on_progress is not None:
            self._on_progress(self.progress)

    def _make_pool(self) -> Pool:
        if self._cluster is None:
            from cb_async.analysis.local import LocalPool

            return LocalPool(self._workers)
        from cb_async.analysis.ray_pool import RayPool

        return RayPool(self._cluster, self._workers)


def _convert(source: Iterable[Item | Problem | chess.pgn.Game | chess.Board]) -> Iterator[Item | Problem]:
    """Library sources: parsed games and boards become items, numbered from 1."""
    for number, entry in enumerate(source, start=1):
        if isinstance(entry, chess.pgn.Game):
            yield game_input("<games>", number, entry)
        elif isinstance(entry, chess.Board):
            yield position_input("<positions>", number, entry.fen())
        else:
            yield entry


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
) -> AsyncIterator[Result]:
    """Analyse every game or position of `source`, yielding each result as it completes.

    `source` is a PGN, EPD or FEN file, or an iterable of `chess.pgn.Game` / `chess.Board`.
    `limits` is the budget per position (default: `DEFAULT_NODES` nodes). `workers` engines run
    in local processes (default: one per core), or on a Ray cluster with `cluster="auto"`,
    `"ray://host:port"` or `"local"`. With `journal`, every finished position is recorded there
    and a later call with the same journal resumes without searching anything twice. Results
    come in completion order, or in input order with `ordered=True`.
    """
    job = Job(source, limits, workers=workers, cluster=cluster, journal=journal, restart=restart,
              ordered=ordered, on_progress=on_progress)
    async for result in job.results():
        yield result
