"""The UCI side of the checks: a GUI's half of the conversation, strict only where clients are.

The handshake is lenient on purpose (it waits for `uciok` and keeps whatever came before), so a
flaw in the `id`/`option` lines fails the start-up checks and no other. Option lines are parsed
the way python-chess does (split on the words name/type/default/min/max/var).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import chess

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.driver import CheckFailed, EngineDriver, Line, Skipped
from cb_async.tools.gui_habits.moves import NO_MOVE, uci_move, uci_position

OPTION_WORDS = re.compile(r"\b(name|type|default|min|max|var)\b")
OPTION_TYPES = ("check", "spin", "combo", "button", "string")


@dataclass(frozen=True)
class UciOption:
    name: str
    type: str
    default: str | None
    min: str | None
    max: str | None
    vars: tuple[str, ...]
    line: str


def parse_option(line: str) -> UciOption:
    """An `option` line split as python-chess splits it (a missing field is None)."""
    parts = OPTION_WORDS.split(line.removeprefix("option").strip())
    fields: dict[str, str] = {}
    variants: list[str] = []
    for key, value in zip(parts[1::2], parts[2::2]):
        value = value.strip()
        if key == "var":
            variants.append(value)
        elif key not in fields:
            fields[key] = value
    return UciOption(fields.get("name", ""), fields.get("type", ""), fields.get("default"), fields.get("min"),
                     fields.get("max"), tuple(variants), line)


@dataclass
class BestMove:
    move: chess.Move | None
    ponder: chess.Move | None
    text: str
    line: Line
    infos: list[Line] = field(default_factory=list)


BESTMOVE = re.compile(r"bestmove(\s.*)?")


class UciEngine:
    """An engine spoken to over UCI, after `uci` ... `uciok`."""

    def __init__(self, driver: EngineDriver) -> None:
        self.driver = driver
        self.handshake_lines: list[Line] = []
        self.options: dict[str, UciOption] = {}
        self.uci_sent_at = 0.0
        self.uciok_at = 0.0

    def handshake(self, crlf: bool = False) -> UciEngine:
        self.uci_sent_at = self.driver.send("uci", ending="\r\n" if crlf else "\n")
        uciok, before = self.driver.read_until(r"\s*uciok\s*", bounds.ANSWER, "uciok")
        self.uciok_at = uciok.at
        self.handshake_lines = before
        for line in before:
            if line.text.startswith("option "):
                option = parse_option(line.text)
                self.options.setdefault(option.name.lower(), option)
        return self

    @property
    def id_name(self) -> str | None:
        for line in self.handshake_lines:
            if line.text.startswith("id name "):
                return line.text[len("id name "):].strip()
        return None

    def option(self, name: str) -> UciOption | None:
        return self.options.get(name.lower())

    def require_option(self, name: str, kind: str | None = None) -> UciOption:
        """The option, or the check is skipped: the engine does not claim the feature."""
        option = self.option(name)
        if option is None or (kind is not None and option.type != kind):
            raise Skipped(f"the engine declares no {name} option" + (f" of type {kind}" if kind else ""))
        return option

    # -- commands -------------------------------------------------------------------------------

    def send(self, *lines: str) -> float:
        return self.driver.send(*lines)

    def setoption(self, name: str, value: str | None = None) -> float:
        return self.send(f"setoption name {name}" + ("" if value is None else f" value {value}"))

    def new_game(self) -> None:
        """What python-chess and cutechess send before a game: `ucinewgame`, `isready`."""
        self.send("ucinewgame")
        self.isready()

    def isready(self, timeout: float | None = None, what: str = "readyok") -> list[Line]:
        """`isready` and its `readyok`; no `bestmove` may come before it (none is owed)."""
        self.send("isready")
        return self.readyok(timeout, what)

    def readyok(self, timeout: float | None = None, what: str = "readyok") -> list[Line]:
        wait = bounds.ANSWER if timeout is None else timeout
        _, before = self.driver.read_until("readyok", wait, what, forbid=BESTMOVE.pattern)
        return before

    def position(self, board: chess.Board) -> float:
        return self.send(uci_position(board))

    def bestmove(self, board: chess.Board, timeout: float, what: str = "bestmove") -> BestMove:
        """Read up to the `bestmove` for a search of `board`; check its move and ponder move."""
        line, before = self.driver.read_until(BESTMOVE.pattern, timeout, what, forbid="readyok")
        return self.judge_bestmove(board, line, before)

    def judge_bestmove(self, board: chess.Board, line: Line, infos: list[Line]) -> BestMove:
        words = line.text.split()
        if len(words) < 2:
            raise CheckFailed(f"{line.text!r} names no move")
        text = words[1]
        if not any(board.legal_moves):
            if text not in NO_MOVE:
                raise CheckFailed(f"bestmove {text!r} in a position with no legal move: expected (none) or 0000")
            return BestMove(None, None, text, line, infos)
        if text in NO_MOVE:
            raise CheckFailed(f"bestmove {text} although {board.fen()} has legal moves")
        move = uci_move(board, text)
        ponder = None
        if len(words) >= 4 and words[2] == "ponder" and words[3] not in NO_MOVE:
            after = board.copy()
            after.push(move)
            ponder = uci_move(after, words[3], "ponder move")
        elif len(words) > 2 and words[2] != "ponder":
            raise CheckFailed(f"{line.text!r}: only `ponder MOVE` may follow the best move")
        return BestMove(move, ponder, text, line, infos)

    def search(self, board: chess.Board, go: str, timeout: float) -> BestMove:
        """`position` for `board`, `go ...`, and the best move within `timeout`."""
        self.position(board)
        self.send(go)
        return self.bestmove(board, timeout)

    def quiet(self, window: float, what: str) -> list[Line]:
        """Watch `window` seconds: no `bestmove` may come (nothing is owed yet)."""
        return self.driver.quiet(window, BESTMOVE, what)

    def quit(self) -> None:
        self.send("quit")


def start(driver: EngineDriver, new_game: bool = True) -> UciEngine:
    """The usual start: `uci` ... `uciok`, then (cutechess, python-chess) `ucinewgame`, `isready`."""
    engine = UciEngine(driver).handshake()
    if new_game:
        engine.new_game()
    return engine


# -- info lines ------------------------------------------------------------------------------

#: How many values follow each `info` field (None: the rest of the line).
INFO_FIELDS: dict[str, int | None] = {
    "depth": 1, "seldepth": 1, "time": 1, "nodes": 1, "multipv": 1, "currmove": 1,
    "currmovenumber": 1, "hashfull": 1, "nps": 1, "tbhits": 1, "sbhits": 1, "cpuload": 1,
    "movesleft": 1, "ebf": 1, "wdl": 3, "string": None, "pv": None, "refutation": None,
    "currline": None,
}
INTEGER = re.compile(r"-?\d+")


def info_problems(board: chess.Board, text: str) -> list[str]:
    """What is wrong with one `info` line for a search of `board`, as GUIs parse it.

    Leading blanks (Arena drops the line, Devre#76), `score` without `cp`/`mate` (Scid drops it,
    en-croissant#500), a bound word anywhere but right after the score (python-chess), numbers
    that are not numbers, and a `pv` or `currmove` that is not legal from the searched position
    (anything after `pv` is read as moves by Scid, so `pv` comes last).
    """
    if text != text.lstrip():
        return ["starts with a blank"]
    words = text.split()
    problems: list[str] = []
    index = 1
    while index < len(words):
        word = words[index]
        if word == "score":
            kind = words[index + 1] if index + 1 < len(words) else ""
            value = words[index + 2] if index + 2 < len(words) else ""
            if kind not in ("cp", "mate") or not INTEGER.fullmatch(value):
                return [f"`score` must be followed by `cp N` or `mate N`, not {' '.join(words[index + 1:index + 3])!r}"]
            index += 3
            if index < len(words) and words[index] in ("lowerbound", "upperbound"):
                index += 1
            continue
        if word in ("lowerbound", "upperbound"):
            return [f"`{word}` must come right after the score value"]
        count = INFO_FIELDS.get(word, 0)
        if count is None:
            rest = words[index + 1:]
            if word == "pv":
                problems += _pv_problems(board, rest)
            break
        values = words[index + 1:index + 1 + count]
        if word == "currmove" and values:
            try:
                uci_move(board, values[0], "currmove")
            except CheckFailed as error:
                problems.append(str(error))
        elif word not in ("ebf", "currmove") and any(not INTEGER.fullmatch(v) for v in values):
            problems.append(f"`{word}` needs {count} whole number(s), got {' '.join(values)!r}")
        elif len(values) < count:
            problems.append(f"`{word}` needs {count} value(s)")
        index += 1 + count
    return problems


def _pv_problems(board: chess.Board, moves: list[str]) -> list[str]:
    replay = board.copy()
    for number, text in enumerate(moves, 1):
        try:
            move = uci_move(replay, text, f"pv move {number}")
        except CheckFailed as error:
            return [str(error)]
        replay.push(move)
    return [] if moves else ["`pv` with no moves"]
