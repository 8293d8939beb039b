"""Which engine a worker runs: cb-async's own search, or any UCI engine through python-chess.

A worker (a local process or a Ray actor) builds one `PositionAnalyst` from an `EngineSpec` when
it starts and keeps it for its whole life; the spec is all that crosses to it. The process that
runs the worker stays the pool's (`local`, `ray_pool`); this module only decides what runs
inside it.

A UCI engine is one subprocess per worker, driven by python-chess's `SimpleEngine`: started
once, started again if it dies, quit when the worker ends. Before each position it is sent
`ucinewgame` (python-chess does so when the `game` changes), which clears its table as our own
analyst clears its own: with a node or depth budget and one thread, the answer is then a
function of the position alone, as for cb-async (`reproducibility`). An engine that dies on a
position is started again and given the position again; after `ATTEMPTS` deaths the position is
a `Failure`, which the job reports without inventing an answer.

Every worker starts its engine when it starts, before any position is handed out: a command that
does not start, is not a UCI engine, or refuses an option is one `EngineUnavailable` with the
reason, which the pool turns into its `PoolError` (on Ray, with the node's name). `identify` is
the same check for a program that wants it before building a job.

An engine that never answers (a hang rather than a death) is not timed out: with a node or depth
budget there is no deadline to hold it to.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
from dataclasses import dataclass
from typing import Protocol

import chess
import chess.engine

from cb_async.analysis.model import Answer, Evaluation, Failure, Line, PositionTask
from cb_async.limits import Limits
from cb_async.results import Score
from cb_async.version import __version__

#: A node budget never needs more (as for our own analyst); a user's `--option Hash=...` wins.
UCI_HASH_MB = 16
#: Tries per position: the first, and one more after a restart of a dead engine.
ATTEMPTS = 2
#: Seconds an engine may take to start and answer `uci`/`isready`.
START_TIMEOUT = 30.0


class EngineUnavailable(Exception):
    """The engine command cannot serve: missing, not UCI, an unknown option, dead at start."""


@dataclass(frozen=True, slots=True)
class EngineSpec:
    """An engine to run in every worker: a UCI command and its options, or None for cb-async.

    `options` are (name, value) pairs as given on the command line (`--option Threads=1`);
    `Threads` 1 and `Hash` 16 are set unless given, so that results are reproducible.
    """

    command: tuple[str, ...] | None = None
    options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def parse(cls, command: str | None, options: list[str] | tuple[str, ...] = ()) -> EngineSpec:
        """From the command line's `--engine CMD` and `--option NAME=VALUE` words."""
        pairs: list[tuple[str, str]] = []
        for option in options:
            name, equals, value = option.partition("=")
            if not equals or not name.strip():
                raise EngineUnavailable(f"--option must be NAME=VALUE, not {option!r}")
            pairs.append((name.strip(), value.strip()))
        if command is None or command in ("cb-async", "cb_async", "own"):
            if pairs:
                raise EngineUnavailable("--option is for a UCI engine given with --engine; cb-async's own "
                                        "analysis takes its budget from --nodes/--depth/--movetime")
            return cls()
        words = tuple(shlex.split(command))
        if not words:
            raise EngineUnavailable("--engine needs a command")
        return cls(words, tuple(pairs))

    @property
    def own(self) -> bool:
        return self.command is None

    def settings(self) -> dict[str, str]:
        """The UCI options to set: the user's, with Threads 1 and Hash 16 unless given."""
        given = dict(self.options)
        lowered = {name.lower() for name in given}
        defaults = {"Threads": "1", "Hash": str(UCI_HASH_MB)}
        return {**{k: v for k, v in defaults.items() if k.lower() not in lowered}, **given}

    def describe(self) -> str:
        if self.command is None:
            return f"cb-async {__version__}"
        options = ", ".join(f"{name} {value}" for name, value in self.settings().items())
        return f"{shlex.join(self.command)} ({options})"


@dataclass(frozen=True, slots=True)
class Identity:
    """What the engine says it is, and the options it was given (only those it has)."""

    name: str
    options: tuple[tuple[str, str], ...]


class PositionAnalyst(Protocol):
    name: str

    def evaluate(self, task: PositionTask, limits: Limits) -> Answer: ...

    def close(self) -> None: ...


def open_analyst(spec: EngineSpec) -> PositionAnalyst:
    """The analyst a worker keeps for its life (raises `EngineUnavailable` for a bad command)."""
    if spec.command is None:
        from cb_async.analysis.analyst import Analyst

        return Analyst()
    return UciAnalyst(spec)


def identify(spec: EngineSpec) -> Identity:
    """Start the engine once, read its name, set its options, quit: the check before any work."""
    if spec.command is None:
        return Identity(f"cb-async {__version__}", ())
    analyst = UciAnalyst(spec)
    try:
        return analyst.identity
    finally:
        analyst.close()


def reproducibility(spec: EngineSpec, limits: Limits) -> tuple[bool, str]:
    """Whether the same input gives the same output (any workers, any resume), and why."""
    if limits.movetime is not None:
        return False, "a time budget (--movetime): results depend on the machine's speed and load"
    threads = next((value for name, value in spec.settings().items() if name.lower() == "threads"), "1")
    if spec.command is not None and threads.strip() != "1":
        return False, f"Threads {threads}: several threads search in an order no run repeats"
    budget = "a node budget" if limits.nodes is not None else "a depth budget"
    return True, f"{budget}, one thread, the table cleared before each position"


def resolve(command: list[str]) -> list[str]:
    """The command with its program found: on the PATH, else in /usr/games, where Debian puts
    its engines (on no PATH of root's)."""
    program = command[0]
    if os.sep in program or shutil.which(program) is not None:
        return command
    games = os.path.join("/usr/games", program)
    return [games, *command[1:]] if shutil.which(games) is not None else command


def node_name() -> str:
    """This machine's name, for errors that must say where an engine is missing."""
    return socket.gethostname()


class UciAnalyst:
    """One UCI engine subprocess; `evaluate` answers one position from a cleared table."""

    def __init__(self, spec: EngineSpec) -> None:
        assert spec.command is not None
        self.spec = spec
        self._engine: chess.engine.SimpleEngine | None = None
        self.identity = self._start()
        self.name = self.identity.name

    def _start(self) -> Identity:
        command = resolve(list(self.spec.command or ()))
        try:
            engine = chess.engine.SimpleEngine.popen_uci(command, timeout=START_TIMEOUT)
        except FileNotFoundError:
            raise EngineUnavailable(f"--engine {shlex.join(command)}: no such command") from None
        except PermissionError:
            raise EngineUnavailable(f"--engine {shlex.join(command)}: not executable") from None
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError, OSError) as error:
            raise EngineUnavailable(f"--engine {shlex.join(command)} did not start as a UCI engine "
                                    f"({_reason(error)})") from None
        applied: list[tuple[str, str]] = []
        try:
            known = {name.lower(): name for name in engine.options}
            for name, value in self.spec.settings().items():
                real = known.get(name.lower())
                if real is None:
                    if (name, value) in self.spec.options:
                        raise EngineUnavailable(f"{engine.id.get('name', command[0])} has no option {name!r}")
                    continue  # a default of ours (Threads, Hash) the engine does not have
                engine.configure({real: value})
                applied.append((real, value))
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, ValueError, TypeError) as error:
            engine.close()
            raise EngineUnavailable(f"--engine {shlex.join(command)}: {_reason(error)}") from None
        except EngineUnavailable:
            engine.close()
            raise
        self._engine = engine
        return Identity(engine.id.get("name", command[0]), tuple(applied))

    def evaluate(self, task: PositionTask, limits: Limits) -> Answer:
        board = task.board()
        if not any(board.generate_legal_moves()):
            return _terminal(task, board)
        limit = chess.engine.Limit(nodes=limits.nodes, depth=limits.depth,
                                   time=limits.movetime / 1000 if limits.movetime is not None else None)
        last = ""
        for _ in range(ATTEMPTS):
            try:
                if self._engine is None:
                    self._start()
                assert self._engine is not None
                # A new `game` each time: python-chess sends `ucinewgame`, the engine clears its table.
                infos = self._engine.analyse(board, limit, multipv=limits.multipv, game=object(),
                                             info=chess.engine.INFO_ALL)
                return _evaluation(task, board, infos)
            except (chess.engine.EngineTerminatedError, chess.engine.EngineError, EngineUnavailable,
                    TimeoutError) as error:
                last = _reason(error)
                self.close()
        return Failure(task.key, f"{self.name} failed {ATTEMPTS} times on {task.fen} ({last})")

    def close(self) -> None:
        if self._engine is not None:
            engine, self._engine = self._engine, None
            try:
                engine.quit()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError, OSError):
                engine.close()


def _reason(error: BaseException) -> str:
    return str(error).strip() or type(error).__name__


def _score(info: chess.engine.InfoDict) -> Score:
    pov = info.get("score")
    if pov is None:
        return Score(cp=0)
    relative = pov.relative
    mate = relative.mate()
    return Score(mate=mate) if mate is not None else Score(cp=relative.score())


def _terminal(task: PositionTask, board: chess.Board) -> Evaluation:
    score = Score(mate=0) if board.is_check() else Score(cp=0)
    return Evaluation(task.key, None, score, (), 0, 0, 0, 0, (Line(score, ()),))


def _evaluation(task: PositionTask, board: chess.Board, infos: list[chess.engine.InfoDict]) -> Answer:
    first = infos[0] if infos else {}
    pv = tuple(move.uci() for move in first.get("pv", ()))
    if not pv or not board.is_legal(chess.Move.from_uci(pv[0])):
        return Failure(task.key, f"the engine gave no legal line for {task.fen}")
    lines = tuple(Line(_score(info), tuple(move.uci() for move in info.get("pv", ()))) for info in infos)
    return Evaluation(
        key=task.key, best=pv[0], score=_score(first), pv=pv, depth=int(first.get("depth", 0)),
        seldepth=int(first.get("seldepth", first.get("depth", 0))), nodes=int(first.get("nodes", 0)),
        time_ms=round(float(first.get("time", 0.0)) * 1000), lines=lines,
    )
