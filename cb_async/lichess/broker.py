"""A local stand-in for Lichess's engine broker (lila-engine), to try a provider without Lichess.

It follows lila-engine's rules (`src/main.rs`, `src/api.rs`, `src/emit.rs`): a provider
long-polls `POST /api/external-engine/work` and gets 204 after `poll_timeout` seconds without
work, or 200 with `{id, work, engine}`; each job is handed out once, and never once its
requester has gone. The provider answers with a chunked `POST /api/external-engine/work/{id}`
of UCI lines, which are parsed as lila-engine parses them and folded into "emits" as `emit.rs`
does: a depth goes to the requester only once every requested PV line has arrived, a bound-only
first PV is ignored, PVs are cut to 30 plies. `bestmove` ends the job. When the requester goes
away (`BrokerJob.cancel`), the broker answers at once and closes the connection: that is how a
provider learns that nobody is listening. It also serves the registration endpoints
(`GET`/`POST /api/external-engine`, `PUT /api/external-engine/{id}`) with a bearer token.

Beyond lila-engine, it checks what a provider must get right and records what it finds in
`BrokerJob.problems`: PV moves that are illegal or not in Chess960 notation, lines that do not
parse, lines after the requester left. It can fail on purpose (`fail_polls`: 5xx, 429).

`cb-async lichess-engine --measure` and the tests use it; it serves HTTP on 127.0.0.1 only.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import anyio.streams.stapled
import chess
import h11

#: lila-engine: `timeout(Duration::from_secs(10), hub.acquire(selector))`.
POLL_TIMEOUT = 10.0
#: emit.rs: `pv.iter().take(30)`.
PV_PLIES = 30
MAX_MOVES = 600

_WORK_PATH = re.compile(r"/api/external-engine/work/([A-Za-z0-9_-]+)")
_ENGINE_PATH = re.compile(r"/api/external-engine/([A-Za-z0-9_-]+)")


@dataclass
class Emit:
    """What the requester receives, as emit.rs builds it: the depth is the least of the PVs'."""

    time_ms: int
    depth: int
    nodes: int
    pvs: list[tuple[int, list[str]]]  # (depth of that line, its moves), one per PV


class UciLineError(ValueError):
    """A line lila-engine's parser refuses (`uci::ProtocolError`)."""


@dataclass
class UciInfo:
    multipv: int = 1
    depth: int | None = None
    time_ms: int | None = None
    nodes: int | None = None
    bound: bool = False
    pv: list[str] | None = None
    has_score: bool = False


_NUMBER_FIELDS = {"depth", "seldepth", "time", "nodes", "currmovenumber", "hashfull", "nps", "tbhits", "sbhits",
                  "cpuload", "multipv"}


def parse_uci_line(line: str) -> UciInfo | str | None:
    """An `info` line as UciInfo, `"bestmove"`, or None for a line lila-engine skips;
    UciLineError where lila-engine's parser fails."""
    words = line.split()
    if not words:
        return None
    if words[0] == "bestmove":
        return "bestmove"
    if words[0] != "info":
        return None
    info = UciInfo()
    index = 1
    while index < len(words):
        word = words[index]
        index += 1
        if word == "string":
            break
        if word in _NUMBER_FIELDS:
            if index >= len(words):
                raise UciLineError(f"unexpected end of line after {word}")
            try:
                value = int(words[index])
            except ValueError:
                raise UciLineError(f"invalid integer after {word}: {words[index]!r}") from None
            index += 1
            if word == "multipv":
                if not 0 <= value <= 5:
                    raise UciLineError("invalid multipv: supported range is 1 to 5")
                info.multipv = max(1, value)
            elif word == "depth":
                info.depth = value
            elif word == "time":
                info.time_ms = value
            elif word == "nodes":
                info.nodes = value
        elif word == "score":
            if index + 1 >= len(words) or words[index] not in ("cp", "mate"):
                raise UciLineError("bad score")
            try:
                int(words[index + 1])
            except ValueError:
                raise UciLineError(f"invalid integer in score: {words[index + 1]!r}") from None
            index += 2
            info.has_score = True
            while index < len(words) and words[index] in ("lowerbound", "upperbound"):
                info.bound = True
                index += 1
        elif word == "currmove":
            index += 1
        elif word == "pv":
            info.pv = []
            while index < len(words) and _is_uci_move(words[index]):
                info.pv.append(words[index])
                index += 1
        elif word in ("refutation", "currline"):
            index += 1
            while index < len(words) and _is_uci_move(words[index]):
                index += 1
        else:
            raise UciLineError(f"unexpected token {word!r}")
    return info


def _is_uci_move(word: str) -> bool:
    try:
        chess.Move.from_uci(word)
    except ValueError:
        return False
    return True


@dataclass
class BrokerJob:
    """One analysis request, seen from the requester's side."""

    id: str
    work: dict[str, Any]
    board: chess.Board
    submitted_at: float
    handed_out_at: float | None = None
    first_line_at: float | None = None
    ended_at: float | None = None
    lines: list[str] = field(default_factory=list)
    emits: list[Emit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: "bestmove", "closed" (the body ended without one), "gone" (the requester left), "error".
    ending: str | None = None
    gone: anyio.Event = field(default_factory=anyio.Event)
    ended: anyio.Event = field(default_factory=anyio.Event)
    handed_out: anyio.Event = field(default_factory=anyio.Event)
    changed: anyio.Event = field(default_factory=anyio.Event)
    _pvs: list[tuple[int, list[str]] | None] = field(default_factory=list)
    _time: int = 0
    _depth: int = 0
    _nodes: int = 0

    def cancel(self) -> None:
        """The requester goes away (closes the analysis board, moves on)."""
        self.gone.set()

    async def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        """Wait until `predicate(job)` holds, at every change of the job."""
        with anyio.fail_after(timeout):
            while not predicate(self):
                changed = self.changed
                await changed.wait()

    def _touch(self) -> None:
        changed, self.changed = self.changed, anyio.Event()
        changed.set()

    def _update(self, info: UciInfo) -> None:
        """emit.rs's `Emit::update`, then `should_emit`."""
        pv_entry: tuple[int, list[str]] | None = None
        if info.depth is not None and info.has_score and info.pv is not None and (info.multipv > 1 or not info.bound):
            pv_entry = (info.depth, self._normalize(info.pv))
        if info.multipv <= 1:
            self._time = info.time_ms if info.time_ms is not None else self._time
            self._depth = info.depth if info.depth is not None else self._depth
            self._nodes = info.nodes if info.nodes is not None else self._nodes
            self._pvs = [None] * len(self._pvs)
        elif info.depth is not None:
            self._depth = min(self._depth, info.depth)
        if len(self._pvs) < info.multipv:
            self._pvs += [None] * (info.multipv - len(self._pvs))
        if pv_entry is not None:
            self._pvs[info.multipv - 1] = pv_entry
        if self._pvs and all(pv is not None for pv in self._pvs):
            self.emits.append(Emit(self._time, self._depth, self._nodes, [pv for pv in self._pvs if pv is not None]))

    def _normalize(self, pv: list[str]) -> list[str]:
        """emit.rs's `normalize_pv`, and the check that the provider wrote Chess960 moves."""
        board = self.board.copy(stack=False)
        moves: list[str] = []
        for text in pv[:PV_PLIES]:
            try:
                move = board.parse_uci(text)
            except ValueError:
                self.problems.append(f"illegal PV move {text} in {board.fen()}")
                break
            if board.uci(move, chess960=True) != text:
                self.problems.append(f"PV move {text} is not in Chess960 notation")
            moves.append(board.uci(move, chess960=True))
            board.push(move)
        return moves


class Broker:
    """`async with Broker() as broker:` serves on `broker.url` until the block ends."""

    def __init__(self, *, token: str = "", port: int = 0, poll_timeout: float = POLL_TIMEOUT) -> None:
        self.token = token or secrets.token_urlsafe(16)
        self.port = port
        self.poll_timeout = poll_timeout
        self.engines: dict[str, dict[str, Any]] = {}
        self.registrations: list[tuple[str, dict[str, Any]]] = []  # (method, body) in order
        self.jobs: list[BrokerJob] = []
        self.polls = 0
        #: Statuses (with headers) the next work polls answer with instead of waiting: 5xx, 429.
        self.fail_polls: list[tuple[int, dict[str, str]]] = []
        self.requests_seen: list[str] = []  # "METHOD path" of every request
        self.provider_secrets: set[str] = set()  # jobs go only to a provider with one of these
        self._queue: list[BrokerJob] = []
        self._queued = anyio.Event()
        self._ids = itertools.count(1)
        self._tasks: anyio.abc.TaskGroup | None = None
        self._listener: anyio.streams.stapled.MultiListener[anyio.abc.SocketStream] | None = None
        self._streams: set[anyio.abc.SocketStream] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Broker:
        self._listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=self.port)
        self.port = self._listener.extra(anyio.abc.SocketAttribute.local_port)
        self._tasks = anyio.create_task_group()
        await self._tasks.__aenter__()
        self._tasks.start_soon(self._accept)
        return self

    async def _accept(self) -> None:
        """Serve each connection; one accepted just as the broker closes is closed with it
        (anyio's `serve` would leave it unclosed if its task never started)."""
        assert self._listener is not None
        (listener,) = self._listener.listeners
        assert isinstance(listener, anyio.abc.SocketListener)
        try:
            async with anyio.create_task_group() as tasks:
                while True:
                    stream = await listener.accept()
                    self._streams.add(stream)
                    tasks.start_soon(self._serve_connection, stream)
        finally:
            with anyio.CancelScope(shield=True):
                for stream in list(self._streams):
                    await stream.aclose()

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        traceback: TracebackType | None) -> bool | None:
        assert self._tasks is not None and self._listener is not None
        self._tasks.cancel_scope.cancel()
        try:
            return await self._tasks.__aexit__(exc_type, exc, traceback)
        finally:
            await self._listener.aclose()

    # -- the requester's side -----------------------------------------------------------------

    def submit(self, *, fen: str = chess.STARTING_FEN, moves: Sequence[str] = (), session_id: str = "s1",
               threads: int = 1, hash_mb: int = 16, multipv: int = 1, variant: str = "chess",
               limit: tuple[str, int] = ("depth", 3), raw: dict[str, Any] | None = None) -> BrokerJob:
        """Ask for analysis, as the analysis board does; `raw` hands out that work unchecked
        (lila-engine checks work before queueing it; a provider must not trust that)."""
        work = raw if raw is not None else {
            "sessionId": session_id, "threads": threads, "hash": hash_mb, "multiPv": multipv, "variant": variant,
            "initialFen": fen, "moves": list(moves), limit[0]: limit[1],
        }
        board = chess.Board(chess960=True)
        if raw is None:
            board = chess.Board(fen, chess960=True)
            for move in moves:
                board.push(board.parse_uci(move))
        job = BrokerJob(f"job{next(self._ids)}", work, board, time.monotonic())
        self.jobs.append(job)
        self._queue.append(job)
        queued, self._queued = self._queued, anyio.Event()
        queued.set()
        return job

    # -- HTTP -----------------------------------------------------------------------------------

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        connection = h11.Connection(h11.SERVER)
        async with stream:
            try:
                while True:
                    event = await _next_event(connection, stream)
                    if not isinstance(event, h11.Request):
                        return
                    await self._route(connection, stream, event)
                    if connection.our_state is h11.MUST_CLOSE or connection.their_state is not h11.DONE:
                        return
                    connection.start_next_cycle()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError, h11.ProtocolError):
                return
            finally:
                self._streams.discard(stream)

    async def _route(self, connection: h11.Connection, stream: anyio.abc.SocketStream, request: h11.Request) -> None:
        path = request.target.decode()
        method = request.method.decode()
        self.requests_seen.append(f"{method} {path}")
        headers = {name.decode().lower(): value.decode() for name, value in request.headers}
        if method == "POST" and path == "/api/external-engine/work":
            body = await _read_body(connection, stream)
            await self._acquire(connection, stream, body)
            return
        work_path = _WORK_PATH.fullmatch(path)
        if method == "POST" and work_path:
            await self._answer(connection, stream, work_path.group(1))
            return
        body = await _read_body(connection, stream)
        if headers.get("authorization") != f"Bearer {self.token}":
            await _respond(connection, stream, 401, {"error": "No such token"})
            return
        engine_path = _ENGINE_PATH.fullmatch(path)
        if method == "GET" and path == "/api/external-engine":
            await _respond(connection, stream, 200, list(self.engines.values()))
        elif method == "POST" and path == "/api/external-engine":
            registration = json.loads(body)
            self.registrations.append(("POST", registration))
            engine_id = f"eei_{next(self._ids)}"
            self.engines[engine_id] = self._engine(engine_id, registration)
            await _respond(connection, stream, 200, self.engines[engine_id])
        elif method == "PUT" and engine_path and engine_path.group(1) in self.engines:
            registration = json.loads(body)
            self.registrations.append(("PUT", registration))
            engine_id = engine_path.group(1)
            self.engines[engine_id] = self._engine(engine_id, registration)
            await _respond(connection, stream, 200, self.engines[engine_id])
        else:
            await _respond(connection, stream, 404, {"error": "Not found"})

    def _engine(self, engine_id: str, registration: dict[str, Any]) -> dict[str, Any]:
        engine: dict[str, Any] = {key: registration[key] for key in ("name", "maxThreads", "maxHash", "variants")
                                  if key in registration}
        self.provider_secrets.add(str(registration.get("providerSecret")))
        return {"id": engine_id, "clientSecret": "ees_" + engine_id, "userId": "someone", "providerData": None,
                **engine}

    async def _acquire(self, connection: h11.Connection, stream: anyio.abc.SocketStream, body: bytes) -> None:
        self.polls += 1
        if self.fail_polls:
            status, headers = self.fail_polls.pop(0)
            await _respond(connection, stream, status, {"error": "on purpose"}, headers)
            return
        secret = json.loads(body or b"{}").get("providerSecret")
        deadline = time.monotonic() + self.poll_timeout
        if secret not in self.provider_secrets:  # lila-engine: no engine has it, so no work ever comes
            await anyio.sleep(self.poll_timeout)
            await _respond(connection, stream, 204, None)
            return
        while True:
            while self._queue and self._queue[0].gone.is_set():
                self._queue.pop(0)  # the hub drops a job whose requester left (`IsValid`)
            if self._queue:
                job = self._queue.pop(0)
                break
            queued = self._queued
            with anyio.move_on_after(deadline - time.monotonic()):
                await queued.wait()
            if time.monotonic() >= deadline and not self._queue:
                await _respond(connection, stream, 204, None)
                return
        engine = next(iter(self.engines.values()), {"id": "eei_0", "name": "unregistered"})
        try:
            await _respond(connection, stream, 200, {"id": job.id, "work": job.work, "engine": engine})
        except BaseException:
            self._queue.insert(0, job)  # nobody got it: the next poll does
            raise
        job.handed_out_at = time.monotonic()
        job.handed_out.set()
        job._touch()

    async def _answer(self, connection: h11.Connection, stream: anyio.abc.SocketStream, job_id: str) -> None:
        job = next((job for job in self.jobs if job.id == job_id and job.handed_out_at is not None
                    and job.ending is None), None)
        if job is None:
            await _respond(connection, stream, 404, "work not found or cancelled or expired")
            return
        status = 200
        async with anyio.create_task_group() as tasks:

            async def watch() -> None:
                await job.gone.wait()
                job.ending = job.ending or "gone"
                tasks.cancel_scope.cancel()

            tasks.start_soon(watch)
            buffer = b""
            while job.ending is None:
                try:
                    event = await _next_event(connection, stream)
                except h11.ProtocolError:  # the provider closed the connection mid-body
                    job.ending = "closed"
                    break
                if isinstance(event, h11.Data):
                    buffer += bytes(event.data)
                    *complete, buffer = buffer.split(b"\n")
                    for raw in complete:
                        if not self._take_line(job, raw.decode("utf-8", "replace").rstrip("\r")):
                            status = 400
                            break
                elif isinstance(event, h11.EndOfMessage):
                    if buffer.strip():
                        if not self._take_line(job, buffer.decode("utf-8", "replace")):
                            status = 400
                    job.ending = job.ending or "closed"
                else:
                    job.ending = job.ending or "closed"
            tasks.cancel_scope.cancel()
        job.ended_at = time.monotonic()
        job.ended.set()
        job._touch()
        with anyio.CancelScope(shield=True), anyio.move_on_after(2):
            try:
                await _respond(connection, stream, status, None, {"Connection": "close"})
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, ConnectionError, h11.ProtocolError):
                pass

    def _take_line(self, job: BrokerJob, line: str) -> bool:
        """Fold one line into the job; False (the job ends in error) where lila-engine would
        answer 400."""
        if job.first_line_at is None:
            job.first_line_at = time.monotonic()
        job.lines.append(line)
        try:
            parsed = parse_uci_line(line)
        except UciLineError as error:
            job.problems.append(f"lila-engine would refuse {line!r}: {error}")
            job.ending = "error"
            return False
        if parsed == "bestmove":
            job.ending = "bestmove"
        elif isinstance(parsed, UciInfo):
            job._update(parsed)
        job._touch()
        return True


async def _next_event(connection: h11.Connection, stream: anyio.abc.SocketStream) -> Any:
    while True:
        event = connection.next_event()
        if event is not h11.NEED_DATA:
            return event
        try:
            data = await stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionError):
            data = b""
        connection.receive_data(data)


async def _read_body(connection: h11.Connection, stream: anyio.abc.SocketStream) -> bytes:
    body = b""
    while True:
        event = await _next_event(connection, stream)
        if isinstance(event, h11.Data):
            body += bytes(event.data)
        elif isinstance(event, h11.EndOfMessage):
            return body
        else:
            raise anyio.BrokenResourceError("the request ended early")


async def _respond(connection: h11.Connection, stream: anyio.abc.SocketStream, status: int, payload: Any,
                   headers: dict[str, str] | None = None) -> None:
    body = b"" if payload is None else (payload.encode() if isinstance(payload, str) else json.dumps(payload).encode())
    fields = [("Content-Length", str(len(body)))] if status != 204 else []
    if body:
        fields.append(("Content-Type", "text/plain" if isinstance(payload, str) else "application/json"))
    fields += list((headers or {}).items())
    await stream.send(connection.send(h11.Response(status_code=status, headers=fields)))
    if body:
        await stream.send(connection.send(h11.Data(data=body)))
    await stream.send(connection.send(h11.EndOfMessage()))
