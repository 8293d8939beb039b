"""The session's transition table, walked exhaustively with a scripted search runner.

The fake runner stands in for the worker process: a test decides when a search ends by
itself, and a stop ends it at once, as the real stop token does.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import chess
import pytest

from cb_async.commands import Cancel, Go, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop
from cb_async.events import (
    Acknowledged, BestMove, Goodbye, NewGameDone, OptionError, OptionsSet, Ready, SearchCancelled, SearchStarted,
)
from cb_async.limits import Limits
from cb_async.results import Score, SearchResult
from cb_async.session import TRANSITIONS, Session

E2E4 = chess.Move.from_uci("e2e4")


def result(depth: int = 3) -> SearchResult:
    return SearchResult(E2E4, None, Score(cp=20), depth, depth, 100, 5, (E2E4,))


class FakeHandle:
    def __init__(self, loop: asyncio.AbstractEventLoop, search_id: int, board: chess.Board, limits: Limits,
                 deadlines: tuple[float, float] | None) -> None:
        self.search_id = search_id
        self.board = board
        self.limits = limits
        self.deadlines = deadlines
        self.future: asyncio.Future[SearchResult] = loop.create_future()
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True
        self.finish(result(1))

    def finish(self, value: SearchResult) -> None:
        if not self.future.done():
            self.future.set_result(value)

    def set_deadlines(self, soft: float, hard: float) -> None:
        self.deadlines = (soft, hard)


class FakeRunner:
    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.handles: list[FakeHandle] = []
        self.new_games = 0

    def begin(self, board: chess.Board, limits: Limits, *, hash_mb: int,
              settings: Any = None, deadlines: tuple[float, float] | None = None, on_info: Any = None) -> FakeHandle:
        handle = FakeHandle(self.loop, len(self.handles) + 1, board, limits, deadlines)
        self.handles.append(handle)
        return handle

    async def new_game(self) -> None:
        self.new_games += 1


class Harness:
    def __init__(self) -> None:
        self.runner = FakeRunner()
        self.events: list[Any] = []
        self.changed = asyncio.Event()
        self.session = Session(self.runner, self.sink)  # type: ignore[arg-type]
        self.task = asyncio.create_task(self.session.run())

    def sink(self, event: Any) -> list[Any]:
        self.events.append(event)
        self.changed.set()
        return []

    async def send(self, *commands: Any) -> None:
        """Submit commands and wait until the session has handled them all (an IsReady marker)."""
        marker = object()
        for command in commands:
            self.session.submit(command)
        self.session.submit(IsReady(tag=marker))
        await self.wait_for(lambda: any(isinstance(e, Ready) and e.tag is marker for e in self.events))
        self.events = [e for e in self.events if not (isinstance(e, Ready) and e.tag is marker)]

    async def wait_for(self, predicate: Any, timeout: float = 2.0) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()
        await asyncio.wait_for(loop(), timeout)

    def take(self) -> list[str]:
        names = [type(e).__name__ + (f"({e.stopped})" if isinstance(e, BestMove) else "") for e in self.events]
        self.events = []
        return names

    async def finish_search(self, depth: int = 5) -> None:
        """The running search ends by itself (depth, mate, node limit)."""
        self.runner.handles[-1].finish(result(depth))
        await self.send()


KIND_LIMITS = {
    "game": (Limits(depth=5), False),
    "ponder": (Limits(depth=5, white_clock=1000, black_clock=1000), True),
    "infinite": (Limits(infinite=True), False),
}

# kind, what happens, the events expected after it (SearchStarted already taken)
TABLE = [(kind, happening, list(events)) for (kind, happening), events in TRANSITIONS.items()]


@pytest.mark.parametrize("kind,happening,expected", TABLE, ids=[f"{k}-{h}" for k, h, _ in TABLE])
async def test_transition_table(kind: str, happening: str, expected: list[str]) -> None:
    harness = Harness()
    limits, ponder = KIND_LIMITS[kind]
    await harness.send(Go(limits, ponder=ponder))
    assert harness.take() == ["SearchStarted"]
    match happening:
        case "ends":
            await harness.finish_search()
        case "stop":
            await harness.send(Stop())
        case "ponderhit":
            await harness.send(PonderHit())
        case "cancel":
            await harness.send(Cancel())
        case "quit":
            harness.session.submit(Quit())
            await asyncio.wait_for(harness.task, 2)
    assert harness.take() == expected
    if happening == "quit":
        return
    # Whatever state it is in now, a stop always leaves the session idle with one answer owed at most.
    await harness.send(Stop())
    after = harness.take()
    answered_before = any(name.startswith("BestMove") or name == "SearchCancelled" for name in expected)
    if answered_before:
        assert after == ["Acknowledged"]
    else:
        assert after == ["BestMove(stop)", "Acknowledged"]
    assert harness.session.search is None


async def test_held_ponder_answer_goes_out_on_the_hit() -> None:
    harness = Harness()
    await harness.send(Go(Limits(depth=3, white_clock=5000, black_clock=5000), ponder=True))
    await harness.finish_search(depth=3)
    assert harness.take() == ["SearchStarted"]
    await harness.send(PonderHit())
    assert harness.take() == ["BestMove(limit)", "Acknowledged"]


async def test_ponder_search_has_no_clock_until_the_hit() -> None:
    harness = Harness()
    await harness.send(Go(Limits(depth=7, white_clock=10_000, black_clock=10_000, white_inc=100), ponder=True))
    handle = harness.runner.handles[-1]
    assert handle.limits == Limits(depth=7)  # pondering(): clocks dropped, depth kept
    assert handle.deadlines is None
    loop_time = asyncio.get_running_loop().time()
    await harness.send(PonderHit(received_at=100.0))
    assert handle.deadlines is not None
    soft, hard = handle.deadlines
    assert 100.0 < soft <= hard < 100.0 + 10.0  # counted from the hit, within the clock
    assert not math.isinf(hard) and loop_time  # the search goes on: no answer yet
    assert harness.take() == ["SearchStarted", "Acknowledged"]
    await harness.finish_search()
    assert harness.take() == ["BestMove(limit)"]


async def test_game_search_deadlines_count_from_arrival() -> None:
    harness = Harness()
    await harness.send(Go(Limits(movetime=500), received_at=50.0))
    soft, hard = harness.runner.handles[-1].deadlines  # type: ignore[misc]
    assert hard == pytest.approx(50.0 + 0.470)


async def test_go_during_search_answers_the_old_one_first() -> None:
    harness = Harness()
    await harness.send(Go(Limits(infinite=True), tag="first"))
    await harness.send(Go(Limits(depth=2), tag="second"))
    events = harness.events
    assert [type(e) for e in events] == [SearchStarted, BestMove, SearchStarted]
    assert events[1].search_tag == "first" and events[2].search_tag == "second"
    assert harness.runner.handles[0].stopped


async def test_isready_is_answered_while_searching() -> None:
    harness = Harness()
    await harness.send(Go(Limits(infinite=True)))
    harness.take()
    await harness.send(IsReady(tag=7))
    assert [(type(e), e.tag) for e in harness.events] == [(Ready, 7)]
    assert harness.session.search is not None and not harness.runner.handles[0].stopped


async def test_each_search_has_its_own_handle_and_stop() -> None:
    harness = Harness()
    await harness.send(Go(Limits(depth=2)))
    await harness.finish_search()
    await harness.send(Stop())  # idle: nothing to stop
    await harness.send(Go(Limits(depth=2)))
    assert not harness.runner.handles[1].stopped
    assert harness.take() == ["SearchStarted", "BestMove(limit)", "Acknowledged", "SearchStarted"]


async def test_max_time_answers_even_a_held_search() -> None:
    harness = Harness()
    await harness.send(Go(Limits(infinite=True), max_time_ms=1))
    await harness.wait_for(lambda: any(isinstance(e, BestMove) for e in harness.events))
    assert harness.take() == ["SearchStarted", "BestMove(maxTime)"]


async def test_options_are_all_or_nothing_and_wait_for_the_next_search() -> None:
    harness = Harness()
    await harness.send(SetOptions((("Hash", "64"), ("MultiPV", "0"))))
    assert isinstance(harness.events[0], OptionError) and harness.events[0].option == "MultiPV"
    assert harness.session.state.options["Hash"] == 16
    await harness.send(Go(Limits(infinite=True)), SetOptions((("multipv", "3"), ("Clear Hash", None))))
    assert harness.runner.new_games == 0  # not while searching
    await harness.send(Stop(), Go(Limits(depth=1)))
    assert harness.runner.new_games == 1
    assert harness.runner.handles[-1].limits.multipv == 3
    assert any(isinstance(e, OptionsSet) and e.values == {"MultiPV": 3, "Clear Hash": None} for e in harness.events)


async def test_new_game_clears_the_hash() -> None:
    harness = Harness()
    await harness.send(NewGame(tag=1))
    assert harness.runner.new_games == 1
    assert [type(e) for e in harness.events] == [NewGameDone]


async def test_quit_when_idle_says_goodbye() -> None:
    harness = Harness()
    harness.session.submit(Quit(tag="q"))
    await asyncio.wait_for(harness.task, 2)
    assert [type(e) for e in harness.events] == [Goodbye]
