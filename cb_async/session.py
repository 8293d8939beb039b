"""The session actor: the one owner of the options, the position and the one search.

It consumes its mailbox strictly in order. A search runs in the worker process (see
`cb_async.runner`); the actor starts it, stops it through its own stop token and awaits its
future. While a search runs the actor keeps reading: `isready` is answered at once, options
are stored for the next search. Handling `Stop` (or a `Go` that replaces a search) awaits the
old search's answer, so anything after it in the mailbox comes out after its `bestmove`.

Search kinds and what ends them are the table `TRANSITIONS` below: `tests/test_session.py`
walks every row of it against this actor, and `docs/architecture.md` shows it as rendered by
`transition_table_markdown()`.

The node bound (`Go.max_time_ms`) answers every kind, held or not, with `stopped="maxTime"`.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

import chess

from cb_async import options as option_table
from cb_async.commands import (
    BookQuery, Cancel, Command, Debug, Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions,
    SetPosition, Stop,
)
from cb_async.events import (
    Acknowledged, BestMove, BookEntries, Goodbye, Identity, Info, Message, NewGameDone, OptionError,
    OptionsSet, Ready, SearchCancelled, SearchStarted,
)
from cb_async.limits import Limits
from cb_async.results import SearchInfo, SearchResult
from cb_async.runner import SearchHandle, SearchRunner, WorkerDied, fallback_result
from cb_async.search.settings import SearchSettings
from cb_async.timeman import deadlines
from cb_async.version import ENGINE_AUTHOR, ENGINE_NAME, __version__

SearchKind = Literal["game", "ponder", "infinite"]

#: Called with every event; returns the follow-up commands the adapter asks for (XBoard's
#: ponder search after its move), which run before anything else in the mailbox.
EventSink = Callable[[Any], Iterable[Command]]


#: (kind of search, what happens) -> the events the session emits, in order. A ponder search
#: that ends by itself, and an infinite one, hold their answer until Stop (or the hit).
TRANSITIONS: dict[tuple[SearchKind, str], tuple[str, ...]] = {
    ("game", "ends"): ("BestMove(limit)",),
    ("game", "stop"): ("BestMove(stop)", "Acknowledged"),
    ("game", "ponderhit"): ("Acknowledged",),
    ("game", "cancel"): ("SearchCancelled", "Acknowledged"),
    ("game", "quit"): ("SearchCancelled", "Goodbye"),
    ("ponder", "ends"): (),
    ("ponder", "stop"): ("BestMove(stop)", "Acknowledged"),
    ("ponder", "ponderhit"): ("Acknowledged",),
    ("ponder", "cancel"): ("SearchCancelled", "Acknowledged"),
    ("ponder", "quit"): ("SearchCancelled", "Goodbye"),
    ("infinite", "ends"): (),
    ("infinite", "stop"): ("BestMove(stop)", "Acknowledged"),
    ("infinite", "ponderhit"): ("Acknowledged",),
    ("infinite", "cancel"): ("SearchCancelled", "Acknowledged"),
    ("infinite", "quit"): ("SearchCancelled", "Goodbye"),
}
#: What a ponder hit turns a ponder search into; a held answer then goes out at once.
AFTER_PONDERHIT = "game (or infinite, if its limits are infinite)"


def transition_table_markdown() -> str:
    """TRANSITIONS as a Markdown table: kinds down, happenings across."""
    happenings = ("ends", "stop", "ponderhit", "cancel", "quit")
    header = "| kind | " + " | ".join(f"`{h}`" for h in happenings) + " |"
    lines = [header, "|" + "---|" * (len(happenings) + 1)]
    for kind in ("game", "ponder", "infinite"):
        cells = [", ".join(TRANSITIONS[(kind, h)]) or "(holds its answer)" for h in happenings]
        if kind == "ponder":
            cells[2] += f"; becomes {AFTER_PONDERHIT}"
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@dataclass(eq=False)
class _Finished:
    """Internal: the search with this id ended by itself."""

    search_id: int


@dataclass(eq=False)
class ActiveSearch:
    handle: SearchHandle
    go: Go
    kind: SearchKind
    started_at: float
    hit_at: float | None = None
    stop_reason: str | None = None
    held: SearchResult | None = None
    max_timer: asyncio.TimerHandle | None = None

    @property
    def tag(self) -> Any:
        return self.go.tag


@dataclass
class SessionState:
    options: dict[str, Any] = field(default_factory=option_table.defaults)
    position: chess.Board = field(default_factory=chess.Board)
    debug: bool = False
    clear_hash_pending: bool = False


class Session:
    """Feed it commands with `submit`; it calls `sink` with every event, in order."""

    def __init__(self, runner: SearchRunner, sink: EventSink,
                 translate: Callable[[Any], Iterable[Command]] | None = None) -> None:
        self._runner = runner
        self._sink = sink
        self._translate = translate
        self._mailbox: asyncio.Queue[Any] = asyncio.Queue()
        self._followups: collections.deque[Command] = collections.deque()
        self.state = SessionState()
        self.search: ActiveSearch | None = None
        self.finished = False

    # -- the mailbox ------------------------------------------------------------------------

    def submit(self, item: Any) -> None:
        """Queue a command (or, with a `translate` function, raw input it turns into commands)."""
        self._mailbox.put_nowait(item)

    async def run(self) -> None:
        """Consume the mailbox until `Quit`."""
        while not self.finished:
            item = await self._mailbox.get()
            if isinstance(item, _Finished):
                await self._search_finished(item.search_id)
            else:
                commands = self._translate(item) if self._translate is not None else (item,)
                for command in commands:
                    await self.handle(command)
                    if self.finished:
                        break
            while self._followups and not self.finished:
                await self.handle(self._followups.popleft())

    def _emit(self, event: Any) -> None:
        followups = self._sink(event)
        if followups:
            self._followups.extend(followups)

    # -- commands ---------------------------------------------------------------------------

    async def handle(self, command: Command) -> None:
        match command:
            case IsReady(tag=tag):
                self._emit(Ready(tag))
            case Go():
                await self._go(command)
            case Stop(tag=tag):
                if self.search is not None:
                    await self._end_search("stop", answer=True)
                self._emit(Acknowledged(tag))
            case PonderHit():
                self._ponder_hit(command)
                self._emit(Acknowledged(command.tag))
            case Cancel(tag=tag):
                if self.search is not None:
                    await self._end_search("stop", answer=False)
                self._emit(Acknowledged(tag))
            case SetPosition(board=board):
                self.state.position = board
            case SetOptions(values=values, tag=tag):
                await self._set_options(values, tag)
            case BookQuery(board=board, tag=tag):
                self._emit(BookEntries(self._book_moves(board), board, tag))
            case NewGame(tag=tag):
                self.state.clear_hash_pending = True
                if self.search is None:
                    await self._clear_hash()
                self._emit(NewGameDone(tag))
            case Identify(tag=tag):
                self._emit(Identity(ENGINE_NAME, ENGINE_AUTHOR, __version__, option_table.OPTIONS, tag))
            case Debug(on=on):
                self.state.debug = on
            case Emit(event=event):
                self._emit(event)
            case Quit(tag=tag):
                if self.search is not None:
                    await self._end_search("stop", answer=False, wait=False)
                self.finished = True
                self._emit(Goodbye(tag))
            case _:
                raise TypeError(f"not a command: {command!r}")

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
        for name, value in parsed.items():
            if option_table.find(name).type == "button":
                if name == "Clear Hash":
                    self.state.clear_hash_pending = True
            else:
                self.state.options[name] = value
        if self.state.clear_hash_pending and self.search is None:
            await self._clear_hash()
        self._emit(OptionsSet(parsed, tag))

    def _book_moves(self, board: chess.Board) -> tuple[Any, ...]:
        path = self.state.options.get("BookFile") or ""
        if not path:
            return ()
        from cb_async.search import book

        return tuple(book.book_moves(path, board))

    async def _clear_hash(self) -> None:
        self.state.clear_hash_pending = False
        await self._runner.new_game()

    # -- searches ---------------------------------------------------------------------------

    async def _go(self, go: Go) -> None:
        if self.search is not None:
            # A new go replaces the running search: its bestmove first.
            await self._end_search("stop", answer=True)
        if self.state.clear_hash_pending:
            await self._clear_hash()
        board = (go.board if go.board is not None else self.state.position).copy()
        limits = go.limits
        multipv = go.multipv if go.multipv is not None else self.state.options["MultiPV"]
        if multipv != limits.multipv:
            limits = limits.replace(multipv=multipv)
        started_at = go.received_at if go.received_at is not None else time.monotonic()
        kind: SearchKind = "ponder" if go.ponder else "infinite" if limits.infinite else "game"
        search_limits = limits.pondering() if go.ponder else limits
        deadlines = None
        if kind == "game" and limits.is_timed:
            deadlines = self._deadlines(limits, board.turn, started_at)
        go = _replace_go(go, limits=limits)
        handle = self._runner.begin(
            board, search_limits, hash_mb=self.state.options["Hash"],
            settings=SearchSettings.from_options(self.state.options), deadlines=deadlines,
            on_info=lambda info, board=board, tag=go.tag: self._emit(Info(info, board, tag)),
        )
        search = ActiveSearch(handle, go, kind, started_at)
        self.search = search
        if go.max_time_ms is not None:
            delay = max(0.0, started_at + go.max_time_ms / 1000 - time.monotonic())
            search.max_timer = self._runner.loop.call_later(delay, self._max_time_reached, handle.search_id)
        handle.future.add_done_callback(lambda _f, sid=handle.search_id: self.submit(_Finished(sid)))
        self._emit(SearchStarted(board, go.ponder, go.tag))

    def _deadlines(self, limits: Limits, side: chess.Color, start: float) -> tuple[float, float]:
        timed = deadlines(limits, side, self.state.options["Move Overhead"], start)
        assert timed is not None
        return timed

    def _ponder_hit(self, command: PonderHit) -> None:
        search = self.search
        if search is None or search.kind != "ponder":
            return  # ponderhit when not pondering does nothing
        search.hit_at = command.received_at if command.received_at is not None else time.monotonic()
        if command.limits is not None:
            search.go = _replace_go(search.go, limits=command.limits.replace(multipv=search.go.limits.multipv))
        limits = search.go.limits
        search.kind = "infinite" if limits.infinite else "game"
        if search.held is not None:
            if search.kind == "game":
                self._answer(search, search.held, "limit")
            return
        if limits.is_timed:
            search.handle.set_deadlines(*self._deadlines(limits, search.handle.board.turn, search.hit_at))

    def _max_time_reached(self, search_id: int) -> None:
        search = self.search
        if search is None or search.handle.search_id != search_id:
            return
        search.stop_reason = search.stop_reason or "maxTime"
        if search.held is not None:
            self._answer(search, search.held, "maxTime")
        else:
            search.handle.stop()

    async def _search_finished(self, search_id: int) -> None:
        search = self.search
        if search is None or search.handle.search_id != search_id or search.held is not None:
            return
        result = await self._result_of(search)
        if search.kind in ("ponder", "infinite") and search.stop_reason is None:
            search.held = result  # never answer before stop or ponderhit
            return
        self._answer(search, result, search.stop_reason or "limit")

    async def _end_search(self, reason: str, *, answer: bool, wait: bool = True) -> None:
        search = self.search
        assert search is not None
        search.stop_reason = search.stop_reason or reason
        search.handle.stop()
        if not wait:
            self._forget(search)
            if not answer:
                self._emit(SearchCancelled(search.tag))
            return
        result = search.held if search.held is not None else await self._result_of(search)
        if self.search is not search:
            return  # answered meanwhile (the node bound)
        if answer:
            self._answer(search, result, search.stop_reason)
        else:
            self._forget(search)
            self._emit(SearchCancelled(search.tag))

    async def _result_of(self, search: ActiveSearch) -> SearchResult:
        try:
            return await asyncio.shield(search.handle.future)
        except WorkerDied:
            self._emit(Message("the search process ended unexpectedly and was restarted"))
        except RuntimeError as error:
            self._emit(Message(str(error)))
        return fallback_result(search.handle.board)

    def _answer(self, search: ActiveSearch, result: SearchResult, stopped: str) -> None:
        self._forget(search)
        now = time.monotonic()
        elapsed = int((now - search.started_at) * 1000)
        ponder_ms = 0
        if search.go.ponder:
            ponder_ms = int(((search.hit_at or now) - search.started_at) * 1000)
        self._emit(BestMove(result, search.handle.board, stopped, elapsed, ponder_ms, search.tag))

    def _forget(self, search: ActiveSearch) -> None:
        if search.max_timer is not None:
            search.max_timer.cancel()
        if self.search is search:
            self.search = None


def _check_files(values: dict[str, Any]) -> tuple[str, str] | None:
    """(option, what is wrong) when a `BookFile` or `SyzygyPath` being set cannot be used."""
    if values.get("BookFile"):
        from cb_async.search import book

        problem = book.check_book(values["BookFile"])
        if problem is not None:
            return "BookFile", problem
    if values.get("SyzygyPath"):
        from cb_async.search import tablebase

        problem, _ = tablebase.check_path(values["SyzygyPath"])
        if problem is not None:
            return "SyzygyPath", problem
    return None


def _replace_go(go: Go, **changes: Any) -> Go:
    import dataclasses

    return dataclasses.replace(go, **changes)
