"""The typed commands every protocol adapter produces for the session actor.

A closed set of small immutable objects, dispatched with `match` in `cb_async.session`. Each
protocol maps its own words onto these, so UCI, XBoard and CNP drive exactly the same search.
`tag` is the adapter's own handle for a request (a CNP request id, an XBoard ping number); the
session hands it back in the events that answer the command and never looks inside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

import chess

from cb_async.limits import Limits

if TYPE_CHECKING:
    from cb_async.events import AdapterEvent, Event, SearchKind

@dataclass(frozen=True, slots=True)
class Identify:
    """Ask for the engine's name, author and options (UCI `uci`, CNP `engine/hello`)."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class IsReady:
    """Synchronise: answered with `Ready` once every earlier command is done, also mid-search."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class SetOptions:
    """Set options by name (case-insensitive). Values are protocol text or JSON values.

    All or nothing: if one name or value is bad, none is changed and an `OptionError` says
    which. During a search they apply from the next search.
    """

    values: tuple[tuple[str, Any], ...]
    tag: Any = None


@dataclass(frozen=True, slots=True)
class NewGame:
    """The next search is from another game: clear the hash and what searches keep."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class SetPosition:
    """The position the next `Go` without a board of its own searches (UCI `position`)."""

    board: chess.Board


@dataclass(frozen=True, slots=True)
class Go:
    """Start a search.

    `board` carries the game's moves for repetition detection; None means the position set
    last. The board is handed over: its producer must not change it afterwards (the session
    searches it without a copy). `ponder`: the expected reply is on the board and `limits` are those to keep once it is
    played; the search runs with `limits.pondering()` until `PonderHit`. `multipv` None means
    the MultiPV option. `received_at` (time.monotonic) is when the command arrived: the clock
    counts from then. `max_time_ms` bounds the search from that moment whatever its kind.
    """

    limits: Limits
    board: chess.Board | None = None
    ponder: bool = False
    multipv: int | None = None
    received_at: float | None = None
    max_time_ms: float | None = None
    tag: Any = None

    @property
    def kind(self) -> SearchKind:
        return "ponder" if self.ponder else "analysis" if self.limits.infinite else "game"


@dataclass(frozen=True, slots=True)
class Stop:
    """End the search and answer with its best move (a ponder search too)."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class PonderHit:
    """The expected reply was played: the ponder search becomes a timed search.

    `limits`, when given, replace those of the ponder `Go` from now on: XBoard sends the fresh
    clocks (`time`/`otim`) only just before the move that hits.
    """

    received_at: float | None = None
    tag: Any = None
    limits: Limits | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    """End the search without a move (XBoard `force`/`new`/`undo`, CNP `engine/cancel`)."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class Quit:
    """Leave: cancel any search and end the session."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class Emit:
    """Pass an adapter's own event (an error, an acknowledgement) through the session's queue,
    so that it is written in order with everything the earlier commands produce."""

    event: Event | AdapterEvent


@dataclass(frozen=True, slots=True)
class BookQuery:
    """List the book moves of `board` with their weights (XBoard `bk`), answered with
    `BookEntries`. The session owns the `BookFile` option, so it reads the book."""

    board: chess.Board
    tag: Any = None


Command = Union[
    Identify, IsReady, SetOptions, NewGame, SetPosition, Go, Stop, PonderHit, Cancel, Quit, Emit, BookQuery,
]
