"""The search worker process: its messages, its shared stop block, and its main loop.

Everything here runs in (or talks to) the worker process that owns a `Searcher` and its hash
table; the host side is `cb_async.runner`. The two speak in small picklable dataclasses over a
pipe, one type per message, dispatched with `match`:

    host -> worker: SearchRequest, NewGameRequest, PrepareRequest, QuitRequest
    worker -> host: ReadyReply (once), InfoReply, ResultReply, FailedReply, DoneReply

With `Threads` N > 1 the runner starts N - 1 more workers, Lazy SMP helpers: each gets the
same `SearchRequest` with its `helper` number, searches the same position on a hash table in
shared memory (`table`, the runner's) and answers nothing; the main worker's result is the
answer. The helpers poll the same control block with the same search id, so one stop, one
ponder hit or one deadline reaches them all at once.

A stop never travels the pipe: the control block is a small shared array the search polls
through `SharedStopToken` (the id of the highest stopped search, and the deadlines of one
search id). A stop names its search, so it can never leak into the next one, and a ponder hit
starts the clock of the running search by writing its deadlines.

This module is light on purpose: the daemon imports it before it forks the worker, and forks
before it loads python-chess, so that both processes load in parallel; the search itself is
imported inside `worker_main`, in the worker.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union

from cb_async.search.control import StopToken
from cb_async.search.eval_file import DEFAULT_EVAL_FILE
from cb_async.search.settings import SearchSettings

if TYPE_CHECKING:
    import multiprocessing.connection

    import chess

    from cb_async.limits import Limits
    from cb_async.results import SearchInfo, SearchResult

#: Slots of the shared control block (an array of doubles).
STOPPED_ID, DEADLINE_ID, SOFT, HARD = range(4)
CONTROL_SLOTS = 4



# -- messages ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SearchRequest:
    search_id: int
    board: chess.Board
    limits: Limits
    hash_mb: int
    #: Book, tablebases and strength level (the session's options for this search).
    settings: SearchSettings = field(default_factory=SearchSettings)
    #: The name of the shared-memory hash table of all the search's workers (Threads > 1), or
    #: None for the worker's own table of `hash_mb`.
    table: str | None = None
    #: 0 for the main search, which answers; 1, 2, ... for the Lazy SMP helpers, which do not.
    helper: int = 0


@dataclass(frozen=True, slots=True)
class NewGameRequest:
    """Clear the hash table and what searches keep; answered with `DoneReply(ack_id)`."""

    ack_id: int


@dataclass(frozen=True, slots=True)
class PrepareRequest:
    """Load what searches with this `EvalFile` need (its net) now, outside any clock: a net of
    128 units takes some 40 ms to build (a user's net, certified in full, some 70 ms), a large
    share of a move's time at a fast clock.
    Answered with `DoneReply(ack_id)`."""

    ack_id: int
    eval_file: str


@dataclass(frozen=True, slots=True)
class QuitRequest:
    pass


@dataclass(frozen=True, slots=True)
class InfoReply:
    search_id: int
    info: SearchInfo


@dataclass(frozen=True, slots=True)
class ResultReply:
    search_id: int
    result: SearchResult


@dataclass(frozen=True, slots=True)
class FailedReply:
    """The search raised: a bug, reported instead of killing the worker."""

    search_id: int
    error: str


@dataclass(frozen=True, slots=True)
class DoneReply:
    ack_id: int


@dataclass(frozen=True, slots=True)
class ReadyReply:
    """The worker has loaded the search and warmed it up: the first search will be as fast as
    the next. (A worker that dies before it is ready could not start at all.)"""


Request = Union[SearchRequest, NewGameRequest, PrepareRequest, QuitRequest]
Reply = Union[InfoReply, ResultReply, FailedReply, DoneReply, ReadyReply]


# -- the control block -------------------------------------------------------------------------


def stop_search(control: Any, search_id: int) -> None:
    if control[STOPPED_ID] < search_id:
        control[STOPPED_ID] = search_id


def write_deadlines(control: Any, search_id: int, soft: float, hard: float) -> None:
    # Deadlines first, then the id that makes them visible to that search.
    control[SOFT] = soft
    control[HARD] = hard
    control[DEADLINE_ID] = search_id


class SharedStopToken(StopToken):
    """A `StopToken` view of the shared control block for one search id."""

    __slots__ = ("_control", "_search_id")

    def __init__(self, control: Any, search_id: int) -> None:
        super().__init__()
        self._control = control
        self._search_id = search_id

    def set(self) -> None:
        stop_search(self._control, self._search_id)

    def set_deadlines(self, soft: float, hard: float) -> None:
        write_deadlines(self._control, self._search_id, soft, hard)

    def is_set(self) -> bool:
        return bool(self._control[STOPPED_ID] >= self._search_id)

    @property
    def soft_deadline(self) -> float:
        control = self._control
        return float(control[SOFT]) if control[DEADLINE_ID] == self._search_id else math.inf

    @property
    def hard_deadline(self) -> float:
        control = self._control
        return float(control[HARD]) if control[DEADLINE_ID] == self._search_id else math.inf


# -- the process -------------------------------------------------------------------------------


#: How much lower a Lazy SMP helper's scheduling priority is (Unix `nice`): when the cores are
#: short, the main search and the host's event loop (which answers stop and isready) go first.
HELPER_NICENESS = 5


def worker_main(conn: multiprocessing.connection.Connection, control: Any, eval_file: str = DEFAULT_EVAL_FILE) -> None:
    """The worker process (after `cb_async.worker_process.worker_entry`, which every worker of
    ours runs first): load the net of `eval_file` and warm up, then receive requests, search,
    send infos and results. A host that is gone (a GUI ended it, even while this worker was
    still warming up) ends the worker quietly: nobody is left to read an answer or a traceback."""
    try:
        _serve(conn, control, eval_file)
    except (BrokenPipeError, ConnectionResetError):
        pass


def _serve(conn: multiprocessing.connection.Connection, control: Any, eval_file: str) -> None:
    from cb_async.search import Searcher, history_keys
    from cb_async.search.sources import MoveSources

    searcher = Searcher()
    sources = MoveSources(searcher)
    # Before the ready: a worker that replaces a stalled one is not abandoned while it warms up,
    # so the net it needs is built then, not in the first search's time.
    sources.prepare(eval_file)
    _warm_up(searcher)
    conn.send(ReadyReply())
    table = _Table(searcher)
    while True:
        try:
            message: Request = conn.recv()
        except (EOFError, OSError):
            table.release()
            return
        match message:
            case SearchRequest(search_id=search_id, helper=helper) if helper:
                table.use(message.table, message.hash_mb)
                try:
                    sources.help(message.board, history_keys(message.board), message.limits, message.settings,
                                 SharedStopToken(control, search_id), helper)
                except Exception:  # a helper's failure costs its help only; the main search answers
                    pass
            case SearchRequest(search_id=search_id):
                try:
                    table.use(message.table, message.hash_mb)
                except MemoryError:  # the memory went since Hash was checked: this search fails, not the worker
                    conn.send(FailedReply(search_id, f"no memory for a hash table of {message.hash_mb} MB; "
                                                     "set a smaller Hash"))
                    continue
                token = SharedStopToken(control, search_id)

                def on_info(info: SearchInfo, search_id: int = search_id) -> None:
                    conn.send(InfoReply(search_id, info))

                try:
                    result = sources.search(message.board, history_keys(message.board), message.limits,
                                            message.settings, token, on_info)
                except Exception as error:  # a bug must not kill the worker: answer, say why
                    conn.send(FailedReply(search_id, f"{type(error).__name__}: {error}"))
                    continue
                conn.send(ResultReply(search_id, result))
            case NewGameRequest(ack_id=ack_id):
                searcher.new_game()
                conn.send(DoneReply(ack_id))
            case PrepareRequest(ack_id=ack_id, eval_file=eval_file):
                sources.prepare(eval_file)
                conn.send(DoneReply(ack_id))
            case QuitRequest():
                table.release()
                return


class _Table:
    """Which hash table the worker's searcher uses: its own, of the Hash size, or the shared
    one named by the request (Threads > 1), attached when the name changes."""

    def __init__(self, searcher: Any) -> None:
        self._searcher = searcher
        self._hash_mb = 16
        self._name: str | None = None
        self._memory: Any = None  # the attached SharedMemory
        self._slots: Any = None

    def use(self, name: str | None, hash_mb: int) -> None:
        if name == self._name and (name is not None or hash_mb == self._hash_mb):
            return
        from cb_async.search.tt import SharedSlots

        old_memory, old_slots = self._memory, self._slots
        self._memory = self._slots = None
        if name is not None:
            memory = _attach_shared(name)
            self._memory, self._slots = memory, SharedSlots(memory.buf)
            self._searcher.share_table(self._slots)
        else:
            self._searcher.set_hash_size(hash_mb)
        self._name, self._hash_mb = name, hash_mb
        if old_slots is not None:
            old_slots.release()
            old_memory.close()

    def release(self) -> None:
        """Let go of a shared table before the process ends (no view may outlive the map)."""
        if self._name is not None:
            self.use(None, self._hash_mb)


def _attach_shared(name: str) -> Any:
    """Map the runner's shared table without claiming it: its owner is the runner's resource
    tracker. (Before 3.13, attaching registers the segment with this process's tracker as if
    it had made it; a tracker of the worker's own, as the main worker starts when it was
    forked before the host had one, would unlink the runner's segment when the worker ends.)"""
    from multiprocessing import resource_tracker, shared_memory

    if sys.version_info >= (3, 13):
        return shared_memory.SharedMemory(name=name, track=False)
    register = resource_tracker.register

    def unregistered(name: str, rtype: str) -> None:
        pass

    setattr(resource_tracker, "register", unregistered)
    try:
        return shared_memory.SharedMemory(name=name)
    finally:
        setattr(resource_tracker, "register", register)


def _warm_up(searcher: Any) -> None:
    """Run a tiny search while the engine is idle, so that the first real search does not pay
    for the first pass through the search's code paths; then forget it (the hash table, the
    history), so that every search still starts from the same state."""
    import chess

    from cb_async.limits import Limits

    searcher.search(chess.Board(), (), Limits(depth=2), StopToken())
    searcher.new_game()
