"""A worker that stops answering (SIGSTOP, starved, wedged) never costs the game its deadline.

The session owns the clock: an overdue game search, or a stopped one that does not answer
within `STALL_GRACE`, is abandoned (its worker replaced) and answered with the best move of
the search's last main-line info, else the first legal move, with a message saying so. The
real worker under SIGSTOP is `conformance/test_faults.py`; here the scripted runner stalls.
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import anyio
import chess
import pytest

from cb_async.commands import Command, Go, PonderHit, Quit, Stop
from cb_async.events import Acknowledged, BestMove, Info, Message, SearchStarted
from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo
from cb_async.runner import ProcessRunner, WorkerAbandoned
from cb_async.search.settings import SearchSettings
from cb_async.session import MIN_STALL_GRACE, STALL_GRACE, Session, overdue_at
from fake_runner import FakeRunner


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []
        self.arrived: list[float] = []
        self.answered = anyio.Event()

    def sink(self, event: Any) -> list[Command]:
        self.events.append(event)
        self.arrived.append(time.monotonic())
        if isinstance(event, BestMove):
            self.answered.set()
        return []


def _info(move: str, depth: int = 6, multipv: int = 1) -> SearchInfo:
    return SearchInfo(depth, depth, multipv, Score(cp=35), 1000, 100_000, 10, (chess.Move.from_uci(move),))


async def _until(condition: Any, timeout: float = 5.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.001)


async def test_an_overdue_game_search_is_answered_with_its_best_info_move_and_its_worker_replaced() -> None:
    runner, out = FakeRunner(), Recorder()
    session = Session(runner, out.sink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        started = time.monotonic()
        session.submit(Go(Limits(movetime=100), received_at=started))
        await _until(lambda: runner.active is not None)
        search = runner.active
        assert search is not None and search.deadlines is not None
        search.post(_info("d2d4", depth=5))
        search.post(_info("g1f3", depth=5, multipv=2))  # not the main line: never the answer
        search.stall()
        with anyio.fail_after(5):
            await out.answered.wait()
        answer = next(event for event in out.events if isinstance(event, BestMove))
        answered_at = out.arrived[out.events.index(answer)]
        hard = search.deadlines[1]
        assert hard + STALL_GRACE <= answered_at < hard + STALL_GRACE + 1.0
        assert answer.result.best_move == chess.Move.from_uci("d2d4") and answer.stopped == "limit"
        assert answer.failure is None  # a real move of the search, not a fallback of a dead one
        notes = [event.text for event in out.events if isinstance(event, Message)]
        assert notes == ["the search process did not answer 100 ms by its deadline: answered with the best move "
                         "of its depth 5 iteration and started a new one"]
        assert search.abandoned and runner.replacements == 1
        search.finish()  # the old worker comes back: it is never heard again
        session.submit(Go(Limits(depth=2)))
        await _until(lambda: len(runner.searches) == 2)
        runner.searches[1].finish()
        await _until(lambda: sum(isinstance(event, BestMove) for event in out.events) == 2)
        assert [type(e) for e in out.events if not isinstance(e, Message)].count(BestMove) == 2
        session.submit(Quit())


async def test_a_stalled_search_is_answered_its_grace_after_the_stop() -> None:
    runner, out = FakeRunner(), Recorder()
    session = Session(runner, out.sink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        session.submit(Go(Limits(infinite=True)))
        await _until(lambda: runner.active is not None)
        search = runner.active
        assert search is not None
        search.post(_info("c2c4"))
        search.stall()
        stopped_at = time.monotonic()
        session.submit(Stop())
        with anyio.fail_after(5):
            await out.answered.wait()
        await _until(lambda: isinstance(out.events[-1], Acknowledged))
        answer = out.events[-2]
        assert isinstance(answer, BestMove) and answer.stopped == "stop"
        assert STALL_GRACE <= out.arrived[-2] - stopped_at < STALL_GRACE + 1.0
        assert answer.result.best_move == chess.Move.from_uci("c2c4")
        assert [type(event) for event in out.events] == [SearchStarted, Info, Message, BestMove, Acknowledged]
        assert search.stopped and search.abandoned
        session.submit(Quit())


async def test_a_stalled_search_without_infos_answers_the_first_legal_move() -> None:
    runner, out = FakeRunner(), Recorder()
    session = Session(runner, out.sink)
    board = chess.Board("8/8/8/8/8/5k2/8/4K2R w K - 0 1")
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        session.submit(Go(Limits(movetime=50), board=board))
        await _until(lambda: runner.active is not None)
        runner.searches[0].stall()
        with anyio.fail_after(5):
            await out.answered.wait()
        answer = next(event for event in out.events if isinstance(event, BestMove))
        assert answer.result.best_move == next(iter(board.legal_moves))
        assert any(isinstance(e, Message) and "the first legal move" in e.text for e in out.events)
        session.submit(Quit())


async def test_a_stalled_ponder_search_keeps_the_clock_the_hit_starts() -> None:
    runner, out = FakeRunner(), Recorder()
    session = Session(runner, out.sink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        session.submit(Go(Limits(white_clock=1000, black_clock=1000), ponder=True))
        await _until(lambda: runner.active is not None)
        search = runner.active
        assert search is not None and search.deadlines is None
        search.post(_info("e2e4"))
        search.stall()
        session.submit(PonderHit())
        with anyio.fail_after(5):
            await out.answered.wait()
        assert search.deadlines is not None
        answer = next(event for event in out.events if isinstance(event, BestMove))
        assert out.arrived[out.events.index(answer)] >= search.deadlines[1] + STALL_GRACE
        assert answer.result.best_move == chess.Move.from_uci("e2e4") and search.abandoned
        session.submit(Quit())


async def test_a_search_that_answers_just_before_the_timer_is_not_abandoned() -> None:
    runner, out = FakeRunner(), Recorder()
    session = Session(runner, out.sink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        session.submit(Go(Limits(movetime=50)))
        await _until(lambda: runner.active is not None)
        search = runner.active
        assert search is not None
        search.finish()
        with anyio.fail_after(5):
            await out.answered.wait()
        await anyio.sleep(STALL_GRACE + 0.1)  # past the overdue timer, which was cancelled
        assert not search.abandoned and runner.replacements == 0
        assert not any(isinstance(event, Message) for event in out.events)
        assert sum(isinstance(event, BestMove) for event in out.events) == 1
        session.submit(Quit())


def test_the_grace_never_runs_past_halfway_to_the_flag() -> None:
    movetime = Limits(movetime=300)
    assert overdue_at(movetime, chess.WHITE, 30, 10.0, 10.27) == pytest.approx(10.27 + STALL_GRACE)
    plenty = Limits(white_clock=60_000, black_clock=60_000)
    assert overdue_at(plenty, chess.WHITE, 30, 10.0, 11.0) == pytest.approx(11.0 + STALL_GRACE)
    trouble = Limits(white_clock=300, black_clock=60_000)  # flag at 10.27 after the overhead
    assert overdue_at(trouble, chess.WHITE, 30, 10.0, 10.1) == pytest.approx(10.1 + 0.085)
    gone = Limits(white_clock=5, black_clock=60_000)  # less than the overhead: the least grace
    assert overdue_at(gone, chess.WHITE, 30, 10.0, 10.001) == pytest.approx(10.001 + MIN_STALL_GRACE)


# -- the real runner ---------------------------------------------------------------------------


async def until_gone(pid: int) -> None:
    """Until the process has ended and been reaped (no zombie left)."""
    with anyio.fail_after(10):
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            await anyio.sleep(0.01)


async def _search(runner: ProcessRunner, limits: Limits) -> tuple[Any, anyio.Event]:
    ended = anyio.Event()
    handle = runner.begin(chess.Board(), limits, hash_mb=16, settings=SearchSettings(), deadlines=None,
                          on_info=lambda info: None, on_end=lambda search_id: ended.set())
    return handle, ended


async def test_an_abandoned_worker_is_killed_and_the_next_search_runs_on_a_new_one() -> None:
    runner = ProcessRunner()
    try:
        await runner.attach()
        await runner.wait_ready()
        assert runner._process is not None
        first = runner._process.pid
        handle, ended = await _search(runner, Limits(infinite=True))
        assert handle.abandon()  # replaced
        assert ended.is_set() and runner.restarts == 1
        with pytest.raises(WorkerAbandoned):
            handle.result_nowait()
        handle, ended = await _search(runner, Limits(depth=1))  # waits for the new worker, in order
        with anyio.fail_after(30):
            result = await handle.result()
        assert result.best_move in chess.Board().legal_moves
        assert runner._process is not None and runner._process.pid != first
        await until_gone(first)
    finally:
        await anyio.to_thread.run_sync(runner.close)


async def test_a_worker_still_loading_is_not_replaced_but_skips_the_abandoned_search() -> None:
    runner = ProcessRunner()
    try:
        await runner.attach()  # not ready yet: the worker loads and warms up
        handle, ended = await _search(runner, Limits(infinite=True))
        assert not handle.abandon()  # kept: it skips the search
        assert ended.is_set() and runner.restarts == 0
        handle, ended = await _search(runner, Limits(depth=1))
        with anyio.fail_after(30):
            result = await handle.result()  # the abandoned infinite search was stopped before it began
        assert result.best_move in chess.Board().legal_moves and runner.restarts == 0
    finally:
        await anyio.to_thread.run_sync(runner.close)


async def test_the_net_set_by_evalfile_is_built_before_the_first_search(tmp_path: Path) -> None:
    # `prepare` has the worker build the net then; the first search uses it as built, so it
    # does not read the file (gone here) in its own time. A worker that replaced a stalled one
    # builds it in its warm-up, which no stall rule cuts short.
    from cb_async.search.network import dumps
    from cb_async.training.pack import FloatNet, build

    rng = random.Random(3)
    small = FloatNet([[rng.gauss(0.0, 0.1) for _ in range(4)] for _ in range(768)], [0.5] * 4, [20.0] * 4)
    path = tmp_path / "small.net"
    path.write_text(dumps(build(small, clamp=200).weights, {"data": "test"}))
    runner = ProcessRunner()
    try:
        await runner.attach()
        await runner.wait_ready()
        await runner.prepare(str(path))
        path.unlink()
        ended = anyio.Event()
        handle = runner.begin(chess.Board(), Limits(depth=2), hash_mb=16, settings=SearchSettings(eval_file=str(path)),
                              deadlines=None, on_info=lambda info: None, on_end=lambda search_id: ended.set())
        with anyio.fail_after(30):
            result = await handle.result()
        assert result.best_move in chess.Board().legal_moves
    finally:
        await anyio.to_thread.run_sync(runner.close)
