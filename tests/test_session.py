"""The session's state machine, walked exhaustively with the scripted search runner.

Every (state, happening) pair is tried: a pair in `TRANSITIONS` must emit exactly the events
of its effects and leave the session in its next state; any other pair must be refused as a
`SessionError`. The walk reaches each state through real commands, as an adapter would.
"""

from __future__ import annotations

import math
from typing import Any

import anyio
import chess
import pytest

from cb_async.commands import Cancel, Command, Go, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop
from cb_async.events import (
    Acknowledged, BestMove, Goodbye, NewGameDone, OptionError, OptionsSet, Ready, SearchKindChanged, SearchStarted,
)
from cb_async.limits import Limits
from cb_async.session import (
    TRANSITIONS, Effect, EndOfInput, Happening, MailboxItem, MaxTimeReached, Overdue, SearchEnded, Session, SessionError,
    State,
)
from fake_runner import FakeRunner

S, H, E = State, Happening, Effect


class Harness:
    """A session on the fake runner, with its events named for comparison."""

    def __init__(self, task_group: Any) -> None:
        self.runner = FakeRunner()
        self.events: list[Any] = []
        self.session = Session(self.runner, self.sink)
        self.closed = anyio.Event()
        task_group.start_soon(self._run)

    async def _run(self) -> None:
        await self.session.run()
        self.closed.set()

    def sink(self, event: Any) -> list[Command]:
        self.events.append(event)
        return []

    async def send(self, *items: MailboxItem) -> None:
        """Submit items and wait until the session has handled them all (an IsReady marker),
        or has closed."""
        marker = object()
        for item in items:
            self.session.submit(item)
        if not self.session.finished:
            self.session.submit(IsReady(tag=marker))
        with anyio.fail_after(5):
            while not (self.session.finished or any(isinstance(e, Ready) and e.tag is marker for e in self.events)):
                await anyio.sleep(0)
        self.events = [e for e in self.events if not (isinstance(e, Ready) and e.tag is marker)]

    def take(self) -> list[str]:
        names = [_name(e) for e in self.events]
        self.events = []
        return names

    async def finish_search(self, depth: int = 5) -> None:
        """The running search ends by itself (depth, mate, node limit)."""
        search = self.runner.active
        assert search is not None
        search.finish()
        await self.send()


def _name(event: Any) -> str:
    if isinstance(event, BestMove):
        return f"BestMove({event.stopped})"
    if isinstance(event, SearchKindChanged):
        return f"SearchKindChanged({event.kind})"
    return type(event).__name__


#: The event each effect emits (effects that emit nothing are not here).
EFFECT_EVENTS = {
    E.START: "SearchStarted", E.BECOME_GAME: "SearchKindChanged(game)",
    E.BECOME_ANALYSIS: "SearchKindChanged(analysis)", E.ANSWER_LIMIT: "BestMove(limit)",
    E.ANSWER_STOP: "BestMove(stop)", E.ANSWER_MAX_TIME: "BestMove(maxTime)", E.CANCELLED: "SearchCancelled",
    E.ACKNOWLEDGE: "Acknowledged", E.GOODBYE: "Goodbye", E.ABANDON: "Message",
}

BOUND_MS = 3_600_000  # a node bound that never expires by itself: the walk fires it by hand


def _go_for(state: State, happening: Happening) -> Go | None:
    """The Go that brings a session into `state`, chosen so that `happening` can follow."""
    match state:
        case S.SEARCHING | S.DRAINING:
            if state is S.SEARCHING and happening is H.END_OF_INPUT:
                return Go(Limits(white_clock=60_000, black_clock=60_000), max_time_ms=BOUND_MS)
            return Go(Limits(depth=5), max_time_ms=BOUND_MS)
        case S.PONDERING | S.PONDER_HELD:
            limits = Limits(infinite=True) if happening is H.PONDERHIT_TO_ANALYSIS else Limits(depth=5, white_clock=60_000)
            return Go(limits, ponder=True, max_time_ms=BOUND_MS)
        case S.ANALYSING | S.ANALYSIS_HELD:
            return Go(Limits(infinite=True), max_time_ms=BOUND_MS)
    return None


async def _reach(harness: Harness, state: State, happening: Happening) -> None:
    go = _go_for(state, happening)
    if go is not None:
        await harness.send(go)
    if state in (S.PONDER_HELD, S.ANALYSIS_HELD):
        await harness.finish_search()
    if state is S.DRAINING:
        await harness.send(EndOfInput())
    if state is S.CLOSED:
        await harness.send(Quit())
    harness.take()
    assert harness.session.state is state


async def _happen(harness: Harness, happening: Happening) -> None:
    match happening:
        case H.GO:
            await harness.send(Go(Limits(depth=2)))
        case H.GO_PONDER:
            await harness.send(Go(Limits(depth=2), ponder=True))
        case H.GO_ANALYSIS:
            await harness.send(Go(Limits(infinite=True)))
        case H.ENDS:
            await harness.finish_search()
        case H.MAX_TIME:
            search = harness.session.search
            assert search is not None
            await harness.send(MaxTimeReached(search.handle.search_id))
        case H.OVERDUE:
            search, stalled = harness.session.search, harness.runner.active
            assert search is not None and stalled is not None
            stalled.stall()
            await harness.send(Overdue(search.handle.search_id))
        case H.STOP:
            await harness.send(Stop())
        case H.PONDERHIT | H.PONDERHIT_TO_ANALYSIS:
            await harness.send(PonderHit())
        case H.CANCEL:
            await harness.send(Cancel())
        case H.QUIT:
            await harness.send(Quit())
        case H.END_OF_INPUT | H.END_OF_INPUT_DEFINITE:
            await harness.send(EndOfInput())
        case H.SUPERSEDED:
            raise AssertionError("reached through a Go: see test_a_go_supersedes_the_running_search")


ALL_PAIRS = [(state, happening) for state in State for happening in Happening]
POSSIBLE = [pair for pair in ALL_PAIRS if pair in TRANSITIONS and pair[1] is not H.SUPERSEDED]


@pytest.mark.parametrize("state,happening", POSSIBLE, ids=[f"{s.value}-{h.value}" for s, h in POSSIBLE])
async def test_each_transition_emits_its_effects_and_reaches_its_state(state: State, happening: Happening) -> None:
    after, effects = TRANSITIONS[(state, happening)]
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await _reach(harness, state, happening)
        before = harness.runner.active
        await _happen(harness, happening)
        assert harness.take() == [EFFECT_EVENTS[e] for e in effects if e in EFFECT_EVENTS]
        assert harness.session.state is after
        if E.STOP_WORKER in effects:
            assert before is not None and before.stopped
        elif before is not None:
            assert not before.stopped
        assert (before is not None and before.abandoned) == (E.ABANDON in effects)
        assert (harness.session.search is None) == (after in (S.IDLE, S.CLOSED))
        if after is not S.CLOSED:
            await harness.send(Quit())
        await harness.closed.wait()


@pytest.mark.parametrize("state", [s for s in State if (s, H.SUPERSEDED) in TRANSITIONS])
async def test_a_go_supersedes_the_running_search(state: State) -> None:
    _, effects = TRANSITIONS[(state, H.SUPERSEDED)]
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await _reach(harness, state, H.GO)
        await harness.send(Go(Limits(depth=2), tag="next"))
        assert harness.take() == [EFFECT_EVENTS[e] for e in effects if e in EFFECT_EVENTS] + ["SearchStarted"]
        assert harness.session.state is S.SEARCHING
        await harness.send(Quit())


IMPOSSIBLE = [pair for pair in ALL_PAIRS if pair not in TRANSITIONS]


@pytest.mark.parametrize("state,happening", IMPOSSIBLE, ids=[f"{s.value}-{h.value}" for s, h in IMPOSSIBLE])
async def test_an_impossible_pair_is_refused(state: State, happening: Happening) -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await _reach(harness, state, happening)
        with pytest.raises(SessionError):
            await harness.session._fire(happening)
        assert harness.session.state is state
        if state is not S.CLOSED:
            await harness.send(Quit())


def test_every_state_but_closed_can_be_left() -> None:
    leaving = {state for (state, _), (after, _) in TRANSITIONS.items() if after is not state}
    assert leaving == set(State) - {S.CLOSED}
    reached = {after for after, _ in TRANSITIONS.values()} | {S.IDLE}
    assert reached == set(State)


# -- what the transitions mean ------------------------------------------------------------------


async def test_held_ponder_answer_goes_out_on_the_hit() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(depth=3, white_clock=5000, black_clock=5000), ponder=True))
        await harness.finish_search(depth=3)
        assert harness.take() == ["SearchStarted"]
        await harness.send(PonderHit())
        assert harness.take() == ["SearchKindChanged(game)", "BestMove(limit)", "Acknowledged"]
        await harness.send(Quit())


async def test_ponder_search_has_no_clock_until_the_hit() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(depth=7, white_clock=10_000, black_clock=10_000, white_inc=100), ponder=True))
        search = harness.runner.searches[-1]
        assert search.limits == Limits(depth=7)  # pondering(): clocks dropped, depth kept
        assert search.deadlines is None
        await harness.send(PonderHit(received_at=100.0))
        assert search.deadlines is not None
        soft, hard = search.deadlines
        assert 100.0 < soft <= hard < 100.0 + 10.0  # counted from the hit, within the clock
        assert not math.isinf(hard)
        assert harness.take() == ["SearchStarted", "SearchKindChanged(game)", "Acknowledged"]
        await harness.finish_search()
        assert harness.take() == ["BestMove(limit)"]
        await harness.send(Quit())


async def test_the_hit_can_bring_fresh_limits() -> None:
    """XBoard sends `time`/`otim` just before the move that hits: those clocks count."""
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(white_clock=600_000, black_clock=600_000), ponder=True))
        await harness.send(PonderHit(received_at=0.0, limits=Limits(white_clock=2000, black_clock=2000)))
        _, hard = harness.runner.searches[-1].deadlines  # type: ignore[misc]
        assert hard < 2.0
        await harness.send(Quit())


async def test_game_search_deadlines_count_from_arrival() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(movetime=500), received_at=50.0))
        soft, hard = harness.runner.searches[-1].deadlines  # type: ignore[misc]
        assert hard == pytest.approx(50.0 + 0.470)
        await harness.send(Quit())


async def test_go_during_search_answers_the_old_one_first() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(infinite=True), tag="first"))
        await harness.send(Go(Limits(depth=2), tag="second"))
        events = harness.events
        assert [type(e) for e in events] == [SearchStarted, BestMove, SearchStarted]
        assert events[1].search_tag == "first" and events[2].search_tag == "second"
        assert harness.runner.searches[0].stopped
        await harness.send(Quit())


async def test_isready_is_answered_while_searching() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(infinite=True)))
        harness.take()
        await harness.send(IsReady(tag=7))
        assert [(type(e), e.tag) for e in harness.events] == [(Ready, 7)]
        assert harness.session.search is not None and not harness.runner.searches[0].stopped
        await harness.send(Quit())


async def test_each_search_has_its_own_handle_and_stop() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(depth=2)))
        await harness.finish_search()
        await harness.send(Stop())  # idle: nothing to stop
        await harness.send(Go(Limits(depth=2)))
        assert not harness.runner.searches[1].stopped
        assert harness.take() == ["SearchStarted", "BestMove(limit)", "Acknowledged", "SearchStarted"]
        await harness.send(Quit())


async def test_the_node_bound_answers_even_a_held_search() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(infinite=True), max_time_ms=1))
        with anyio.fail_after(5):
            while not any(isinstance(e, BestMove) for e in harness.events):
                await anyio.sleep(0.001)
        assert harness.take() == ["SearchStarted", "BestMove(maxTime)"]
        await harness.send(Quit())


async def test_the_end_of_a_search_reaches_the_session_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A search that ends by itself is news for the mailbox (`ends`). One the session stops (a
    stop, a new go, a cancel) is collected from its handle by the transition that stopped it,
    and sends no `SearchEnded`, which would only be dropped as stale."""
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        submitted: list[MailboxItem] = []
        submit = harness.session.submit

        def spy(item: MailboxItem) -> None:
            submitted.append(item)
            submit(item)

        monkeypatch.setattr(harness.session, "submit", spy)
        await harness.send(Go(Limits(depth=2)))
        await harness.finish_search()
        await harness.send(Go(Limits(infinite=True)), Stop())
        await harness.send(Go(Limits(infinite=True)), Go(Limits(infinite=True)), Cancel())
        assert harness.take() == ["SearchStarted", "BestMove(limit)", "SearchStarted", "BestMove(stop)",
                                  "Acknowledged", "SearchStarted", "BestMove(stop)", "SearchStarted",
                                  "SearchCancelled", "Acknowledged"]
        assert [runner_search.stopped for runner_search in harness.runner.searches] == [False, True, True, True]
        assert [item for item in submitted if isinstance(item, SearchEnded)] == [SearchEnded(1)]
        await harness.send(Quit())


async def test_news_of_an_answered_search_is_dropped() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(infinite=True), max_time_ms=BOUND_MS))
        first = harness.runner.searches[-1].search_id
        await harness.send(Stop(), Go(Limits(depth=2)))
        harness.take()
        await harness.send(MaxTimeReached(first))
        assert harness.take() == [] and harness.session.state is S.SEARCHING
        await harness.send(Quit())


async def test_at_end_of_input_a_definite_search_finishes_and_answers() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(depth=4)), EndOfInput())
        assert harness.take() == ["SearchStarted"] and harness.session.state is S.DRAINING
        assert not harness.runner.searches[-1].stopped
        await harness.finish_search()
        assert harness.take() == ["BestMove(limit)", "Goodbye"]
        await harness.closed.wait()


async def test_at_end_of_input_a_clock_search_stops_and_answers() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Go(Limits(depth=20, white_clock=60_000, black_clock=60_000)), EndOfInput())
        assert harness.take() == ["SearchStarted", "BestMove(stop)", "Goodbye"]
        assert harness.runner.searches[-1].stopped
        await harness.closed.wait()


async def test_options_are_all_or_nothing_and_wait_for_the_next_search() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(SetOptions((("Hash", "64"), ("MultiPV", "0"))))
        assert isinstance(harness.events[0], OptionError) and harness.events[0].option == "MultiPV"
        assert harness.session.setup.options["Hash"] == 16
        await harness.send(Go(Limits(infinite=True)), SetOptions((("multipv", "3"), ("Clear Hash", None))))
        assert harness.runner.new_games == 0  # not while searching
        await harness.send(Stop(), Go(Limits(depth=1)))
        assert harness.runner.new_games == 1
        assert harness.runner.searches[-1].limits.multipv == 3
        assert any(isinstance(e, OptionsSet) and e.values == {"MultiPV": 3, "Clear Hash": None} for e in harness.events)
        await harness.send(Quit())


async def test_setting_evalfile_has_the_net_built_before_the_option_is_acknowledged() -> None:
    # Built in the first search's time instead, a large net made fast games' first moves late.
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(SetOptions((("Hash", "32"),)))
        assert harness.runner.prepared == []
        await harness.send(SetOptions((("EvalFile", ""),)))
        assert harness.runner.prepared == [""]
        assert isinstance(harness.events[-1], OptionsSet)
        await harness.send(Go(Limits(infinite=True)), SetOptions((("EvalFile", "none"),)))
        assert harness.runner.prepared == [""]  # not while searching: the next search builds it
        assert harness.runner.searches[-1].settings.eval_file == ""
        await harness.send(Stop(), Go(Limits(depth=1)))
        assert harness.runner.searches[-1].settings.eval_file == "none"
        await harness.send(Quit())


async def test_new_game_clears_the_hash() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(NewGame(tag=1))
        assert harness.runner.new_games == 1
        assert [type(e) for e in harness.events] == [NewGameDone]
        await harness.send(Quit())


async def test_quit_when_idle_says_goodbye() -> None:
    async with anyio.create_task_group() as tg:
        harness = Harness(tg)
        await harness.send(Quit(tag="q"))
        await harness.closed.wait()
        assert [(type(e), e.tag) for e in harness.events] == [(Goodbye, "q")]


def test_the_position_of_a_go_without_a_board_is_the_last_set_one() -> None:
    async def scene() -> None:
        from cb_async.commands import SetPosition

        async with anyio.create_task_group() as tg:
            harness = Harness(tg)
            board = chess.Board()
            board.push_uci("e2e4")
            await harness.send(SetPosition(board), Go(Limits(depth=1)))
            assert harness.runner.searches[-1].board == board
            await harness.send(Quit())

    anyio.run(scene)
