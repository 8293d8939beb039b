"""The seam between the job and where its searches run: a local process pool or a Ray cluster.

A `Pool` hands out `Worker`s, one per core; a worker evaluates a batch of positions in order
and reports each one as it finishes (so the journal gets it at once). A worker that dies raises
`WorkerLost` saying how many of the batch it finished; the job gives the rest to another worker
and asks the pool for a replacement. The job never needs to know which kind of pool it has.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from cb_async.analysis.model import Answer, PositionTask
from cb_async.limits import Limits


class WorkerLost(Exception):
    """A worker died with `finished` positions of its batch reported."""

    def __init__(self, finished: int, reason: str) -> None:
        super().__init__(reason)
        self.finished = finished


class PoolError(Exception):
    """The pool cannot start or keep workers (a bad cluster address, workers that die at start)."""


class Worker(Protocol):
    name: str
    #: The name of the engine the worker runs (a UCI engine's `id name`).
    engine: str

    async def evaluate(self, batch: Sequence[PositionTask], limits: Limits,
                       emit: Callable[[Answer], None]) -> None:
        """Evaluate `batch` in order, calling `emit` for each finished position (or `Failure`)."""
        ...


class Pool(Protocol):
    async def start(self) -> Sequence[Worker]:
        """Start the workers (one per core unless told otherwise)."""
        ...

    async def replace(self, worker: Worker) -> Worker:
        """A fresh worker in place of one that died."""
        ...

    async def close(self) -> None:
        ...

    def pids(self) -> list[int]:
        """Process ids of the current workers (on their own machines)."""
        ...
