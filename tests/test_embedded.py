"""The embedded library: python-chess's Protocol API, in-process, never stalling the host.

Every behaviour runs twice, once in an asyncio program and once in a trio program: the same
scenario, through `anyio.run(..., backend=...)`.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import chess
import chess.engine
import pytest

import cb_async
from cb_async.embedded import Engine

START = chess.Board()
ITALIAN = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")
BACKENDS = ["asyncio", "trio"]

Scenario = Callable[[Engine], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(function: Scenario) -> Scenario:
    """A behaviour of an open engine, run on each backend by `test_behaviour`."""
    SCENARIOS[function.__name__] = function
    return function


async def until(predicate: Callable[[], bool], timeout: float = 10) -> None:
    """Wait for `predicate` at every scheduling point (no fixed sleeps)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.001)


@scenario
async def identity_and_options(engine: Engine) -> None:
    assert engine.id["name"].startswith("cb-async")
    assert isinstance(engine.options["Hash"], chess.engine.Option)
    assert engine.options["Hash"].type == "spin" and engine.options["Hash"].default == 16
    assert engine.config["Hash"] == 8


@scenario
async def play_returns_a_legal_move_with_info(engine: Engine) -> None:
    result = await engine.play(ITALIAN, chess.engine.Limit(depth=3), info=chess.engine.INFO_ALL)
    assert isinstance(result, chess.engine.PlayResult)
    assert result.move in ITALIAN.legal_moves
    assert result.info["depth"] == 3
    assert isinstance(result.info["score"], chess.engine.PovScore)
    assert result.info["score"].turn == chess.BLACK
    assert result.info["pv"][0] == result.move
    assert not result.draw_offered and not result.resigned


@scenario
async def play_without_info_has_an_empty_info(engine: Engine) -> None:
    result = await engine.play(START, chess.engine.Limit(depth=2))
    assert result.info == {}


@scenario
async def analyse_single_and_multipv(engine: Engine) -> None:
    info = await engine.analyse(ITALIAN, chess.engine.Limit(depth=3))
    assert isinstance(info, dict) and info["depth"] == 3
    infos = await engine.analyse(ITALIAN, chess.engine.Limit(depth=3), multipv=3)
    assert isinstance(infos, list) and len(infos) == 3
    assert len({i["pv"][0] for i in infos}) == 3
    scores = [i["score"].relative.score(mate_score=100_000) for i in infos]
    assert scores == sorted(scores, reverse=True)


@scenario
async def root_moves(engine: Engine) -> None:
    move = chess.Move.from_uci("h2h3")
    result = await engine.play(START, chess.engine.Limit(depth=2), root_moves=[move])
    assert result.move == move


@scenario
async def analysis_streams_and_stops(engine: Engine) -> None:
    analysis = await engine.analysis(ITALIAN)
    async for info in analysis:
        if info.get("depth", 0) >= 3:
            break
    analysis.stop()
    with anyio.fail_after(5):
        best = await analysis.wait()
    assert best.move in ITALIAN.legal_moves
    assert analysis.info["depth"] >= 3


@scenario
async def analysis_with_a_limit_ends_by_itself(engine: Engine) -> None:
    analysis = await engine.analysis(START, chess.engine.Limit(depth=2))
    depths = [info["depth"] async for info in analysis if "depth" in info]
    assert depths[-1] == 2
    assert (await analysis.wait()).move in START.legal_moves
    assert analysis.empty() and not analysis.would_block()
    assert await analysis.next() is None


@scenario
async def cancelling_play_stops_the_search_and_leaves_the_engine_ready(engine: Engine) -> None:
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(engine.play, START, chess.engine.Limit(depth=60))
        await until(lambda: engine._running is not None)  # the search is under way
        tasks.cancel_scope.cancel()
    with anyio.fail_after(2):
        await engine.ping()
    assert engine._running is None
    with anyio.fail_after(10):
        result = await engine.play(START, chess.engine.Limit(depth=2))
    assert result.move in START.legal_moves


@scenario
async def a_new_command_ends_a_running_analysis(engine: Engine) -> None:
    analysis = await engine.analysis(START)
    result = await engine.play(ITALIAN, chess.engine.Limit(depth=2))
    assert result.move in ITALIAN.legal_moves
    with anyio.fail_after(5):
        best = await analysis.wait()
    assert best.move is None  # ended without a move, like python-chess does


@scenario
async def pondering_hit_and_miss(engine: Engine) -> None:
    board = chess.Board()
    limit = chess.engine.Limit(depth=3)  # a ponder search keeps the depth: it ends, then holds its answer
    first = await engine.play(board, limit, ponder=True)
    assert first.ponder is not None
    board.push(first.move)
    board.push(first.ponder)  # the expected reply: a hit
    second = await engine.play(board, limit, ponder=True)
    assert second.move in board.legal_moves
    board.push(second.move)
    board.push(next(m for m in board.legal_moves if m != second.ponder))  # a miss
    third = await engine.play(board, limit)
    assert third.move in board.legal_moves


@scenario
async def configure_errors_like_python_chess(engine: Engine) -> None:
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"MultiPV": 2})
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"NoSuchOption": 1})
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"Hash": 0})
    await engine.configure({"move overhead": 50})
    assert engine.config["Move Overhead"] == 50


@scenario
async def a_search_whose_worker_dies_is_an_error_not_a_made_up_move(engine: Engine) -> None:
    assert engine._runner is not None
    process = engine._runner._process
    assert process is not None and process.pid is not None
    pid = process.pid
    async with anyio.create_task_group() as tasks:
        async def play() -> None:
            with pytest.raises(chess.engine.EngineTerminatedError, match="could not run"):
                await engine.play(START, chess.engine.Limit(depth=60))

        tasks.start_soon(play)
        await until(lambda: engine._running is not None)
        os.kill(pid, signal.SIGKILL)
    with anyio.fail_after(30):
        result = await engine.play(START, chess.engine.Limit(depth=2))  # a new worker took over
    assert result.move in START.legal_moves


@scenario
async def the_warm_up_leaves_no_trace_in_the_first_search(engine: Engine) -> None:
    """The worker warms its search up before it says it is ready, then forgets it: the first
    search counts the same nodes as a fresh searcher's."""
    from cb_async.limits import Limits
    from cb_async.search import Searcher, StopToken

    fresh = Searcher().search(ITALIAN, (), Limits(depth=4), StopToken())
    info = await engine.analyse(ITALIAN, chess.engine.Limit(depth=4))
    assert info["nodes"] == fresh.nodes and info["pv"][0] == fresh.best_move


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_behaviour(name: str, backend: str) -> None:
    async def run() -> None:
        async with cb_async.Engine(options={"Hash": 8}) as engine:
            await SCENARIOS[name](engine)

    anyio.run(run, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_session_runs_in_the_task_group_its_caller_gives(backend: str) -> None:
    """Structured concurrency: the engine's session is a task of the caller's task group, which
    cannot be left while it runs; `aclose` ends it, and the group then exits at once."""
    async def run() -> None:
        with anyio.fail_after(60):
            async with anyio.create_task_group() as group:
                engine = await Engine().start(group)
                result = await engine.play(START, chess.engine.Limit(depth=1))
                assert result.move in START.legal_moves
                await engine.aclose()
            assert engine._background is None  # nothing was started outside the group

    anyio.run(run, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_first_play_clears_no_table_but_a_new_game_does(backend: str) -> None:
    """The worker has just cleared its table after its warm-up: a first `NewGame` round trip
    would carry nothing. A new game after a search clears it."""
    async def run() -> None:
        async with Engine() as engine:
            runner = engine._runner
            assert runner is not None
            cleared: list[int] = []
            clear = runner.new_game

            async def counted() -> None:
                cleared.append(1)
                await clear()

            runner.new_game = counted  # type: ignore[method-assign]
            await engine.play(START, chess.engine.Limit(depth=1), game="first")
            assert cleared == []
            await engine.play(START, chess.engine.Limit(depth=1), game="first")
            assert cleared == []
            await engine.play(START, chess.engine.Limit(depth=1), game="second")
            assert cleared == [1]

    anyio.run(run, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_engines_search_side_by_side(backend: str) -> None:
    async def run() -> None:
        results: dict[str, chess.engine.PlayResult] = {}
        async with Engine() as a, Engine() as b:
            async def play(name: str, engine: Engine, board: chess.Board) -> None:
                results[name] = await engine.play(board, chess.engine.Limit(depth=3))

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(play, "a", a, START)
                tasks.start_soon(play, "b", b, ITALIAN)
            assert results["a"].move in START.legal_moves and results["b"].move in ITALIAN.legal_moves
            assert a._runner is not None and b._runner is not None
            assert a._runner._process.pid != b._runner._process.pid  # type: ignore[union-attr]

    anyio.run(run, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_engine_opened_without_a_context_manager_closes_and_frees_its_worker(backend: str) -> None:
    async def run() -> None:
        engine = await Engine().start()
        assert engine._runner is not None and engine._runner._process is not None
        pid = engine._runner._process.pid
        assert pid is not None
        await engine.ping()
        await engine.aclose()
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)  # gone, and reaped
        with pytest.raises(chess.engine.EngineTerminatedError):
            await engine.ping()
        await engine.aclose()  # twice is fine

    anyio.run(run, backend=backend)


def test_simple_engine_blocks() -> None:
    with cb_async.SimpleEngine() as engine:
        assert engine.id["name"].startswith("cb-async")
        result = engine.play(START, chess.engine.Limit(depth=2))
        assert result.move in START.legal_moves
        with engine.analysis(START) as analysis:
            for info in analysis:
                if info.get("depth", 0) >= 2:
                    break
        assert analysis.wait().move in START.legal_moves
        engine.ping()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts descriptors in /proc")
def test_closed_engines_free_their_descriptors_at_once() -> None:
    """No `gc.collect()`: a closed engine gives back its pipes, sentinel and reader at close."""
    async def run() -> list[int]:
        counts = []
        for _ in range(8):
            async with Engine() as engine:
                await engine.ping()
            counts.append(len(os.listdir("/proc/self/fd")))
        return counts

    counts = anyio.run(run)
    # The first engine starts the forkserver once; every later open and close leaves nothing.
    assert len(set(counts[1:])) == 1, counts


@pytest.mark.skipif(os.environ.get("CB_ASYNC_START_METHOD") == "spawn", reason="this is the spawn run")
def test_the_library_behaves_the_same_under_spawn() -> None:
    """macOS and Windows start workers with `spawn`: run this file and the docs' examples again
    with it, here."""
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parent
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests / "test_embedded.py"),
         str(tests / "test_docs_examples.py")],
        env={**os.environ, "CB_ASYNC_START_METHOD": "spawn"}, capture_output=True, text=True, timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]


UNGUARDED = """
import asyncio
import chess, chess.engine
import cb_async

async def main():
    async with cb_async.Engine() as engine:
        print((await engine.play(chess.Board(), chess.engine.Limit(depth=1))).move)

asyncio.run(main())
"""


@pytest.mark.parametrize("method", ["forkserver", "spawn"])
def test_a_script_without_the_main_guard_gets_a_clear_error(method: str, tmp_path: Path) -> None:
    """The worker imports the host's main module: without the guard it cannot start, and
    `Engine()` says so at once (never a hang, never a made-up move)."""
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(UNGUARDED)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "CB_ASYNC_START_METHOD": method})
    assert run.returncode == 1 and run.stdout == ""
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("chess.engine.EngineTerminatedError: the search process could not start")
    assert 'if __name__ == "__main__":' in last


def test_a_threaded_host_is_never_forked() -> None:
    """Threads run in the host before the engine opens: its worker comes from a process without
    threads (forkserver on Linux, spawn elsewhere), and no fork warning is raised."""
    import threading
    import warnings

    stop = threading.Event()
    busy = threading.Thread(target=stop.wait, daemon=True)
    busy.start()
    unraisable: list[object] = []
    previous_hook = sys.unraisablehook
    sys.unraisablehook = unraisable.append

    async def run() -> str:
        async with Engine() as engine:
            await engine.ping()
            assert engine._runner is not None
            return str(engine._runner._context.get_start_method())

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            method = anyio.run(run)
    finally:
        sys.unraisablehook = previous_hook
        stop.set()
    expected = os.environ.get("CB_ASYNC_START_METHOD") or ("forkserver" if sys.platform.startswith("linux") else "spawn")
    assert method == expected and method != "fork"
    assert unraisable == []

