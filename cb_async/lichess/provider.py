"""The provider: register once, long-poll the broker, run each job, one at a time.

A job runs while the next poll waits, because the analysis board asks for a new position as
soon as the user moves: new work **preempts** the running job (its search is stopped and
awaited before the next one starts, so a search never outlives its job). A job ends in one of
five ways, each said on its progress line:

| ending      | what happened                                           | the search      |
|-------------|---------------------------------------------------------|-----------------|
| done        | the limit was reached, `bestmove` sent                  | ended by itself |
| gone        | the broker answered early: nobody is listening          | stopped at once |
| preempted   | new work arrived                                        | stopped at once |
| stopped     | SIGINT or SIGTERM                                       | stopped at once |
| failed      | the engine or the network failed                        | stopped         |

What a failed request does next is data (`RETRY`), for the registration and the polls alike:
a network error or a 5xx waits and doubles the wait (1 s up to 30 s), which the next good
answer resets; 429 waits as long as the server says. Work, or none, polls again at once. A job the provider cannot serve is refused
with one log line and an empty answer (the requester is not left waiting), and polling goes on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc
import chess.engine
import httpx

from cb_async.lichess import api
from cb_async.lichess.engines import RunningSearch, ServedEngine
from cb_async.lichess.work import Work, WorkError, info_line, parse_job

LOGGER = logging.getLogger("cb_async.lichess")

#: The wait after a network error or a 5xx: first, and at most (doubled each time).
BACKOFF_FIRST = 1.0
BACKOFF_MOST = 30.0

#: How long a stopped search may take to end before the provider gives up on it.
STOP_TIMEOUT = 10.0


@dataclass
class Settings:
    lichess_url: str
    broker_url: str
    name: str
    max_threads: int
    max_hash: int
    once: bool = False
    verbose: bool = False
    backoff_first: float = BACKOFF_FIRST
    backoff_most: float = BACKOFF_MOST


@dataclass(frozen=True)
class Retry:
    """What a failed request does before the next one."""

    wait: str  # "backoff": the current backoff, "retry-after": what the server said
    doubles: bool  # the backoff doubles after this wait


#: A failure -> what happens next. A good answer (work, or none) resets the backoff.
RETRY: dict[type[Exception], Retry] = {
    api.Unavailable: Retry("backoff", doubles=True),  # network error, timeout, 5xx
    api.Refused: Retry("backoff", doubles=True),  # a 4xx from the broker: it may be restarting
    api.RateLimited: Retry("retry-after", doubles=False),  # 429
}


class Backoff:
    """The wait between failed requests: `RETRY`'s policy, from `backoff_first` doubling up
    to `backoff_most`, each wait said in one log line."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.delay = settings.backoff_first

    async def after(self, error: Exception, who: str, what: str) -> None:
        retry = RETRY[type(error)]
        if retry.wait == "retry-after" and isinstance(error, api.RateLimited):
            LOGGER.warning("%s says 429 Too Many Requests: waiting %.0f s", who, error.retry_after)
            await anyio.sleep(error.retry_after)
        else:
            LOGGER.warning("%s (%s); again in %.0f s", what, error, self.delay)
            await anyio.sleep(self.delay)
        if retry.doubles:
            self.delay = min(self.delay * 2, self._settings.backoff_most)

    def reset(self) -> bool:
        """After a good answer; True if there had been failures."""
        failed = self.delay != self._settings.backoff_first
        self.delay = self._settings.backoff_first
        return failed


@dataclass
class JobReport:
    """What became of one job; `time.monotonic()` stamps, for the latency figures."""

    work: Work
    received_at: float
    started_at: float | None = None
    first_line_at: float | None = None
    search_stopped_at: float | None = None
    ending: str = "running"
    depth: int = 0
    nodes: int = 0
    lines: int = 0

    def progress(self) -> str:
        elapsed = (self.search_stopped_at or time.monotonic()) - self.received_at
        return (f"job {self.work.job_id}: {self.work.describe()}: depth {self.depth}, {self.nodes} nodes, "
                f"{elapsed:.2f} s, {self.ending}")


@dataclass
class _Slot:
    """The one running job: cancel its scope to end it, then wait for `ended`."""

    report: JobReport
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    ended: anyio.Event = field(default_factory=anyio.Event)


class Provider:
    def __init__(self, settings: Settings, engine: ServedEngine, http: httpx.AsyncClient, secret: api.Secret,
                 reopen: Callable[[], Awaitable[ServedEngine]] | None = None) -> None:
        self.settings = settings
        self.engine = engine
        #: Starts the engine again after it died (an engine subprocess that crashed).
        self._reopen = reopen
        self._engine_died = False
        self.http = http
        self.secret = secret
        self.reports: list[JobReport] = []
        self.refused = 0
        self._slot: _Slot | None = None
        self._stopping_reason: str | None = None

    # -- registration ---------------------------------------------------------------------------

    def registration(self) -> dict[str, Any]:
        return {"name": self.settings.name, "maxThreads": self.settings.max_threads,
                "maxHash": self.settings.max_hash, "variants": list(self.engine.variants),
                "providerSecret": self.secret.reveal()}

    async def register(self, token: api.Secret) -> None:
        """Register (or update the registration of the same name), retrying as polling does."""
        backoff = Backoff(self.settings)
        while True:
            try:
                engine_id, created = await api.register(self.http, self.settings.lichess_url, token,
                                                        self.registration())
            except (api.RateLimited, api.Unavailable) as error:
                await backoff.after(error, "Lichess", "cannot register yet")
                continue
            LOGGER.info("%s %r as %s (%d threads, %d MB hash, %s)", "registered" if created else "updated",
                        self.settings.name, engine_id, self.settings.max_threads, self.settings.max_hash,
                        ", ".join(self.engine.variants))
            return

    # -- serving --------------------------------------------------------------------------------

    async def serve(self) -> None:
        """Poll and run jobs until cancelled (or, with `once`, until one job has been served)."""
        LOGGER.info("waiting for work from %s", self.settings.broker_url)
        try:
            async with anyio.create_task_group() as tasks:
                backoff = Backoff(self.settings)
                while True:
                    try:
                        job = await api.acquire(self.http, self.settings.broker_url, self.secret)
                    except (api.RateLimited, api.Unavailable, api.Refused) as error:
                        await backoff.after(error, "the broker", "the broker is unavailable")
                        continue
                    if backoff.reset():
                        LOGGER.info("the broker answers again")
                    if job is None:
                        continue
                    received_at = time.monotonic()
                    try:
                        work = parse_job(job, variants=self.engine.variants, max_threads=self.settings.max_threads,
                                         max_hash=self.settings.max_hash)
                    except WorkError as error:
                        self.refused += 1
                        LOGGER.warning("job %s refused: %s", api.describe(job), error)
                        if isinstance(job, dict) and isinstance(job.get("id"), str):
                            tasks.start_soon(self._refuse, job["id"])
                        continue
                    await self._preempt("preempted")
                    slot = _Slot(JobReport(work, received_at))
                    self.reports.append(slot.report)
                    self._slot = slot
                    tasks.start_soon(self._run, slot)
                    if self.settings.once:
                        await slot.ended.wait()
                        return
        finally:
            with anyio.CancelScope(shield=True):
                await self._preempt(self._stopping_reason or "stopped")

    def stop_reason(self, reason: str) -> None:
        """Say why the provider is being cancelled (the running job's ending)."""
        self._stopping_reason = reason

    async def _preempt(self, ending: str) -> None:
        slot, self._slot = self._slot, None
        if slot is not None and not slot.ended.is_set():
            if slot.report.ending == "running":
                slot.report.ending = ending
            slot.scope.cancel()
            await slot.ended.wait()

    async def _refuse(self, job_id: str) -> None:
        """An empty answer, so the requester hears at once that nothing comes."""
        try:
            await api.answer(self.settings.broker_url, job_id, _no_lines())
        except api.Unavailable:
            pass

    async def _run(self, slot: _Slot) -> None:
        report = slot.report
        work = report.work
        search: RunningSearch | None = None
        try:
            with slot.scope:
                try:
                    if self._engine_died:
                        await self._restart_engine()
                    search = await self.engine.start(work)
                    report.started_at = time.monotonic()
                    lines = _InfoLines(search, report)
                    ending = await api.answer(self.settings.broker_url, work.job_id, lines)
                    if lines.error is not None:
                        raise lines.error
                    if report.ending == "running":
                        report.ending = "done" if ending == "sent" else "gone"
                except api.Unavailable as error:
                    report.ending = "failed"
                    LOGGER.warning("job %s: cannot answer (%s)", work.job_id, error)
                except chess.engine.EngineError as error:
                    report.ending = "failed"
                    self._engine_died = isinstance(error, chess.engine.EngineTerminatedError)
                    LOGGER.error("job %s: the engine failed: %s", work.job_id, error or type(error).__name__)
        finally:
            with anyio.CancelScope(shield=True):
                if search is not None:
                    search.stop()
                    with anyio.move_on_after(STOP_TIMEOUT):
                        try:
                            await search.wait()
                        except chess.engine.EngineError:
                            pass
                report.search_stopped_at = time.monotonic()
                if report.ending == "running":  # cancelled with the provider, or an error
                    report.ending = self._stopping_reason or "failed"
                LOGGER.info("%s", report.progress())
                slot.ended.set()


    async def _restart_engine(self) -> None:
        """A new engine for the next job; EngineTerminatedError if it cannot start."""
        if self._reopen is None:
            raise chess.engine.EngineTerminatedError("the engine died")
        with anyio.CancelScope(shield=True):
            try:
                await self.engine.aclose()
            except Exception:
                pass  # it is dead already
        LOGGER.warning("the engine died: starting it again")
        try:
            self.engine = await self._reopen()
        except Exception as error:
            raise chess.engine.EngineTerminatedError(f"it does not start again: {error}") from None
        self._engine_died = False


class _InfoLines:
    """The job's search as the lines of its answer: `info` lines as they come (those the broker
    would use), then `bestmove`. An iterator class, not a generator: when the broker goes, the
    iteration is cancelled and nothing is left suspended."""

    def __init__(self, search: RunningSearch, report: JobReport) -> None:
        self._infos = search.__aiter__()
        self._search = search
        self._report = report
        self._ended = False
        #: The engine's failure, if it failed mid-search: the answer ends there, without
        #: `bestmove`, and the job reports it (an exception would cross the answer's tasks).
        self.error: chess.engine.EngineError | None = None

    def __aiter__(self) -> _InfoLines:
        return self

    async def __anext__(self) -> str:
        if self._ended:
            raise StopAsyncIteration
        try:
            return await self._next()
        except chess.engine.EngineError as error:
            self.error = error
            self._ended = True
            raise StopAsyncIteration from None

    async def _next(self) -> str:
        board = self._report.work.board
        async for info in self._infos:
            line = info_line(info, board)
            if line is None:
                continue
            report = self._report
            report.lines += 1
            if report.first_line_at is None:
                report.first_line_at = time.monotonic()
            if info.get("multipv", 1) == 1:
                report.depth = int(info.get("depth", report.depth))
                report.nodes = int(info.get("nodes", report.nodes))
            LOGGER.debug("> %s", line)
            return line
        self._ended = True
        best = await self._search.wait()
        text = board.uci(best.move, chess960=True) if best.move is not None else "(none)"
        LOGGER.debug("> bestmove %s", text)
        return f"bestmove {text}"


async def _no_lines() -> AsyncIterator[str]:
    return
    yield  # an async generator that yields nothing
