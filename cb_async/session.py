"""The session actor: the one owner of the options, the position and the one search.

It consumes its mailbox strictly in order: input lines (turned into commands by the protocol
adapter only when their turn comes, so an adapter always sees the effects of everything before),
commands, and the three things that happen to a search by themselves (it ends; the node bound of
`Go.max_time_ms` expires; a game search is overdue: its worker has not answered by the hard
deadline plus `STALL_GRACE`). A search runs in the worker process (see `cb_async.runner`); the
actor starts it, stops it through its handle and awaits its result. While a search runs the
actor keeps reading: `isready` is answered at once, options are stored for the next search.
Handling `Stop` (or a `Go` that replaces a search) awaits the old search's answer, so anything
after it in the mailbox comes out after its `bestmove`.

The search's life is one state machine, and `TRANSITIONS` is the code that runs it, indexed as
h11 indexes its own: (state, happening) -> (next state, effects). `_happening` names what a
command means for the search, `_fire` looks the pair up and performs the effects in order; a
pair that is not in the table is a `SessionError` (the tests walk every pair, the impossible
ones too). `docs/architecture.md` shows the table as `transition_table_markdown()` renders it.

The deadline is kept whatever the worker does. The host process owns the clock and is alive
while the worker may be stalled (stopped, starved, wedged): an overdue game search, or a search
that has not answered `STALL_GRACE` after its stop, is abandoned (its worker ended and replaced,
so it can never answer twice) and answered with the best move it reported in its infos, else a
book, table or first legal move (`cb_async.fallback`), with a `Message` saying so.

The actor is written against anyio, so it runs on the daemon's asyncio loop and inside a host
application's asyncio or trio program alike.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

import anyio
import chess

from cb_async import options as option_table
from cb_async.commands import (
    BookQuery, Cancel, Command, Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions,
    SetPosition, Stop,
)
from cb_async.events import (
    Acknowledged, AdapterEvent, BestMove, BookEntries, Event, Goodbye, Identity, Info, Message, NewGameDone,
    OptionError, OptionsSet, Ready, SearchCancelled, SearchKind, SearchKindChanged, SearchStarted, StopReason,
)
from cb_async.framing import TooLong
from cb_async.fallback import Fallback, fallback_answer
from cb_async.limits import Limits
from cb_async.results import SearchInfo, SearchResult
from cb_async.runner import SearchFailed, SearchHandle, SearchRunner, WorkerDied
from cb_async.search.settings import SearchSettings
from cb_async.timeman import deadlines
from cb_async.version import ENGINE_AUTHOR, ENGINE_NAME, __version__

if TYPE_CHECKING:
    import anyio.abc


class SessionError(RuntimeError):
    """A happening that the search's state machine does not allow: a bug, never bad input."""


# -- the mailbox -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputLine:
    """A line of protocol input (or a discarded over-long one), stamped when it arrived."""

    text: str | TooLong
    received_at: float


@dataclass(frozen=True, slots=True)
class EndOfInput:
    """The input ended: searches with a definite limit finish, the rest stop; then goodbye."""


@dataclass(frozen=True, slots=True)
class SearchEnded:
    """The search with this id has ended (by itself, stopped, or failed): its result is ready."""

    search_id: int


@dataclass(frozen=True, slots=True)
class MaxTimeReached:
    """The node bound (`Go.max_time_ms`) of the search with this id has expired."""

    search_id: int


@dataclass(frozen=True, slots=True)
class Overdue:
    """The game search with this id has not answered by its hard deadline plus `STALL_GRACE`."""

    search_id: int


MailboxItem = Union[Command, InputLine, EndOfInput, SearchEnded, MaxTimeReached, Overdue]

#: How long after its hard deadline (or its stop) a search's worker may take to answer before
#: it counts as stalled and is replaced. A healthy worker polls its deadline and its stop every
#: 64 nodes and its answer crosses the pipe in a millisecond, but a starved one is late: on a
#: 2-core machine at load average 12, over 200 searches, the answer came a median 5 ms after the
#: hard deadline, 18 ms at the 90th percentile and 209 ms at the 99th, and 1 ms / 8 ms / 190 ms
#: after a stop (`docs/architecture.md`, "What happens when"). 0.1 s keeps nearly every busy
#: but healthy worker, and keeps CNP's promise of an answer within 100 ms of `timeMs` (the hard
#: deadline is the Move Overhead before it) even when the worker is stopped.
STALL_GRACE = 0.1
#: The least grace, even with the clock all but gone (a few milliseconds left, or less than the
#: Move Overhead): a healthy worker answered within 18 ms of its deadline 9 times in 10 on that
#: loaded machine, and replacing one that is merely late buys no time back.
MIN_STALL_GRACE = 0.05

#: Called with every event; returns the follow-up commands the adapter asks for (XBoard's
#: ponder search after its move), which run before anything else in the mailbox.
EventSink = Callable[[Union[Event, AdapterEvent]], Sequence[Command]]

#: Turns an input line into commands: the protocol adapter's `receive`.
LineReader = Callable[[InputLine], Sequence[Command]]


# -- the search's state machine ----------------------------------------------------------------


class State(enum.Enum):
    IDLE = "idle"
    SEARCHING = "searching"  # a game search: it answers when it ends
    PONDERING = "pondering"  # on the opponent's time, without a clock, until the hit
    PONDER_HELD = "ponder held"  # a ponder search that ended by itself: its answer waits for the hit
    ANALYSING = "analysing"  # an analysis: it answers only when stopped
    ANALYSIS_HELD = "analysis held"  # an analysis that ended by itself (its maximum depth, a mate)
    DRAINING = "draining"  # the input ended during a search with a definite limit: it finishes
    CLOSED = "closed"


class Happening(enum.Enum):
    GO = "go"
    GO_PONDER = "go ponder"
    GO_ANALYSIS = "go analysis"
    SUPERSEDED = "superseded"  # a new go arrives while a search runs
    ENDS = "ends"  # the search ended by itself
    MAX_TIME = "max time"
    OVERDUE = "overdue"  # a game search's worker has not answered by the hard deadline plus the grace
    STOP = "stop"
    PONDERHIT = "ponderhit"
    PONDERHIT_TO_ANALYSIS = "ponderhit to analysis"  # the limits it keeps after the hit are infinite
    CANCEL = "cancel"
    QUIT = "quit"
    END_OF_INPUT = "end of input"
    END_OF_INPUT_DEFINITE = "end of input, definite limit"  # a game search with depth/nodes/movetime/mate, no clock


class Effect(enum.Enum):
    START = "start"  # begin the search of the Go being handled
    STOP_WORKER = "stop the worker"
    COLLECT = "collect"  # await the search's result (or take the one it holds), abandoning a stalled worker
    ABANDON = "abandon the worker"  # end and replace it; the answer comes from the search's infos
    HOLD = "hold"  # keep the result until stop or the hit
    START_CLOCK = "start the clock"  # the hit: deadlines from now, with the hit's limits
    BECOME_GAME = "become a game search"  # tell the adapters (SearchKindChanged)
    BECOME_ANALYSIS = "become an analysis"
    ANSWER_LIMIT = "BestMove(limit)"
    ANSWER_STOP = "BestMove(stop)"
    ANSWER_MAX_TIME = "BestMove(maxTime)"
    CANCELLED = "SearchCancelled"
    ACKNOWLEDGE = "Acknowledged"
    GOODBYE = "Goodbye"


S, H, E = State, Happening, Effect

#: (state, happening) -> (next state, effects in order). What is not here cannot happen.
TRANSITIONS: dict[tuple[State, Happening], tuple[State, tuple[Effect, ...]]] = {
    (S.IDLE, H.GO): (S.SEARCHING, (E.START,)),
    (S.IDLE, H.GO_PONDER): (S.PONDERING, (E.START,)),
    (S.IDLE, H.GO_ANALYSIS): (S.ANALYSING, (E.START,)),
    (S.IDLE, H.STOP): (S.IDLE, (E.ACKNOWLEDGE,)),
    (S.IDLE, H.PONDERHIT): (S.IDLE, (E.ACKNOWLEDGE,)),
    (S.IDLE, H.CANCEL): (S.IDLE, (E.ACKNOWLEDGE,)),
    (S.IDLE, H.QUIT): (S.CLOSED, (E.GOODBYE,)),
    (S.IDLE, H.END_OF_INPUT): (S.CLOSED, (E.GOODBYE,)),

    (S.SEARCHING, H.SUPERSEDED): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP)),
    (S.SEARCHING, H.ENDS): (S.IDLE, (E.COLLECT, E.ANSWER_LIMIT)),
    (S.SEARCHING, H.MAX_TIME): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_MAX_TIME)),
    (S.SEARCHING, H.OVERDUE): (S.IDLE, (E.ABANDON, E.ANSWER_LIMIT)),
    (S.SEARCHING, H.STOP): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.ACKNOWLEDGE)),
    (S.SEARCHING, H.PONDERHIT): (S.SEARCHING, (E.ACKNOWLEDGE,)),
    (S.SEARCHING, H.CANCEL): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.CANCELLED, E.ACKNOWLEDGE)),
    (S.SEARCHING, H.QUIT): (S.CLOSED, (E.STOP_WORKER, E.CANCELLED, E.GOODBYE)),
    (S.SEARCHING, H.END_OF_INPUT): (S.CLOSED, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.GOODBYE)),
    (S.SEARCHING, H.END_OF_INPUT_DEFINITE): (S.DRAINING, ()),

    (S.PONDERING, H.SUPERSEDED): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP)),
    (S.PONDERING, H.ENDS): (S.PONDER_HELD, (E.COLLECT, E.HOLD)),
    (S.PONDERING, H.MAX_TIME): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_MAX_TIME)),
    (S.PONDERING, H.STOP): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.ACKNOWLEDGE)),
    (S.PONDERING, H.PONDERHIT): (S.SEARCHING, (E.START_CLOCK, E.BECOME_GAME, E.ACKNOWLEDGE)),
    (S.PONDERING, H.PONDERHIT_TO_ANALYSIS): (S.ANALYSING, (E.BECOME_ANALYSIS, E.ACKNOWLEDGE)),
    (S.PONDERING, H.CANCEL): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.CANCELLED, E.ACKNOWLEDGE)),
    (S.PONDERING, H.QUIT): (S.CLOSED, (E.STOP_WORKER, E.CANCELLED, E.GOODBYE)),
    (S.PONDERING, H.END_OF_INPUT): (S.CLOSED, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.GOODBYE)),

    (S.PONDER_HELD, H.SUPERSEDED): (S.IDLE, (E.COLLECT, E.ANSWER_STOP)),
    (S.PONDER_HELD, H.MAX_TIME): (S.IDLE, (E.COLLECT, E.ANSWER_MAX_TIME)),
    (S.PONDER_HELD, H.STOP): (S.IDLE, (E.COLLECT, E.ANSWER_STOP, E.ACKNOWLEDGE)),
    (S.PONDER_HELD, H.PONDERHIT): (S.IDLE, (E.BECOME_GAME, E.COLLECT, E.ANSWER_LIMIT, E.ACKNOWLEDGE)),
    (S.PONDER_HELD, H.PONDERHIT_TO_ANALYSIS): (S.ANALYSIS_HELD, (E.BECOME_ANALYSIS, E.ACKNOWLEDGE)),
    (S.PONDER_HELD, H.CANCEL): (S.IDLE, (E.CANCELLED, E.ACKNOWLEDGE)),
    (S.PONDER_HELD, H.QUIT): (S.CLOSED, (E.CANCELLED, E.GOODBYE)),
    (S.PONDER_HELD, H.END_OF_INPUT): (S.CLOSED, (E.COLLECT, E.ANSWER_STOP, E.GOODBYE)),

    (S.ANALYSING, H.SUPERSEDED): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP)),
    (S.ANALYSING, H.ENDS): (S.ANALYSIS_HELD, (E.COLLECT, E.HOLD)),
    (S.ANALYSING, H.MAX_TIME): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_MAX_TIME)),
    (S.ANALYSING, H.STOP): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.ACKNOWLEDGE)),
    (S.ANALYSING, H.PONDERHIT): (S.ANALYSING, (E.ACKNOWLEDGE,)),
    (S.ANALYSING, H.CANCEL): (S.IDLE, (E.STOP_WORKER, E.COLLECT, E.CANCELLED, E.ACKNOWLEDGE)),
    (S.ANALYSING, H.QUIT): (S.CLOSED, (E.STOP_WORKER, E.CANCELLED, E.GOODBYE)),
    (S.ANALYSING, H.END_OF_INPUT): (S.CLOSED, (E.STOP_WORKER, E.COLLECT, E.ANSWER_STOP, E.GOODBYE)),

    (S.ANALYSIS_HELD, H.SUPERSEDED): (S.IDLE, (E.COLLECT, E.ANSWER_STOP)),
    (S.ANALYSIS_HELD, H.MAX_TIME): (S.IDLE, (E.COLLECT, E.ANSWER_MAX_TIME)),
    (S.ANALYSIS_HELD, H.STOP): (S.IDLE, (E.COLLECT, E.ANSWER_STOP, E.ACKNOWLEDGE)),
    (S.ANALYSIS_HELD, H.PONDERHIT): (S.ANALYSIS_HELD, (E.ACKNOWLEDGE,)),
    (S.ANALYSIS_HELD, H.CANCEL): (S.IDLE, (E.CANCELLED, E.ACKNOWLEDGE)),
    (S.ANALYSIS_HELD, H.QUIT): (S.CLOSED, (E.CANCELLED, E.GOODBYE)),
    (S.ANALYSIS_HELD, H.END_OF_INPUT): (S.CLOSED, (E.COLLECT, E.ANSWER_STOP, E.GOODBYE)),

    (S.DRAINING, H.ENDS): (S.CLOSED, (E.COLLECT, E.ANSWER_LIMIT, E.GOODBYE)),
    (S.DRAINING, H.MAX_TIME): (S.CLOSED, (E.STOP_WORKER, E.COLLECT, E.ANSWER_MAX_TIME, E.GOODBYE)),
    (S.DRAINING, H.OVERDUE): (S.CLOSED, (E.ABANDON, E.ANSWER_LIMIT, E.GOODBYE)),
    (S.DRAINING, H.QUIT): (S.CLOSED, (E.STOP_WORKER, E.CANCELLED, E.GOODBYE)),
}

#: The states in which a search runs or holds its answer.
SEARCH_STATES = frozenset(state for state in State if state not in (S.IDLE, S.CLOSED))

_STATE_KIND: dict[State, SearchKind] = {
    S.SEARCHING: "game", S.DRAINING: "game", S.PONDERING: "ponder", S.PONDER_HELD: "ponder",
    S.ANALYSING: "analysis", S.ANALYSIS_HELD: "analysis",
}

_GO_HAPPENING: dict[SearchKind, Happening] = {"game": H.GO, "ponder": H.GO_PONDER, "analysis": H.GO_ANALYSIS}


def transition_table_markdown() -> str:
    """TRANSITIONS as a Markdown table: one row per possible (state, happening)."""
    lines = ["| state | happening | next state | effects |", "|---|---|---|---|"]
    for (state, happening), (after, effects) in TRANSITIONS.items():
        done = ", ".join(effect.value for effect in effects) or "(none)"
        lines.append(f"| {state.value} | {happening.value} | {after.value} | {done} |")
    return "\n".join(lines)


# -- the session -------------------------------------------------------------------------------


@dataclass(eq=False)
class RunningSearch:
    """What the session keeps of the search it runs: the data its state does not say."""

    handle: SearchHandle
    go: Go
    board: chess.Board
    started_at: float
    hit_at: float | None = None
    held: SearchResult | None = None
    #: Why the search could not run, when its result is only a fallback move.
    failure: str | None = None
    bound: anyio.CancelScope | None = None
    #: The timer of `Overdue`, armed while the search runs on a clock.
    overdue: anyio.CancelScope | None = None
    #: The last info of its main line: what a stalled search is answered with.
    seen: SearchInfo | None = None


@dataclass
class Setup:
    """What the next search starts from: the options and the position."""

    options: dict[str, Any] = field(default_factory=option_table.defaults)
    position: chess.Board = field(default_factory=chess.Board)
    clear_hash_pending: bool = False


class Session:
    """Feed it with `submit`; it calls `sink` with every event, in order, until it is closed."""

    def __init__(self, runner: SearchRunner, sink: EventSink, reader: LineReader | None = None) -> None:
        self._runner = runner
        self._sink = sink
        self._reader = reader
        self._send, self._mailbox = anyio.create_memory_object_stream[MailboxItem](math.inf)
        self._followups: list[Command] = []
        self._timers: anyio.abc.TaskGroup | None = None
        self.setup = Setup()
        self._worker_ready = False
        self.state = State.IDLE
        self.search: RunningSearch | None = None
        #: The search whose transition is being performed: its end, if it comes meanwhile, is
        #: that transition's to take (it collects the search, or leaves it), not the mailbox's.
        self._firing: RunningSearch | None = None

    @property
    def finished(self) -> bool:
        return self.state is State.CLOSED

    # -- the mailbox ------------------------------------------------------------------------

    def submit(self, item: MailboxItem) -> None:
        """Queue a command, an input line, the end of input, or news of a search (from the loop).
        Once the session has closed its mailbox (a `quit` carried out), there is nobody left to
        act: the item is dropped. The usual case is a GUI's SIGTERM racing its own `quit`."""
        try:
            self._send.send_nowait(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    async def run(self) -> None:
        """Consume the mailbox until the session is closed."""
        async with anyio.create_task_group() as timers:
            self._timers = timers
            try:
                while not self.finished:
                    await self._take(await self._mailbox.receive())
                    while self._followups and not self.finished:
                        await self.handle(self._followups.pop(0))
            finally:
                timers.cancel_scope.cancel()
                self._send.close()
                self._mailbox.close()

    async def _take(self, item: MailboxItem) -> None:
        match item:
            case InputLine():
                assert self._reader is not None, "a session without a reader takes no input lines"
                for command in self._reader(item):
                    await self.handle(command)
                    if self.finished:
                        return
            case EndOfInput():
                await self._fire(self._end_of_input())
            case SearchEnded(search_id=search_id):
                if self._is_current(search_id):
                    await self._fire(H.ENDS)
            case MaxTimeReached(search_id=search_id):
                if self._is_current(search_id):
                    await self._fire(H.MAX_TIME)
            case Overdue(search_id=search_id):
                if self._is_current(search_id):
                    await self._fire(H.OVERDUE)
            case _:
                await self.handle(item)

    def _is_current(self, search_id: int) -> bool:
        """News of an earlier search (that was answered meanwhile) is stale and dropped."""
        search = self.search
        return search is not None and search.handle.search_id == search_id

    def _emit(self, event: Event | AdapterEvent) -> None:
        self._followups.extend(self._sink(event))

    # -- commands ---------------------------------------------------------------------------

    async def handle(self, command: Command) -> None:
        match command:
            case IsReady(tag=tag):
                if not self._worker_ready:
                    await self._wait_for_worker()
                self._emit(Ready(tag))
            case Go():
                if self.state in SEARCH_STATES:
                    await self._fire(H.SUPERSEDED)  # a new go replaces the running search: its answer first
                await self._fire(_GO_HAPPENING[command.kind], command)
            case Stop():
                await self._fire(H.STOP, command)
            case PonderHit():
                await self._fire(self._ponder_hit(command), command)
            case Cancel():
                await self._fire(H.CANCEL, command)
            case Quit():
                await self._fire(H.QUIT, command)
            case SetPosition(board=board):
                self.setup.position = board
            case SetOptions(values=values, tag=tag):
                await self._set_options(values, tag)
            case BookQuery(board=board, tag=tag):
                self._emit(BookEntries(self._book_moves(board), board, tag))
            case NewGame(tag=tag):
                self.setup.clear_hash_pending = True
                if self.search is None:
                    await self._clear_hash()
                self._emit(NewGameDone(tag))
            case Identify(tag=tag):
                self._emit(Identity(ENGINE_NAME, ENGINE_AUTHOR, __version__, option_table.OPTIONS, tag))
            case Emit(event=event):
                self._emit(event)

    def _ponder_hit(self, hit: PonderHit) -> Happening:
        search = self.search
        if search is not None and search.go.ponder:
            limits = hit.limits if hit.limits is not None else search.go.limits
            if limits.infinite:
                return H.PONDERHIT_TO_ANALYSIS
        return H.PONDERHIT

    def _end_of_input(self) -> Happening:
        search = self.search
        if self.state is S.SEARCHING and search is not None:
            limits = search.go.limits
            if not limits.has_clock and (limits.depth or limits.nodes or limits.movetime or limits.mate):
                return H.END_OF_INPUT_DEFINITE
        return H.END_OF_INPUT

    # -- the state machine ------------------------------------------------------------------

    async def _fire(self, happening: Happening, command: Command | None = None) -> None:
        """Perform the transition of (state, happening): its effects in order, then its state."""
        try:
            after, effects = TRANSITIONS[(self.state, happening)]
        except KeyError:
            raise SessionError(f"{happening.value!r} cannot happen while {self.state.value}") from None
        search = self.search
        tag = command.tag if isinstance(command, (Stop, PonderHit, Cancel, Quit)) else None
        result: SearchResult | None = None
        self._firing = search
        for effect in effects:
            match effect:
                case E.START:
                    assert isinstance(command, Go)
                    search = self._start(command)
                case E.STOP_WORKER:
                    assert search is not None
                    search.handle.stop()
                case E.COLLECT:
                    assert search is not None
                    result = await self._collect(search)
                case E.ABANDON:
                    assert search is not None
                    result = self._abandon(search, "by its deadline")
                case E.HOLD:
                    assert search is not None and result is not None
                    search.held = result
                case E.START_CLOCK:
                    assert search is not None and isinstance(command, PonderHit)
                    self._start_clock(search, command)
                case E.BECOME_GAME | E.BECOME_ANALYSIS:
                    assert search is not None
                    kind: SearchKind = "game" if effect is E.BECOME_GAME else "analysis"
                    self._emit(SearchKindChanged(kind, search.go.tag))
                case E.ANSWER_LIMIT | E.ANSWER_STOP | E.ANSWER_MAX_TIME:
                    assert search is not None and result is not None
                    self._answer(search, result, _STOPPED_BY[effect])
                case E.CANCELLED:
                    assert search is not None
                    self._emit(SearchCancelled(search.go.tag))
                case E.ACKNOWLEDGE:
                    self._emit(Acknowledged(tag))
                case E.GOODBYE:
                    self._emit(Goodbye(tag))
        self._firing = None
        self.state = after
        if after not in SEARCH_STATES and search is not None:
            self._forget(search)
        if after is S.IDLE and self.setup.clear_hash_pending:
            await self._clear_hash()

    def _start(self, go: Go) -> RunningSearch:
        options = self.setup.options
        # A Go's board is its producer's own (every adapter and the library hand over a fresh one
        # or a copy): kept as it is. The position set last may be set again: copied.
        board = go.board if go.board is not None else self.setup.position.copy()
        multipv = go.multipv if go.multipv is not None else options["MultiPV"]
        if multipv != go.limits.multipv:
            go = dataclasses.replace(go, limits=go.limits.replace(multipv=multipv))
        started_at = go.received_at if go.received_at is not None else time.monotonic()
        limits = go.limits.pondering() if go.ponder else go.limits
        timed = deadlines(limits, board.turn, options["Move Overhead"], started_at) if go.kind == "game" else None
        tag = go.tag
        search: RunningSearch | None = None

        def on_info(info: SearchInfo) -> None:
            if search is not None and info.multipv == 1 and info.pv:
                search.seen = info
            self._emit(Info(info, board, tag))

        handle = self._runner.begin(
            board, limits, hash_mb=options["Hash"], settings=SearchSettings.from_options(options),
            deadlines=timed, on_info=on_info, on_end=self._search_ended,
        )
        search = RunningSearch(handle, go, board, started_at)
        self.search = search
        if go.max_time_ms is not None:
            search.bound = self._later(started_at + go.max_time_ms / 1000, MaxTimeReached(handle.search_id))
        if timed is not None:
            at = overdue_at(limits, board.turn, options["Move Overhead"], started_at, timed[1])
            search.overdue = self._later(at, Overdue(handle.search_id))
        self._emit(SearchStarted(board, go.kind, tag))
        return search

    def _search_ended(self, search_id: int) -> None:
        """The runner's news that a search has ended: into the mailbox (`ends`), unless a
        transition of that search is being performed. Such a transition has stopped the search
        and collects it from its handle, or leaves it (quit), so a `SearchEnded` would only be
        dropped as stale: the end of a search is signalled once, either way."""
        firing = self._firing
        if firing is None or firing.handle.search_id != search_id:
            self.submit(SearchEnded(search_id))

    def _later(self, at: float, item: MaxTimeReached | Overdue) -> anyio.CancelScope:
        """Submit `item` at `at` (monotonic seconds) unless cancelled first."""
        scope = anyio.CancelScope()

        async def expire() -> None:
            with scope:
                await anyio.sleep(max(0.0, at - time.monotonic()))
                self.submit(item)

        assert self._timers is not None, "the session is not running"
        self._timers.start_soon(expire)
        return scope

    def _start_clock(self, search: RunningSearch, hit: PonderHit) -> None:
        search.hit_at = hit.received_at if hit.received_at is not None else time.monotonic()
        if hit.limits is not None:
            # XBoard sends the fresh clocks just before the move that hits.
            limits = hit.limits.replace(multipv=search.go.limits.multipv)
            search.go = dataclasses.replace(search.go, limits=limits)
        timed = deadlines(search.go.limits, search.board.turn, self.setup.options["Move Overhead"],
                          search.hit_at)
        if timed is not None:
            search.handle.set_deadlines(*timed)
            if search.overdue is not None:
                search.overdue.cancel()
            at = overdue_at(search.go.limits, search.board.turn, self.setup.options["Move Overhead"], search.hit_at,
                            timed[1])
            search.overdue = self._later(at, Overdue(search.handle.search_id))

    async def _collect(self, search: RunningSearch) -> SearchResult:
        """The search's result: it has ended, or has just been stopped and answers within
        `STALL_GRACE` unless its worker is stalled (then it is abandoned)."""
        if search.held is not None:
            return search.held
        handle = search.handle
        try:
            if handle.ended:  # it ended by itself (`ends`): its outcome is there, nothing to wait for
                return handle.result_nowait()
            with anyio.move_on_after(STALL_GRACE):
                return await handle.result()
        except WorkerDied as error:
            search.failure = str(error)
            self._emit(Message("the search process ended unexpectedly and was restarted"))
            return self._fallback(search).result
        except SearchFailed as error:
            search.failure = str(error)
            self._emit(Message(search.failure))
            return self._fallback(search).result
        return self._abandon(search, "after its stop")

    def _abandon(self, search: RunningSearch, when: str) -> SearchResult:
        """The worker has not answered in time: end it and start another (the search can never
        answer twice), and answer with the best the search reported."""
        handle = search.handle
        if handle.ended:  # its answer came after all, just before the timer
            return handle.result_nowait()
        replaced = handle.abandon()
        fallback = self._fallback(search)
        if replaced:
            self._emit(Message(f"the search process did not answer {int(STALL_GRACE * 1000)} ms {when}: "
                               f"answered with {fallback.source} and started a new one", quiet=True))
        else:
            self._emit(Message(f"the search process was still starting: answered with {fallback.source}", quiet=True))
        return fallback.result

    def _fallback(self, search: RunningSearch) -> Fallback:
        return fallback_answer(search.board, search.seen, self.setup.options, search.go.limits.search_moves)

    def _answer(self, search: RunningSearch, result: SearchResult, stopped: StopReason) -> None:
        now = time.monotonic()
        elapsed = int((now - search.started_at) * 1000)
        ponder_ms = int(((search.hit_at or now) - search.started_at) * 1000) if search.go.ponder else 0
        self._emit(BestMove(result, search.board, stopped, elapsed, ponder_ms, search.go.tag, search.failure))

    def _forget(self, search: RunningSearch) -> None:
        for timer in (search.bound, search.overdue):
            if timer is not None:
                timer.cancel()
        if self.search is search:
            self.search = None

    # -- options and the hash ---------------------------------------------------------------

    async def _set_options(self, values: tuple[tuple[str, Any], ...], tag: Any) -> None:
        parsed: dict[str, Any] = {}
        for name, raw in values:
            try:
                spec = option_table.find(name)
                parsed[spec.name] = spec.parse_value(raw)
            except option_table.OptionValueError as error:
                self._emit(OptionError(error.option, str(error), tag))
                return
        problem = _check_files(parsed)
        if problem is not None:
            # Refused like a bad value: nothing changes and the engine plays on without it.
            self._emit(OptionError(problem[0], problem[1], tag))
            return
        if "Hash" in parsed:
            parsed["Hash"] = self._fitting_hash(parsed["Hash"])
        for name, value in parsed.items():
            if option_table.find(name).type == "button":
                if name == "Clear Hash":
                    self.setup.clear_hash_pending = True
            else:
                self.setup.options[name] = value
        if self.setup.clear_hash_pending and self.search is None:
            await self._clear_hash()
        if "EvalFile" in parsed and self.search is None:
            # The net is built now, before the GUI's `isready` is answered, not in the first
            # search's time (a running search's successor builds it in its own time).
            await self._runner.prepare(SearchSettings.from_options(self.setup.options).eval_file)
        self._emit(OptionsSet(parsed, tag))

    def _fitting_hash(self, wanted: int) -> int:
        """`wanted` MB, or as much as the machine can give, saying so (`cb_async.memory`)."""
        from cb_async.memory import fitting_hash_mb

        used, limit = fitting_hash_mb(wanted)
        if limit is not None:
            self._emit(Message(f"Hash {wanted} MB is more than this machine can give now (about {limit} MB): "
                               f"using {used} MB"))
        return used

    def _book_moves(self, board: chess.Board) -> tuple[Any, ...]:
        path = self.setup.options.get("BookFile") or ""
        if not path:
            return ()
        from cb_async.search import book

        return tuple(book.book_moves(path, board))

    async def _wait_for_worker(self) -> None:
        """UCI's first `isready` waits for the engine to finish initializing: the worker loads and
        warms up the search meanwhile, so the first search is as fast as the next. A worker that
        cannot start is answered for later, by each search's fallback move."""
        try:
            await self._runner.wait_ready()
        except WorkerDied:
            pass
        self._worker_ready = True

    async def _clear_hash(self) -> None:
        self.setup.clear_hash_pending = False
        await self._runner.new_game()


def overdue_at(limits: Limits, side: chess.Color, move_overhead: float, start: float, hard: float) -> float:
    """When a game search with this hard deadline is overdue: `STALL_GRACE` after it, but on a
    clock not past halfway from it to the flag (the clock less the Move Overhead, the lag the
    answer pays on its way), and never sooner than `MIN_STALL_GRACE`: in time trouble a stalled
    worker's answer must still be in time. (A `movetime` has no flag: the full grace keeps a
    busy but healthy worker.)"""
    remaining, _ = limits.clock(side)
    if remaining is None:
        return hard + STALL_GRACE
    flag = start + (remaining - move_overhead) / 1000
    return hard + max(MIN_STALL_GRACE, min(STALL_GRACE, (flag - hard) / 2))


_STOPPED_BY: dict[Effect, StopReason] = {E.ANSWER_LIMIT: "limit", E.ANSWER_STOP: "stop", E.ANSWER_MAX_TIME: "maxTime"}


def _check_files(values: dict[str, Any]) -> tuple[str, str] | None:
    """(option, what is wrong) when a `BookFile`, `EvalFile` or `SyzygyPath` being set cannot be used."""
    if values.get("BookFile"):
        from cb_async.search import book

        problem = book.check_book(values["BookFile"])
        if problem is not None:
            return "BookFile", problem
    if values.get("EvalFile"):
        from cb_async.search import eval_file

        problem = eval_file.check(values["EvalFile"])
        if problem is not None:
            return "EvalFile", problem
    if values.get("SyzygyPath"):
        from cb_async.search import tablebase

        problem, _ = tablebase.check_path(values["SyzygyPath"])
        if problem is not None:
            return "SyzygyPath", problem
    return None
