"""The local pool: one worker process per core, each holding one engine.

Workers are started as the embedded engine's are (`cb_async.runner.library_context`:
`forkserver` on Linux, with the search loaded once in the server, `spawn` elsewhere), never
by forking the driver: the driver may be a host application with threads of its own (this
pool's reader threads among them), and a forked child would inherit whatever lock one of them
held at that instant. The price is that a worker imports the engine afresh (a fraction of a
second, once per worker) and that, like every `spawn`-style start, it imports the host's main
script again: a script without the `if __name__ == "__main__":` guard would start the job again
inside the worker. Python refuses that in the child; the pool turns the child's death before it
said it was ready into `PoolError` with a message that names the guard, instead of a hang.

Each worker talks to the driver over one pipe; a reader thread per worker turns its messages
into a memory stream of the caller's event loop (anyio: asyncio or trio), so the loop never
blocks on a pipe, and a worker that dies (its pipe closes) becomes `WorkerLost` for the batch it
held. What runs inside a worker is the job's `EngineSpec` (`engines.open_analyst`): cb-async's
search, or one UCI engine subprocess that the worker owns and ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cb_async.analysis.engines import EngineSpec
from cb_async.analysis.model import Answer, PositionTask
from cb_async.analysis.pool import PoolError, Worker, WorkerLost
from cb_async.limits import Limits
from cb_async.runner import library_context
from cb_async.worker_process import WorkerProcess

#: How long a new worker may take to import the engine and say it is ready.
START_TIMEOUT = 120.0
#: How long a worker asked to stop may take before it is killed. An idle worker leaves at once;
#: one still searching (the job was interrupted) has nothing left that anybody wants.
STOP_TIMEOUT = 1.0

GUARD_HINT = ("a worker process ends as soon as it starts. Worker processes start a fresh Python "
              "that imports the main script again: a script that runs an analysis must keep its "
              "top-level code under `if __name__ == \"__main__\":`")




def default_workers() -> int:
    """One worker per core this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


# -- the messages on a worker's pipe -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Ready:
    pid: int
    engine: str


@dataclass(frozen=True, slots=True)
class _Batch:
    tasks: tuple[PositionTask, ...]
    limits: Limits


@dataclass(frozen=True, slots=True)
class _Stop:
    pass


@dataclass(frozen=True, slots=True)
class _Evaluated:
    answer: Answer


@dataclass(frozen=True, slots=True)
class _Unavailable:
    """The worker's engine would not start: the reason, for `PoolError`."""

    reason: str


@dataclass(frozen=True, slots=True)
class _Gone:
    """Posted by the reader thread when the worker's pipe closes."""


def worker_main(conn: Connection, spec: EngineSpec = EngineSpec()) -> None:
    """The worker process: evaluate batches until told to stop or the driver goes away."""
    # Ctrl-C reaches the whole process group: the driver decides, the workers follow it (and
    # end with it): `worker_entry` has ignored SIGINT and started the orphan watch.
    from cb_async.analysis.engines import EngineUnavailable, open_analyst

    try:
        analyst = open_analyst(spec)
    except EngineUnavailable as error:
        conn.send(_Unavailable(str(error)))
        return
    try:
        conn.send(_Ready(os.getpid(), analyst.name))
        while True:
            message = conn.recv()
            match message:
                case _Batch(tasks=tasks, limits=limits):
                    for task in tasks:
                        conn.send(_Evaluated(analyst.evaluate(task, limits)))
                case _:
                    return
    except (EOFError, OSError):
        return  # the driver is gone: nobody wants the answer
    finally:
        analyst.close()  # a UCI engine ends with its worker


# -- the driver's side ---------------------------------------------------------------------------


class LocalWorker:
    """The driver's handle on one worker process (a `cb_async.worker_process.WorkerProcess`:
    the engine's own way to start, read, end and watch a worker)."""

    def __init__(self, context: Any, number: int, spec: EngineSpec = EngineSpec()) -> None:
        # `context` is a concrete multiprocessing context
        self.name = f"worker {number}"
        self.worker = WorkerProcess(context, worker_main, (spec,), f"cb-async analyse {number}")
        send, receive = anyio.create_memory_object_stream[_Ready | _Evaluated | _Unavailable | _Gone](100_000)
        self._outbox: MemoryObjectSendStream[_Ready | _Evaluated | _Unavailable | _Gone] = send
        self._inbox: MemoryObjectReceiveStream[_Ready | _Evaluated | _Unavailable | _Gone] = receive
        self._token = anyio.lowlevel.current_token()
        self._closed = False
        self.pid: int | None = None
        self.engine = ""

    @property
    def started(self) -> bool:
        return self.worker.conn is not None

    async def start(self) -> None:
        try:
            await anyio.to_thread.run_sync(self.worker.start)
        except (RuntimeError, OSError, EOFError) as error:
            raise PoolError(f"the analysis workers could not start ({error}); {GUARD_HINT}") from None
        self.worker.read(self._post, lambda: self._post(_Gone()))
        first = None
        with anyio.move_on_after(START_TIMEOUT):
            first = await self._inbox.receive()
        if first is None:
            self.kill()
            raise PoolError(f"a worker process did not start within {START_TIMEOUT:.0f} s")
        if isinstance(first, _Unavailable):
            raise PoolError(first.reason)
        if not isinstance(first, _Ready):
            raise PoolError(f"the analysis workers could not start: {GUARD_HINT}")
        self.pid = first.pid
        self.engine = first.engine

    def _post(self, message: _Ready | _Evaluated | _Unavailable | _Gone) -> bool:
        if self._closed:
            return False
        try:
            anyio.from_thread.run_sync(self._outbox.send_nowait, message, token=self._token)
        except (RuntimeError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False  # the loop or the stream is closed: the job is over
        return True

    async def evaluate(self, batch: Sequence[PositionTask], limits: Limits,
                       emit: Callable[[Answer], None]) -> None:
        if not self.worker.send(_Batch(tuple(batch), limits)):
            raise WorkerLost(0, f"{self.name} (pid {self.pid}) is gone")
        for finished in range(len(batch)):
            message = await self._inbox.receive()
            match message:
                case _Evaluated(answer=answer):
                    emit(answer)
                case _:
                    process = self.worker.process
                    if process is not None:
                        await anyio.to_thread.run_sync(process.join, STOP_TIMEOUT)
                    exit_code = process.exitcode if process is not None else None
                    raise WorkerLost(finished, f"{self.name} (pid {self.pid}) died (exit code {exit_code})")

    async def stop(self) -> None:
        """Ask it to stop, kill it after `STOP_TIMEOUT`, free its pipe and descriptors."""
        await anyio.to_thread.run_sync(self.worker.end, _Stop(), STOP_TIMEOUT)
        self.release()

    def release(self) -> None:
        """Close the pipe and the stream: the reader thread's last message has nowhere to go."""
        self._closed = True
        self.worker.release()
        self._outbox.close()
        self._inbox.close()

    def kill(self) -> None:
        self.worker.kill()
        process = self.worker.process
        if process is not None:
            process.join(STOP_TIMEOUT)


class LocalPool:
    """`workers` engines in worker processes on this machine."""

    def __init__(self, workers: int | None = None, engine: EngineSpec = EngineSpec()) -> None:
        self.engine = engine
        self.size = workers if workers is not None else default_workers()
        if self.size < 1:
            raise PoolError("--workers must be at least 1")
        self._context: Any = library_context()  # the engine's own choice (runner.library_context)
        self._started = 0
        self.workers: list[LocalWorker] = []
        self.replaced = 0

    async def start(self) -> list[LocalWorker]:
        self.workers = [self._new() for _ in range(self.size)]
        try:
            await _all(worker.start for worker in self.workers)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.close()
            raise
        return list(self.workers)

    async def replace(self, worker: Worker) -> LocalWorker:
        index = next(i for i, known in enumerate(self.workers) if known is worker)
        self.workers[index].kill()
        self.workers[index].release()
        fresh = self._new()
        self.workers[index] = fresh
        await fresh.start()
        self.replaced += 1
        return fresh

    async def close(self) -> None:
        try:
            await _all(worker.stop for worker in self.workers if worker.started)
        except Exception:  # noqa: BLE001 - a worker that cannot be stopped politely was killed
            pass
        for worker in self.workers:
            if not worker.started:
                worker.release()

    def pids(self) -> list[int]:
        return [worker.pid for worker in self.workers if worker.pid is not None]

    def _new(self) -> LocalWorker:
        self._started += 1
        return LocalWorker(self._context, self._started, self.engine)


async def _all(calls: Any) -> None:
    """Await every call at once in a task group of the caller's; the first error (a `PoolError`
    for a worker that cannot start) is raised as itself, not wrapped in a group."""
    first: list[BaseException] = []

    async def one(call: Callable[[], Any]) -> None:
        try:
            await call()
        except Exception as error:  # noqa: BLE001 - kept, raised below once all have ended
            first.append(error)

    async with anyio.create_task_group() as group:
        for call in calls:
            group.start_soon(one, call)
    if first:
        raise first[0]
