"""The typed events the session emits; each adapter formats them in its own protocol.

A closed set, like the commands. Adapters may also define events of their own (an error in
their own words) and pass them through the session with `commands.Emit` to keep the order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

import chess

from cb_async.options import OptionSpec
from cb_async.results import SearchInfo, SearchResult


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
class Busy:
    """A command that needs an idle engine arrived during a search (CNP's -32001)."""

    tag: Any = None


@dataclass(frozen=True, slots=True)
class SearchStarted:
    """A search began; `search_tag` is the tag of its `Go`."""

    board: chess.Board
    ponder: bool
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
    was pondering (0 for other searches).
    """

    result: SearchResult
    board: chess.Board
    stopped: str = "limit"
    elapsed_ms: int = 0
    ponder_ms: int = 0
    search_tag: Any = None


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


@dataclass(frozen=True, slots=True)
class BookEntries:
    """The answer to `BookQuery`: `cb_async.search.book.BookMove`s of `board`, heaviest first."""

    moves: tuple[Any, ...]
    board: chess.Board
    tag: Any = None


@dataclass(frozen=True, slots=True)
class Goodbye:
    """The session ends (after `Quit` or end of input): the adapter writes its last words."""

    tag: Any = None


Event = Union[
    Identity, Ready, OptionsSet, OptionError, NewGameDone, Busy, SearchStarted, Info, BestMove,
    SearchCancelled, Acknowledged, Message, BookEntries, Goodbye,
]
