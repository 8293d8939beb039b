"""The Ray pool: the same job on a Ray cluster, one actor per core, each holding one engine.

Ray is an optional extra (`pip install 'cb-async[ray]'`); nothing else in the package imports
it. Ray's actors are exactly what the job needs: a stateful engine per core, placed by the
cluster, restarted elsewhere when a node is lost. The driver stays the only writer: each
position is one actor call whose result streams back as soon as it is ready, and the driver
journals it. A game's positions are all sent to the same actor, which runs them in order.

Each actor builds its engine from the job's `EngineSpec` when it starts. A UCI engine must be
installed on every node: an actor whose engine does not start says so, with its node's name,
and the pool refuses to start (`PoolError`) rather than run on the nodes that have it.

`--cluster` takes `auto` (the cluster this machine belongs to, as `ray start` set up),
`ray://host:port` (a remote cluster through Ray Client) or `local` (a private single-machine
Ray started for this job, bound to 127.0.0.1: for trying Ray out, tests and benchmarks). A host
program that has already called `ray.init` keeps its connection: the pool uses it and leaves it
up.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, cast

import anyio
import anyio.to_thread

from cb_async.analysis.engines import EngineSpec, EngineUnavailable, PositionAnalyst, node_name, open_analyst
from cb_async.analysis.model import Answer, PositionTask
from cb_async.analysis.pool import PoolError, Worker, WorkerLost
from cb_async.limits import Limits

if TYPE_CHECKING:
    from ray import ObjectRef, ObjectRefGenerator
    from ray.actor import ActorHandle

_ADDRESS = re.compile(r"^(auto|local|ray://[A-Za-z0-9_.\-\[\]:]+:\d{1,5})$")


def check_address(address: str) -> None:
    """Refuse a malformed `--cluster` before anything starts."""
    if not _ADDRESS.match(address):
        raise PoolError(f"--cluster must be 'auto', 'local' or 'ray://HOST:PORT', not {address!r}")


class RayAnalyst:
    """The actor: one analyst (an engine and its table) living on one core of the cluster."""

    def __init__(self, spec: EngineSpec) -> None:
        self.analyst: PositionAnalyst | None = None
        self.problem: str | None = None
        try:
            self.analyst = open_analyst(spec)
        except EngineUnavailable as error:
            self.problem = f"on node {node_name()}: {error}"

    def ready(self) -> tuple[int, str, str | None]:
        """(pid, engine name, None), or (pid, "", why the engine is not there on this node)."""
        if self.analyst is None:
            return os.getpid(), "", self.problem
        return os.getpid(), self.analyst.name, None

    def _analyst(self) -> PositionAnalyst:
        if self.analyst is None:
            raise EngineUnavailable(self.problem or "no engine")
        return self.analyst

    def evaluate(self, task: PositionTask, limits: Limits) -> Answer:
        return self._analyst().evaluate(task, limits)

    def evaluate_batch(self, tasks: tuple[PositionTask, ...], limits: Limits) -> Iterator[Answer]:
        """A game's positions in order, each streamed back to the driver as it is found."""
        for task in tasks:
            yield self._analyst().evaluate(task, limits)

    def close(self) -> None:
        """End the engine (a UCI subprocess) before the actor is killed."""
        if self.analyst is not None:
            self.analyst.close()


class RayWorker:
    """The driver's handle on one actor.

    A batch is one call whose results stream back one by one (a Ray streaming generator): one
    task to schedule per game rather than one per position. Ray Client (`ray://`) does not
    stream actor methods, so through it each position is a call of its own, all sent at once.
    """

    def __init__(self, actor: ActorHandle[RayAnalyst], number: int, streaming: bool) -> None:
        self.actor = actor
        self.name = f"actor {number}"
        self.streaming = streaming
        self.pid: int | None = None
        self.engine = ""

    async def evaluate(self, batch: Sequence[PositionTask], limits: Limits,
                       emit: Callable[[Answer], None]) -> None:
        import ray.exceptions

        finished = 0
        try:
            if self.streaming:
                stream: ObjectRefGenerator = self.actor.evaluate_batch.options(num_returns="streaming").remote(tuple(batch), limits)
                async for ref in stream:
                    answer: Answer = await ref
                    emit(answer)
                    finished += 1
            else:
                refs: list[ObjectRef[Answer]] = [self.actor.evaluate.remote(task, limits) for task in batch]
                for ref in refs:
                    emit(await ref)
                    finished += 1
        except ray.exceptions.RayError as error:
            raise WorkerLost(finished, f"{self.name} failed: {str(error).splitlines()[0]}") from None
        if finished < len(batch):
            raise WorkerLost(finished, f"{self.name} ended its stream early")


class RayPool:
    """One actor per CPU of the cluster (or `workers` of them)."""

    def __init__(self, address: str, workers: int | None = None, engine: EngineSpec = EngineSpec()) -> None:
        check_address(address)
        self.engine = engine
        if workers is not None and workers < 1:
            raise PoolError("--workers must be at least 1")
        self.address = address
        self.size = workers
        self.workers: list[RayWorker] = []
        self._started = 0
        self._owns_ray = False

    async def start(self) -> list[RayWorker]:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise PoolError("--cluster needs Ray: pip install 'cb-async[ray]'") from None
        await anyio.to_thread.run_sync(self._connect)
        self.workers = [self._new() for _ in range(self._actors())]
        try:
            refs = [worker.actor.ready.remote() for worker in self.workers]
            answers: list[tuple[int, str, str | None]] = await anyio.to_thread.run_sync(ray.get, refs)
        except Exception as error:
            await self.close()
            raise PoolError(f"the Ray actors could not start: {str(error).splitlines()[0]}") from None
        problem = next((problem for _, _, problem in answers if problem is not None), None)
        if problem is not None:
            await self.close()
            raise PoolError(problem)
        for worker, (pid, name, _) in zip(self.workers, answers):
            worker.pid, worker.engine = pid, name
        return list(self.workers)

    def _connect(self) -> None:
        import ray

        if ray.is_initialized():
            return  # the host program has connected to its Ray already: use that one, leave it up
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            if self.address == "local":
                from cb_async.analysis.local import default_workers

                ray.init(num_cpus=self.size or default_workers(), include_dashboard=False,
                         _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
            else:
                ray.init(address=self.address, log_to_driver=False, configure_logging=False)
        except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError...
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise PoolError(f"cannot use the Ray cluster {self.address!r}: {first}") from None
        self._owns_ray = True

    def _actors(self) -> int:
        import ray

        resources = cast("dict[str, float]", ray.cluster_resources())  # type: ignore[no-untyped-call]
        cpus = int(resources.get("CPU", 1))
        # An actor asks for a whole CPU: more actors than CPUs would wait forever.
        return max(1, min(self.size or cpus, cpus))

    def _new(self) -> RayWorker:
        import ray

        self._started += 1
        actor = cast("ActorHandle[RayAnalyst]", ray.remote(num_cpus=1)(RayAnalyst).remote(self.engine))
        return RayWorker(actor, self._started, streaming=not self.address.startswith("ray://"))

    async def replace(self, worker: Worker) -> RayWorker:
        import ray

        index = next(i for i, known in enumerate(self.workers) if known is worker)
        try:
            ray.kill(self.workers[index].actor, no_restart=True)
        except Exception:  # noqa: BLE001 - it is already dead
            pass
        fresh = self._new()
        self.workers[index] = fresh
        answer: tuple[int, str, str | None] = await anyio.to_thread.run_sync(ray.get, fresh.actor.ready.remote())
        pid, name, problem = answer
        if problem is not None:
            raise PoolError(problem)
        fresh.pid, fresh.engine = pid, name
        return fresh

    async def close(self) -> None:
        import ray

        if not ray.is_initialized():
            return
        try:  # each actor quits its UCI engine; one that is dead or stuck is killed below anyway
            closing: list[ObjectRef[None]] = [worker.actor.close.remote() for worker in self.workers]
            await anyio.to_thread.run_sync(lambda: ray.wait(closing, num_returns=len(closing), timeout=5))
        except Exception:  # noqa: BLE001 - nothing to add: the kills follow
            pass
        for worker in self.workers:
            try:
                ray.kill(worker.actor, no_restart=True)
            except Exception:  # noqa: BLE001 - already gone
                pass
        self.workers = []
        if self._owns_ray:
            await anyio.to_thread.run_sync(ray.shutdown)
            self._owns_ray = False

    def pids(self) -> list[int]:
        return [worker.pid for worker in self.workers if worker.pid is not None]
