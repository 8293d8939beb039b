"""The typed events the session emits; each adapter formats them in its own protocol.

A closed set, like the commands. Adapters may also define events of their own (an error in
their own words), subclasses of `AdapterEvent`, and pass them through the session with
`commands.Emit` to keep the order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import chess

from cb_async.options import OptionSpec
from cb_async.results import SearchInfo, SearchResult

if TYPE_CHECKING:
    from cb_async.search.book import BookMove

#: What a search is for, in every layer's words: a `game` search answers when it ends; a
#: `ponder` search thinks on the opponent's time until the hit makes it a game search (or an
#: analysis, when the limits it keeps are infinite); an `analysis` (UCI `go infinite`, XBoard
#: `analyze`, CNP without limits) answers only when stopped.
SearchKind = Literal["game", "ponder", "analysis"]


#: Why a search answered: a limit (or the end of its depth), a stop, or the node bound.
StopReason = Literal["limit", "stop", "maxTime"]


class AdapterEvent:
    """Base of an adapter's own events (its error lines, its notes): the session passes them
    back to the adapter untouched, in order with its own events."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Identity:
    name: str
    author: str
    version: str
    options: tuple[OptionSpec, ...]
    tag: Any = None


@dataclass(frozen=True, slots=True)
class Ready:
    tag: Any = None


@dataclass(frozen=True, slots=True)
class OptionsSet:
    """Options were set; `values` are the effective values by canonical name."""

    values: dict[str, Any]
    tag: Any = None


@dataclass(frozen=True, slots=True)
class OptionError:
    """A `SetOptions` was refused as a whole: `option` names the first bad one."""

    option: str
    message: str
    tag: Any = None


@dataclass(frozen=True, slots=True)
class NewGameDone:
    tag: Any = None


@dataclass(frozen=True, slots=True)
class SearchStarted:
    """A search began; `search_tag` is the tag of its `Go`."""

    board: chess.Board
    kind: SearchKind
    search_tag: Any = None


@dataclass(frozen=True, slots=True)
class SearchKindChanged:
    """The ponder hit made the running ponder search a `game` search (or an `analysis`): the
    session owns that transition, and adapters that act on a search's kind learn it here."""

    kind: SearchKind
    search_tag: Any = None


@dataclass(frozen=True, slots=True)
class Info:
    """One completed iteration of one MultiPV line of the running search."""

    info: SearchInfo
    board: chess.Board
    search_tag: Any = None


@dataclass(frozen=True, slots=True)
class BestMove:
    """The one answer of one search. `board` is the searched position (to format moves).

    `stopped` says why it ended: "limit" (a limit or the end of the depth), "stop" (a stop
    command) or "maxTime" (the bound of `Go.max_time_ms`). `ponder_ms` is how much of its time
    was pondering (0 for other searches). `failure` says why the search could not run (its
    worker died, or it raised): `result` is then only a legal move without a search, which a
    GUI still gets, and the embedded library turns into an exception.
    """

    result: SearchResult
    board: chess.Board
    stopped: StopReason = "limit"
    elapsed_ms: int = 0
    ponder_ms: int = 0
    search_tag: Any = None
    failure: str | None = None


@dataclass(frozen=True, slots=True)
class SearchCancelled:
    """A search ended without a move (`Cancel`, `Quit`)."""

    search_tag: Any = None


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """A command that has no answer of its own was done (`Stop`, `PonderHit`, `Cancel`)."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class Message:
    """Free text for the user (UCI `info string`)."""

    text: str
    #: For the record rather than the user's attention (how the engine kept a deadline, say):
    #: XBoard shows `telluser` in a dialog, so there it is a `#` line, which XBoard only logs.
    quiet: bool = False


@dataclass(frozen=True, slots=True)
class BookEntries:
    """The answer to `BookQuery`: the book moves of `board`, heaviest first."""

    moves: tuple[BookMove, ...]
    board: chess.Board
    tag: Any = None


@dataclass(frozen=True, slots=True)
class Goodbye:
    """The session ends (after `Quit` or end of input): the adapter writes its last words."""

    tag: Any = None


Event = Union[
    Identity, Ready, OptionsSet, OptionError, NewGameDone, SearchStarted, SearchKindChanged, Info, BestMove,
    SearchCancelled, Acknowledged, Message, BookEntries, Goodbye,
]
