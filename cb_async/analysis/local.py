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
into an asyncio queue, so the event loop never blocks on a pipe, and a worker that dies (its
pipe closes) becomes `WorkerLost` for the batch it held.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from cb_async.analysis.model import Evaluation, PositionTask
from cb_async.analysis.pool import PoolError, Worker, WorkerLost
from cb_async.limits import Limits
from cb_async.runner import library_context

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


@dataclass(frozen=True, slots=True)
class _Batch:
    tasks: tuple[PositionTask, ...]
    limits: Limits


@dataclass(frozen=True, slots=True)
class _Stop:
    pass


@dataclass(frozen=True, slots=True)
class _Evaluated:
    evaluation: Evaluation


@dataclass(frozen=True, slots=True)
class _Gone:
    """Posted by the reader thread when the worker's pipe closes."""


def worker_main(conn: Connection) -> None:
    """The worker process: evaluate batches until told to stop or the driver goes away."""
    # Ctrl-C reaches the whole process group; the driver decides, the workers follow it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from cb_async.analysis.analyst import Analyst

    analyst = Analyst()
    try:
        conn.send(_Ready(os.getpid()))
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


# -- the driver's side ---------------------------------------------------------------------------


class LocalWorker:
    """The driver's handle on one worker process."""

    def __init__(self, context: Any, number: int) -> None:  # a concrete multiprocessing context
        self.name = f"worker {number}"
        self._context = context
        self._conn, child = context.Pipe()
        self._child: Connection | None = child
        self.process = context.Process(target=worker_main, args=(child,), name=f"cb-async analyse {number}",
                                       daemon=True)
        self._inbox: asyncio.Queue[_Ready | _Evaluated | _Gone] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self.pid: int | None = None

    async def start(self) -> None:
        try:
            await asyncio.to_thread(self.process.start)
        except (RuntimeError, OSError, EOFError) as error:
            raise PoolError(f"the analysis workers could not start ({error}); {GUARD_HINT}") from None
        finally:
            assert self._child is not None
            self._child.close()  # the worker holds its end now; ours must close for EOF to reach us
            self._child = None
        threading.Thread(target=self._read, name=f"{self.name} reader", daemon=True).start()
        try:
            first = await asyncio.wait_for(self._inbox.get(), START_TIMEOUT)
        except TimeoutError:
            self.kill()
            raise PoolError(f"a worker process did not start within {START_TIMEOUT:.0f} s") from None
        if not isinstance(first, _Ready):
            raise PoolError(f"the analysis workers could not start: {GUARD_HINT}")
        self.pid = first.pid

    def _read(self) -> None:
        while True:
            try:
                message = self._conn.recv()
            except (EOFError, OSError):
                self._post(_Gone())
                return
            self._post(message)

    def _post(self, message: _Ready | _Evaluated | _Gone) -> None:
        try:
            self._loop.call_soon_threadsafe(self._inbox.put_nowait, message)
        except RuntimeError:
            pass  # the loop is closed: the job is over

    async def evaluate(self, batch: Sequence[PositionTask], limits: Limits,
                       emit: Callable[[Evaluation], None]) -> None:
        try:
            self._conn.send(_Batch(tuple(batch), limits))
        except OSError:
            raise WorkerLost(0, f"{self.name} (pid {self.pid}) is gone") from None
        for finished in range(len(batch)):
            message = await self._inbox.get()
            match message:
                case _Evaluated(evaluation=evaluation):
                    emit(evaluation)
                case _:
                    await asyncio.to_thread(self.process.join, STOP_TIMEOUT)
                    raise WorkerLost(finished, f"{self.name} (pid {self.pid}) died "
                                               f"(exit code {self.process.exitcode})")

    async def stop(self) -> None:
        try:
            self._conn.send(_Stop())
        except OSError:
            pass
        await asyncio.to_thread(self.process.join, STOP_TIMEOUT)
        self.kill()
        self._conn.close()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
            self.process.join(STOP_TIMEOUT)


class LocalPool:
    """`workers` engines in worker processes on this machine."""

    def __init__(self, workers: int | None = None) -> None:
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
            await asyncio.gather(*(worker.start() for worker in self.workers))
        except BaseException:
            await self.close()
            raise
        return list(self.workers)

    async def replace(self, worker: Worker) -> LocalWorker:
        index = next(i for i, known in enumerate(self.workers) if known is worker)
        self.workers[index].kill()
        fresh = self._new()
        self.workers[index] = fresh
        await fresh.start()
        self.replaced += 1
        return fresh

    async def close(self) -> None:
        await asyncio.gather(*(worker.stop() for worker in self.workers if worker.process.pid is not None),
                             return_exceptions=True)

    def pids(self) -> list[int]:
        return [worker.pid for worker in self.workers if worker.pid is not None]

    def _new(self) -> LocalWorker:
        self._started += 1
        return LocalWorker(self._context, self._started)
