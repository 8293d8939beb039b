"""`cb-async eval-data`'s worker processes: each plays the games its host hands it, with its own
Stockfish, and sends each finished game back.

Each worker is a `cb_async.worker_process.WorkerProcess`, like the search worker and the
analysis workers, so it is started, read, ended and watched as they are: started with
`start_context`, read by a thread that reaps it when its pipe ends, ended through
`WorkerProcess.end`, and in the child `worker_entry` ignores SIGINT (Ctrl-C is the host's to
handle) and watches the host (a host killed with SIGKILL takes its workers with it, busy or not,
and each worker's Stockfish ends at the end of its input).

The host hands out one game index at a time (`PlayGame`) to whichever worker is free, and yields
each game's record (`GamePlayed`) as it comes: in the order the games finish, as they are
appended to the journal. A worker that cannot play (its engine would not start or ended, the
process died) ends the whole run with `WorkerFailed`, one line: it is not restarted, since what
killed it would most likely kill the next one too. The games already written stay; the same
command resumes.
"""

from __future__ import annotations

import queue
import signal
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from multiprocessing.connection import Connection
from types import TracebackType

from cb_async.training.data import CbAsyncPlayer, Job, StockfishDriver, label_game, openings, play_game, read_pgn_games
from cb_async.worker_process import WorkerProcess, start_context

#: How long an idle worker, asked to quit after the last game, may take to close its Stockfish.
QUIT_SECONDS = 5.0

Record = dict[str, object]


# -- the messages on a worker's pipe -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayGame:
    """Host to worker: play game `index` of the job."""

    index: int


@dataclass(frozen=True, slots=True)
class Quit:
    """Host to worker: no more games; close your engine and leave."""


@dataclass(frozen=True, slots=True)
class GamePlayed:
    """Worker to host: a finished game, as the journal keeps it."""

    record: Record


@dataclass(frozen=True, slots=True)
class CannotPlay:
    """Worker to host, its last message: why it cannot play (its engine would not start, or
    ended, or a game failed)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Gone:
    """Posted by the reader thread when the worker's pipe ends: the process has ended."""


HostMessage = PlayGame | Quit
WorkerMessage = GamePlayed | CannotPlay | Gone


class WorkerFailed(Exception):
    """A worker could not play its games: the run cannot finish. One line, for the user."""


# -- the worker's side ---------------------------------------------------------------------------


def worker_main(conn: Connection, job: Job) -> None:
    """A worker process: its own Stockfish (and cb-async player) for all its games, one game per
    `PlayGame`, until `Quit` or the host is gone. A failure is told to the host in one
    `CannotPlay` and ends the worker: the host decides what happens to the run."""
    try:
        driver = StockfishDriver(job.engine, job.nodes)
    except (OSError, RuntimeError) as error:
        _tell(conn, CannotPlay(f"its engine {job.engine} would not start: {_describe(error)}"))
        return
    try:
        player = CbAsyncPlayer(job.player_nodes, job.player_eval_file) if job.player_nodes else None
        lines = openings()
        played = read_pgn_games(job.pgn) if job.pgn else None
        while True:
            message: HostMessage = conn.recv()
            match message:
                case PlayGame(index=index):
                    try:
                        if played is not None:
                            record = label_game(driver, index, played[index])
                        else:
                            record = play_game(driver, job.seed, index, lines, player, job.player_sides)
                    except Exception as error:  # noqa: BLE001 - told to the host, which ends the run
                        conn.send(CannotPlay(f"game {index}: {_describe(error)}"))
                        return
                    conn.send(GamePlayed(record))
                case Quit():
                    return
    except (EOFError, OSError):
        return  # the host is gone: nobody wants the game
    finally:
        driver.close()


def _tell(conn: Connection, message: CannotPlay) -> None:
    try:
        conn.send(message)
    except OSError:
        pass  # the host is gone


def _describe(error: BaseException) -> str:
    return str(error) or type(error).__name__


# -- the host's side -----------------------------------------------------------------------------


class DataWorkers:
    """`count` workers for `job`, seen from the host. Used as a context manager: the workers
    start on entry and all end on exit, whatever ends the block (the last game, an error,
    Ctrl-C)."""

    def __init__(self, job: Job, count: int) -> None:
        self.job = job
        self.count = count
        self.workers: list[WorkerProcess] = []
        #: Every worker's messages, tagged with its number (from 1), in the order they arrive.
        self.inbox: queue.SimpleQueue[tuple[int, WorkerMessage]] = queue.SimpleQueue()

    def __enter__(self) -> DataWorkers:
        try:
            self.start()
        except BaseException:
            self.end(finished=False)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.end(finished=kind is None)

    def start(self) -> None:
        context = start_context()
        for number in range(1, self.count + 1):
            worker = WorkerProcess(context, worker_main, (self.job,), f"cb-async eval-data {number}")
            self.workers.append(worker)
            try:
                worker.start()
            except (OSError, RuntimeError, EOFError) as error:
                raise WorkerFailed(f"the worker processes could not start ({_describe(error)})") from None
            worker.read(self._deliverer(number), self._on_gone(number))

    def _deliverer(self, number: int) -> Callable[[WorkerMessage], bool]:
        """What the reader thread of worker `number` does with each message: into the inbox."""
        def deliver(message: WorkerMessage) -> bool:
            self.inbox.put((number, message))
            return True

        return deliver

    def _on_gone(self, number: int) -> Callable[[], None]:
        def gone() -> None:
            self.inbox.put((number, Gone()))

        return gone

    def play(self, indices: Iterable[int]) -> Iterator[Record]:
        """Play the games `indices`, one at a time on each worker; yield each record as its game
        finishes. Raises `WorkerFailed` when a worker cannot play."""
        waiting = iter(indices)
        playing: dict[int, int] = {}  # worker number -> the game it plays

        def hand_out(number: int) -> None:
            index = next(waiting, None)
            if index is not None:
                playing[number] = index
                self.workers[number - 1].send(PlayGame(index))  # if it is gone, `Gone` follows

        for number in range(1, len(self.workers) + 1):
            hand_out(number)
        while playing:
            number, message = self.inbox.get()
            match message:
                case GamePlayed(record=record):
                    del playing[number]
                    hand_out(number)  # before the host writes this one: the worker goes on meanwhile
                    yield record
                case CannotPlay(reason=reason):
                    raise WorkerFailed(f"worker {number} failed: {reason}")
                case Gone():
                    raise WorkerFailed(f"worker {number} {self._how_it_ended(number)}")

    def _how_it_ended(self, number: int) -> str:
        worker = self.workers[number - 1]
        process = worker.process
        code = process.exitcode if process is not None else None
        if code is None:
            return f"(pid {worker.pid}) closed its pipe"
        if code < 0:
            try:
                return f"(pid {worker.pid}) was killed by {signal.Signals(-code).name}"
            except ValueError:
                pass
        return f"(pid {worker.pid}) died (exit code {code})"

    def end(self, finished: bool) -> None:
        """End every worker through `WorkerProcess.end`. All are asked to quit first, so that
        idle ones leave together. After the last game each may take `QUIT_SECONDS` to close its
        Stockfish; after an error or Ctrl-C they are terminated at once (a game half played is
        wanted by nobody), and each Stockfish ends at the end of its input."""
        for worker in self.workers:
            worker.send(Quit())
        for worker in self.workers:
            worker.end(wait=QUIT_SECONDS if finished else 0.0)
