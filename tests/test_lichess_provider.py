"""`cb-async lichess-engine` against a broker of our own that follows lila-engine's rules.

No test reaches Lichess: `cb_async.lichess.broker.Broker` serves the registration endpoints and
the broker's long-poll on 127.0.0.1, parses the streamed answer as lila-engine does and records
what a requester would receive. Each behaviour runs on cb-async and, where it is installed, on
Stockfish through `--engine` (python-chess's UCI client).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import chess
import pytest

httpx = pytest.importorskip("httpx", reason="the lichess extra (httpx) is not installed")

from cb_async.lichess import api  # noqa: E402
from cb_async.lichess.broker import Broker, BrokerJob, parse_uci_line, UciLineError  # noqa: E402
from cb_async.lichess.engines import open_engine  # noqa: E402
from cb_async.lichess.provider import JobReport, Provider, Settings  # noqa: E402
from cb_async.lichess.work import MAX_MOVES, WorkError, info_line, parse_job  # noqa: E402

STOCKFISH = shutil.which("stockfish") or ("/usr/games/stockfish" if os.access("/usr/games/stockfish", os.X_OK) else None)
ENGINES = [
    pytest.param(None, id="cb-async"),
    pytest.param(STOCKFISH, id="stockfish", marks=pytest.mark.skipif(
        STOCKFISH is None, reason="Stockfish is not installed (Debian: sh scripts/install-debian-engines.sh stockfish)")),
]
ITALIAN_MOVES = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1h1"]  # castling as king takes rook
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def settings_for(broker_url: str) -> Settings:
    """Fast retries, so that the failure tests take a fraction of a second."""
    return Settings(broker_url, broker_url, "test engine", 2, 64, backoff_first=0.05, backoff_most=0.2)


@asynccontextmanager
async def serving(command: str | None, broker: Broker,
                  settings: Settings | None = None) -> AsyncIterator[Provider]:
    """A provider for `command` on `broker`, registered and polling, for the block."""
    engine = await open_engine(command)
    provider: Provider | None = None
    try:
        async with httpx.AsyncClient() as http:
            provider = Provider(settings or settings_for(broker.url), engine, http, api.Secret("s" * 32),
                                lambda: open_engine(command))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_register_and_serve, provider, broker)
                yield provider
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await (provider.engine if provider is not None else engine).aclose()


async def _register_and_serve(provider: Provider, broker: Broker) -> None:
    await provider.register(api.Secret(broker.token))
    await provider.serve()


async def report_of(provider: Provider, job: BrokerJob, ended: bool = True, timeout: float = 30) -> JobReport:
    """The provider's report of `job`, once it has ended (waits on the provider's own events)."""
    with anyio.fail_after(timeout):
        while True:
            for report in provider.reports:
                if report.work.job_id == job.id and (not ended or report.search_stopped_at is not None):
                    return report
            await anyio.sleep(0.005)


def assert_clean(job: BrokerJob) -> None:
    assert job.problems == []
    for line in job.lines:
        assert parse_uci_line(line) is not None, line


# -- jobs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ENGINES)
@pytest.mark.parametrize("limit", [("depth", 4), ("nodes", 3000), ("movetime", 400)])
async def test_a_job_of_each_limit_kind_streams_info_lines_and_ends_with_bestmove(
        command: str | None, limit: tuple[str, int]) -> None:
    async with Broker() as broker, serving(command, broker) as provider:
        job = broker.submit(moves=ITALIAN_MOVES, limit=limit)
        await job.wait_for(lambda j: j.ended_at is not None)
        assert_clean(job)
        assert job.ending == "bestmove" and job.lines[-1].startswith("bestmove ")
        assert job.emits, job.lines
        assert all(line.startswith("info ") for line in job.lines[:-1])
        best = job.lines[-1].split()[1]
        assert job.board.parse_uci(best) in job.board.legal_moves
        if limit[0] == "depth":
            assert job.emits[-1].depth == 4
        assert job.handed_out_at is not None and job.ended_at is not None
        if limit[0] == "movetime":
            assert job.ended_at - job.handed_out_at >= 0.35
        report = await report_of(provider, job)
        assert report.ending == "done" and report.first_line_at is not None
        # Registered once, with what the engine can do.
        assert [method for method, _ in broker.registrations] == ["POST"]
        registration = broker.registrations[0][1]
        assert registration["name"] == "test engine" and registration["variants"] == ["chess"]
        assert registration["maxThreads"] == 2 and registration["maxHash"] == 64


@pytest.mark.parametrize("command", ENGINES)
async def test_multipv_3_gives_every_depth_with_all_three_lines(command: str | None) -> None:
    async with Broker() as broker, serving(command, broker):
        job = broker.submit(fen=KIWIPETE, multipv=3, limit=("depth", 4))
        await job.wait_for(lambda j: j.ended_at is not None)
        assert_clean(job)
        # As emit.rs: a depth goes out once its three lines are in (the first depth also goes
        # out line by line, before the broker knows how many lines come).
        complete = [emit for emit in job.emits if len(emit.pvs) == 3]
        assert all(len(emit.pvs) == 3 for emit in job.emits if emit.depth > 1)
        assert {emit.pvs[0][0] for emit in complete} == {1, 2, 3, 4}
        for emit in complete:
            assert len({pv[0] for _, pv in emit.pvs}) == 3  # three different first moves
            assert len({depth for depth, _ in emit.pvs}) == 1  # all three of one depth
        assert [depth for depth, _ in job.emits[-1].pvs] == [4, 4, 4]
        assert all(len(pv) <= 30 for emit in job.emits for _, pv in emit.pvs)


@pytest.mark.parametrize("command", ENGINES)
async def test_new_work_preempts_the_running_job_whose_search_ends_first(command: str | None) -> None:
    async with Broker() as broker, serving(command, broker) as provider:
        old = broker.submit(limit=("movetime", 60_000))
        await old.wait_for(lambda j: j.first_line_at is not None)
        new = broker.submit(fen=KIWIPETE, session_id="s2", limit=("depth", 2))
        await new.wait_for(lambda j: j.ended_at is not None)
        assert new.ending == "bestmove"
        old_report, new_report = await report_of(provider, old), await report_of(provider, new)
        assert old_report.ending == "preempted"
        assert old_report.search_stopped_at is not None and new_report.started_at is not None
        assert old_report.search_stopped_at <= new_report.started_at  # never two searches at once
        await old.wait_for(lambda j: j.ended_at is not None, timeout=5)
        assert old.ending == "closed"  # the old answer ended without bestmove
        if command is None:
            assert provider.engine.engine._running is None


@pytest.mark.parametrize("command", ENGINES)
async def test_the_requester_going_away_stops_the_search_at_once(command: str | None) -> None:
    async with Broker() as broker, serving(command, broker) as provider:
        job = broker.submit(limit=("movetime", 60_000))
        await job.wait_for(lambda j: j.first_line_at is not None)
        gone_at = time.monotonic()
        job.cancel()
        report = await report_of(provider, job, timeout=10)
        assert report.ending == "gone"
        assert report.search_stopped_at is not None and report.search_stopped_at - gone_at < 5
        if command is None:
            assert provider.engine.engine._running is None
        lines_then = len(job.lines)
        after = broker.submit(limit=("depth", 2))
        await after.wait_for(lambda j: j.ended_at is not None)
        assert after.ending == "bestmove" and len(job.lines) == lines_then


@pytest.mark.parametrize("command", ENGINES)
async def test_a_new_session_is_a_new_game(command: str | None) -> None:
    async with Broker() as broker, serving(command, broker) as provider:
        calls: list[object] = []
        engine = provider.engine.engine
        original = engine.analysis

        async def spy(*args: object, **kwargs: object) -> object:
            calls.append(kwargs.get("game"))
            return await original(*args, **kwargs)

        engine.analysis = spy
        for session in ("a", "a", "b"):
            job = broker.submit(session_id=session, limit=("depth", 1))
            await job.wait_for(lambda j: j.ended_at is not None)
        assert calls == ["a", "a", "b"]  # `game` changes with the session: a new game, the hash cleared
        if command is None:
            assert engine._game == "b"


@pytest.mark.skipif(STOCKFISH is None, reason="Stockfish is not installed")
async def test_an_engine_that_dies_mid_job_fails_that_job_and_is_started_again(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cb_async.lichess")
    async with Broker() as broker, serving(STOCKFISH, broker) as provider:
        job = broker.submit(limit=("movetime", 60_000))
        await job.wait_for(lambda j: j.first_line_at is not None)
        os.kill(provider.engine.engine.transport.get_pid(), signal.SIGKILL)
        report = await report_of(provider, job, timeout=10)
        assert report.ending == "failed"
        await job.wait_for(lambda j: j.ended_at is not None, timeout=5)
        assert job.ending == "closed" and not any(line.startswith("bestmove") for line in job.lines)
        after = broker.submit(limit=("depth", 3))
        await after.wait_for(lambda j: j.ended_at is not None)
        assert after.ending == "bestmove"
        assert any("the engine died: starting it again" in r.getMessage() for r in caplog.records)


# -- a broker that fails ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.parametrize("command", ENGINES)
async def test_a_broker_down_at_start_is_waited_for(command: str | None, caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    engine = await open_engine(command)
    caplog.set_level(logging.INFO, logger="cb_async.lichess")
    try:
        async with httpx.AsyncClient() as http, anyio.create_task_group() as tasks:
            provider = Provider(settings_for(url), engine, http, api.Secret("s" * 32))
            broker = Broker(port=port)
            tasks.start_soon(_register_and_serve, provider, broker)
            with anyio.fail_after(10):
                while sum("cannot register yet" in r.getMessage() for r in caplog.records) < 2:
                    await anyio.sleep(0.01)
            async with broker:
                job = broker.submit(limit=("depth", 2))
                await job.wait_for(lambda j: j.ended_at is not None)
                assert job.ending == "bestmove"
                tasks.cancel_scope.cancel()
    finally:
        await engine.aclose()


@pytest.mark.parametrize("command", ENGINES)
async def test_5xx_backs_off_and_429_waits_as_told(command: str | None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cb_async.lichess")
    async with Broker() as broker:
        broker.fail_polls = [(503, {}), (500, {}), (429, {"Retry-After": "1"})]
        async with serving(command, broker):
            job = broker.submit(limit=("depth", 2))
            await job.wait_for(lambda j: j.ended_at is not None)
            assert job.ending == "bestmove"
            messages = [r.getMessage() for r in caplog.records]
            unavailable = [m for m in messages if "the broker is unavailable" in m]
            assert len(unavailable) == 2 and "503" in unavailable[0] and "500" in unavailable[1]
            assert any("429 Too Many Requests: waiting 1 s" in m for m in messages)
            assert any("the broker answers again" in m for m in messages)
            assert job.handed_out_at is not None and job.handed_out_at - job.submitted_at >= 1.0


@pytest.mark.parametrize("command", ENGINES)
async def test_malformed_work_is_refused_with_one_line_and_serving_goes_on(
        command: str | None, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cb_async.lichess")
    good = {"sessionId": "s", "threads": 1, "hash": 16, "multiPv": 1, "variant": "chess",
            "initialFen": chess.STARTING_FEN, "moves": [], "depth": 2}
    bad = {
        "unsupported variant 'atomic'": {**good, "variant": "atomic"},
        "bad initialFen": {**good, "initialFen": "not a position"},
        f"too many moves (601, at most {MAX_MOVES})": {**good, "moves": ["g1f3", "g8f6", "f3g1", "f6g8"] * 150 + ["e2e4"]},
        "illegal move 'e2e5'": {**good, "moves": ["e2e5"]},
        "multiPv 6 is out of range": {**good, "multiPv": 6},
    }
    async with Broker() as broker, serving(command, broker) as provider:
        for reason, work in bad.items():
            job = broker.submit(raw=work)
            await job.wait_for(lambda j: j.ended_at is not None, timeout=10)
            assert job.lines == [] and job.ending == "closed"  # an empty answer: nobody waits
            refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
            assert len(refusals) == 1 and reason in refusals[0], refusals
            caplog.clear()
        assert provider.refused == len(bad) and provider.reports == []
        job = broker.submit(limit=("depth", 2))
        await job.wait_for(lambda j: j.ended_at is not None)
        assert job.ending == "bestmove"


# -- the work and the lines, without a broker ---------------------------------------------------


def test_threads_and_hash_are_capped_at_the_registered_maxima() -> None:
    job = {"id": "j", "work": {"sessionId": "s", "threads": 64, "hash": 4096, "multiPv": 1, "variant": "standard",
                               "initialFen": chess.STARTING_FEN, "moves": [], "nodes": 10}}
    work = parse_job(job, variants=("chess",), max_threads=2, max_hash=64)
    assert (work.threads, work.hash_mb, work.variant, work.limit.nodes) == (2, 64, "chess", 10)
    with pytest.raises(WorkError, match="exactly one of movetime, depth and nodes"):
        parse_job({"id": "j", "work": {**job["work"], "depth": 3}}, variants=("chess",), max_threads=2, max_hash=64)


def test_info_lines_are_in_chess960_notation_and_drop_what_the_broker_ignores() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    castle = board.parse_uci("e1h1")
    score = chess.engine.PovScore(chess.engine.Cp(30), chess.WHITE)
    info: chess.engine.InfoDict = {"depth": 5, "seldepth": 7, "multipv": 1, "score": score, "nodes": 1234,
                                   "nps": 10_000, "time": 0.1234, "pv": [castle]}
    line = info_line(info, board)
    assert line == "info depth 5 seldepth 7 multipv 1 score cp 30 nodes 1234 nps 10000 time 123 pv e1h1"
    assert info_line({**info, "lowerbound": True}, board) is None  # bound-only first PV
    assert info_line({**info, "multipv": 2, "upperbound": True}, board) is not None
    assert info_line({"depth": 5, "nodes": 3}, board) is None
    mate = chess.engine.PovScore(chess.engine.Mate(-2), chess.WHITE)
    assert "score mate -2" in (info_line({**info, "score": mate}, board) or "")


@pytest.mark.parametrize("line", ["info depth x", "info score cp", "info multipv 9 depth 3", "info frobnicate 3"])
def test_the_broker_refuses_what_lila_engine_refuses(line: str) -> None:
    with pytest.raises(UciLineError):
        parse_uci_line(line)


# -- the command ---------------------------------------------------------------------------------


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "cb_async", "lichess-engine", *args]


async def start_command(broker: Broker, tmp_path: Path, *args: str,
                        token: str | None = None) -> tuple[anyio.abc.Process, Path]:
    env = {**os.environ, "LICHESS_TOKEN": token if token is not None else broker.token}
    secret_file = tmp_path / "secret"
    process = await anyio.open_process(
        command("--lichess-url", broker.url, "--broker-url", broker.url, "--secret-file", str(secret_file), *args),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return process, secret_file


async def stderr_of(process: anyio.abc.Process, timeout: float = 60) -> str:
    assert process.stderr is not None
    chunks: list[bytes] = []
    with anyio.fail_after(timeout):
        async for chunk in process.stderr:
            chunks.append(chunk)
        await process.wait()
    return b"".join(chunks).decode()


@pytest.mark.parametrize("engine_args", [
    pytest.param((), id="cb-async"),
    pytest.param(("--engine", STOCKFISH or "stockfish"), id="stockfish", marks=pytest.mark.skipif(
        STOCKFISH is None, reason="Stockfish is not installed (Debian: sh scripts/install-debian-engines.sh stockfish)")),
])
async def test_once_serves_one_job_with_one_progress_line_and_never_shows_the_token(
        engine_args: tuple[str, ...], tmp_path: Path) -> None:
    async with Broker(token="lip_TheTokenThatMustNotLeak123") as broker:
        process, secret_file = await start_command(broker, tmp_path, "--once", "--verbose", *engine_args)
        async with process:
            job = broker.submit(moves=ITALIAN_MOVES, multipv=2, limit=("depth", 3))
            text = await stderr_of(process)
        assert process.returncode == 0, text
        assert job.ending == "bestmove" and job.problems == []
        assert broker.token not in text
        secret = secret_file.read_text().strip()
        assert secret not in text and len(secret) >= 32
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
        progress = [line for line in text.splitlines() if f"job {job.id}:" in line]
        assert len(progress) == 1 and "depth 3" in progress[0] and progress[0].endswith(", done")
        sent = [line.split("> ", 1)[1] for line in text.splitlines() if " > " in line]
        assert sent == job.lines  # --verbose: the lines themselves, exactly as the broker got them


async def test_a_refused_token_is_one_line_without_the_token(tmp_path: Path) -> None:
    async with Broker() as broker:
        process, _ = await start_command(broker, tmp_path, "--once", token="lip_WrongTokenThatMustNotLeak")
        async with process:
            text = await stderr_of(process)
    assert process.returncode == 1
    assert "lip_WrongTokenThatMustNotLeak" not in text and "Traceback" not in text
    errors = [line for line in text.splitlines() if "the token was refused" in line]
    assert len(errors) == 1 and "engine:read and engine:write" in errors[0]


def test_no_token_is_a_usage_error_and_a_token_is_never_an_argument(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "LICHESS_TOKEN"}
    done = subprocess.run(command("--once"), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "LICHESS_TOKEN" in done.stderr
    done = subprocess.run(command("--token", "lip_abc"), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--token-file: cannot read lip_abc" in done.stderr  # only ever a file
    done = subprocess.run(command("--help"), env=env, capture_output=True, text=True, timeout=60)
    assert "--token " not in done.stdout and "--token-file FILE" in done.stdout


async def test_a_secret_file_readable_by_others_is_refused(tmp_path: Path) -> None:
    async with Broker() as broker:
        secret_file = tmp_path / "secret"
        secret_file.write_text("x" * 40)
        secret_file.chmod(0o644)
        process, _ = await start_command(broker, tmp_path, "--once")
        async with process:
            text = await stderr_of(process)
    assert process.returncode == 2 and "chmod 600" in text and "x" * 40 not in text


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
async def test_a_signal_stops_the_running_job_and_the_provider_cleanly(signal_number: int, tmp_path: Path) -> None:
    async with Broker() as broker:
        process, _ = await start_command(broker, tmp_path)
        async with process:
            job = broker.submit(limit=("movetime", 60_000))
            await job.wait_for(lambda j: j.first_line_at is not None, timeout=60)
            process.send_signal(signal_number)
            text = await stderr_of(process, timeout=20)
        await job.wait_for(lambda j: j.ended_at is not None, timeout=5)
    name = signal.Signals(signal_number).name
    assert process.returncode == 0, text
    assert job.ending == "closed" and "Traceback" not in text
    assert f"{name}: stopping" in text
    progress = [line for line in text.splitlines() if f"job {job.id}:" in line]
    assert len(progress) == 1 and progress[0].endswith(f"stopped by {name}")
    assert "stopped cleanly (1 jobs served)" in text


def test_the_engine_alone_does_not_import_httpx() -> None:
    done = subprocess.run([sys.executable, "-c", "import sys, cb_async.cli, cb_async.embedded; "
                           "print('httpx' in sys.modules)"], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False"



async def test_an_answer_the_broker_refuses_is_said_in_one_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="cb_async.lichess")

    async def lines() -> AsyncIterator[str]:
        yield "info depth 1 multipv 1 score cp 0 nodes 1 time 1 pv e2e4"

    async with Broker() as broker:
        # It answers at once, before or after the one line is sent: the answer ends either way.
        assert await api.answer(broker.url, "nosuchjob", lines()) in ("sent", "gone")
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert warnings == ["job nosuchjob: the broker refused the answer (404)"]
