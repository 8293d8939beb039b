"""The XBoard (CECP v2) side of the checks: a GUI's half of the conversation.

The handshake is XBoard's and cutechess's: `xboard`, `protover 2`, features read until
`done=1` (2 s without `done`, 10 s after `done=0`), each answered with `accepted` (python-chess
sends none: one check does it that way). Feature lines are split with `shlex`, as python-chess
splits them. Moves from the GUI carry `usermove ` when the engine asked for it.
"""

from __future__ import annotations

import re
import shlex
import time
from dataclasses import dataclass, field

import chess

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.driver import CheckFailed, EngineDriver, Line, Skipped
from cb_async.tools.gui_habits.moves import xboard_move

MOVE = re.compile(r"move\s+(\S+)\s*")
ERROR = re.compile(r"\s*(Error|Illegal move)(\s*\([^()]*\))?\s*:.*")  # python-chess's own pattern
THINKING = re.compile(r"\s*\d+\S?\s+-?\d+\s+\d+\s+\d+(\s.*)?")


@dataclass
class Features:
    values: dict[str, str] = field(default_factory=dict)
    options: list[str] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    done: str | None = None
    done_at: float = 0.0

    def flag(self, name: str, default: str = "0") -> bool:
        return self.values.get(name, default) == "1"


def parse_features(text: str) -> list[tuple[str, str]]:
    """`feature a=1 b="x y"` as python-chess reads it: shlex words split at the first `=`."""
    try:
        words = shlex.split(text)[1:]
    except ValueError:
        raise CheckFailed(f"{text!r}: unbalanced quotes") from None
    pairs = []
    for word in words:
        name, _, value = word.partition("=")
        pairs.append((name, value))
    return pairs


@dataclass
class Played:
    move: chess.Move
    text: str
    line: Line
    before: list[Line]


class XBoardEngine:
    """An engine spoken to over CECP v2."""

    def __init__(self, driver: EngineDriver) -> None:
        self.driver = driver
        self.features = Features()
        self.pings = 0
        self.protover_at = 0.0

    def handshake(self, accept: bool = True, ending: str = "\n") -> XBoardEngine:
        self.driver.send("xboard", ending=ending)
        self.protover_at = self.driver.send("protover 2", ending=ending)
        deadline = self.protover_at + bounds.FEATURES
        while self.features.done != "1":
            line = self.driver.read(deadline - time.monotonic())
            if line is None:
                if self.driver.ended:
                    raise CheckFailed(f"the engine's output ended during the handshake{self.driver.exit_note()}")
                break  # XBoard and python-chess go on after their wait
            if not line.text.startswith("feature "):
                continue
            self.features.lines.append(line)
            for name, value in parse_features(line.text):
                if name == "option":
                    self.features.options.append(value)
                elif name == "done":
                    self.features.done = value
                    self.features.done_at = line.at
                    if value == "0":
                        deadline = self.protover_at + bounds.ANSWER
                else:
                    self.features.values[name] = value
                if accept and name != "done":
                    self.driver.send(f"accepted {name}", ending=ending)
        if accept and self.features.done == "1":
            self.driver.send("accepted done", ending=ending)
        return self

    def require(self, name: str, why: str) -> None:
        if not self.features.flag(name, "1" if name in ("analyze", "time", "draw", "reuse") else "0"):
            raise Skipped(f"the engine declares {name}=0 ({why})" if name in self.features.values
                          else f"the engine does not declare {name}=1 ({why})")

    def require_variant(self, variant: str) -> None:
        if variant not in self.features.values.get("variants", "").split(","):
            raise Skipped(f"`variants` does not list {variant}")

    def option(self, name: str) -> str | None:
        for definition in self.features.options:
            if definition.split(" -", 1)[0].strip().lower() == name.lower():
                return definition
        return None

    # -- commands -------------------------------------------------------------------------------

    def send(self, *lines: str) -> float:
        return self.driver.send(*lines)

    def move_command(self, board: chess.Board, move: chess.Move) -> str:
        """The move as XBoard writes it (O-O in Chess960), with `usermove ` if asked for."""
        if board.chess960 and board.is_castling(move):
            text = "O-O" if board.is_kingside_castling(move) else "O-O-O"
        else:
            text = board.uci(move, chess960=False)
        return f"usermove {text}" if self.features.flag("usermove") else text

    def new_game(self, fen: str | None = None, variant: str | None = None) -> chess.Board:
        """`new` (+ `variant`), `force`, `setboard` if a position is given; the engine is in force mode."""
        self.send("new")
        if variant:
            self.send(f"variant {variant}")
        self.send("force")
        board = chess.Board(chess960=variant == "fischerandom")
        if fen is not None:
            self.send(f"setboard {fen}")
            board = chess.Board(fen, chess960=variant == "fischerandom")
        return board

    def ping(self, timeout: float | None = None, what: str | None = None, *,
             forbid: str | None = None) -> list[Line]:
        """`ping N` and its `pong N`; returns the lines before the pong."""
        self.pings += 1
        self.send(f"ping {self.pings}")
        wait = bounds.ANSWER if timeout is None else timeout
        _, before = self.driver.read_until(rf"pong {self.pings}", wait, what or f"pong {self.pings}",
                                           forbid=forbid)
        return before

    def expect_move(self, board: chess.Board, timeout: float, what: str = "move") -> Played:
        """Read up to `move X`; X must be legal in `board`. No `Illegal move` may come first."""
        line, before = self.driver.read_until(MOVE.pattern, timeout, what, forbid=r"\s*Illegal move.*")
        match = MOVE.fullmatch(line.text)
        assert match is not None
        return Played(xboard_move(board, match.group(1)), match.group(1), line, before)

    def quiet(self, window: float, what: str) -> list[Line]:
        """Watch `window` seconds: no `move` may come."""
        return self.driver.quiet(window, MOVE, what)


def start(driver: EngineDriver) -> XBoardEngine:
    """XBoard's start: the handshake, each feature accepted."""
    return XBoardEngine(driver).handshake()


def errors(lines: list[Line]) -> list[str]:
    """The `Error ...`/`Illegal move ...` lines python-chess would raise on."""
    return [line.text for line in lines if ERROR.fullmatch(line.text)]
