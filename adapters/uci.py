"""The UCI adapter: UCI text in, commands out; events in, UCI text out.

It follows the spec and what real GUIs send (docs/protocols.md; `cb-async conformance` checks
the GUIs' habits): tokens split on any whitespace, unknown commands and tokens answered with an
`info string` and otherwise ignored, a broken `position` keeps the last good one, and every
`go`, even a malformed one, becomes a search (so it gets exactly one `bestmove`). It follows the two options
that change its own notation, `UCI_Chess960` (castling as king takes rook) and `UCI_ShowWDL`,
from the session's `OptionsSet` (so only values the session accepted count).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import chess

from cb_async.commands import (
    Command, Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions, SetPosition, Stop,
)
from cb_async.events import (
    AdapterEvent, BestMove, Event, Identity, Info, Message, OptionError, OptionsSet, Ready, SearchStarted,
)
from cb_async.framing import TooLong
from cb_async.limits import Limits, LimitsError
from cb_async.adapters.uci_identity import identity_lines
from cb_async.positions import FenError, parse_fen
from cb_async.results import SearchInfo, wdl_of

COMMANDS = frozenset({
    "uci", "debug", "isready", "setoption", "register", "ucinewgame", "position", "go", "stop",
    "ponderhit", "quit",
})
_GO_INT_PARAMS = ("wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime")
_GO_WORDS = frozenset(_GO_INT_PARAMS) | {"searchmoves", "ponder", "infinite"}


@dataclass(frozen=True, slots=True)
class UciNotice(AdapterEvent):
    """The adapter's own message (bad input), written as `info string` in order."""

    text: str


class UciAdapter:
    name = "uci"

    def __init__(self) -> None:
        self.chess960 = False
        self.show_wdl = False
        self._position = chess.Board()
        #: The last info line written for each MultiPV line of the running search: the answer
        #: repeats a final line only if it was not the last one written.
        self._shown: dict[int, SearchInfo] = {}

    # -- input --------------------------------------------------------------------------------

    def receive(self, line: str | TooLong, received_at: float) -> list[Command]:
        if isinstance(line, TooLong):
            return [self._notice(f"ignored a line of {line.size} bytes: over the 1 MiB limit")]
        tokens = line.split()
        if not tokens:
            return []
        skipped: list[str] = []
        while tokens and tokens[0] not in COMMANDS:
            skipped.append(tokens.pop(0))
        if not tokens:
            if skipped == ["xboard"]:
                return []  # Arena's autodetect says xboard first
            return [self._notice(f"unknown command: {' '.join(skipped)[:200]}")]
        command, args = tokens[0], tokens[1:]
        match command:
            case "uci":
                return [Identify()]
            case "isready":
                return [IsReady()]
            case "debug":
                return []  # accepted: the engine has no extra diagnostics to turn on
            case "setoption":
                return self._setoption(line)
            case "register":
                return []
            case "ucinewgame":
                return [NewGame()]
            case "position":
                return self._position_command(args)
            case "go":
                return self._go(args, received_at)
            case "stop":
                return [Stop()]
            case "ponderhit":
                return [PonderHit(received_at=received_at)]
            case "quit":
                return [Quit()]
        raise AssertionError(command)

    def drain_notes(self) -> list[str]:
        return []

    def _notice(self, text: str) -> Command:
        return Emit(UciNotice(text))

    def _setoption(self, line: str) -> list[Command]:
        # Names and values may contain spaces: the name runs from `name` to `value`.
        words = line.split()
        lowered = [word.lower() for word in words]
        if "name" not in lowered:
            return [self._notice("setoption needs: setoption name <name> [value <value>]")]
        name_at = lowered.index("name")
        value_at = lowered.index("value", name_at) if "value" in lowered[name_at:] else None
        name = " ".join(words[name_at + 1 : value_at])
        value: str | None = None
        if value_at is not None:
            value = _rest_after(line, value_at)
        if not name:
            return [self._notice("setoption needs an option name")]
        return [SetOptions(((name, value),))]

    def _position_command(self, args: list[str]) -> list[Command]:
        if not args:
            return [self._notice("position needs startpos or fen")]
        moves_at = args.index("moves") if "moves" in args else len(args)
        kind, setup, moves = args[0], args[1:moves_at], args[moves_at + 1 :]
        if kind == "startpos":
            board = chess.Board(chess960=self.chess960)
        elif kind == "fen":
            try:
                board = parse_fen(" ".join(setup), chess960=self.chess960)
            except FenError as error:
                return [self._notice(f"invalid FEN, position unchanged: {error}")]
        else:
            return [self._notice(f"position needs startpos or fen, not {kind!r}; position unchanged")]
        for text in moves:
            try:
                board.push(board.parse_uci(text.lower()))
            except ValueError:
                return [self._notice(f"illegal move {text} in position, position unchanged")]
        self._position = board
        return [SetPosition(board)]

    def _go(self, args: list[str], received_at: float) -> list[Command]:
        notes: list[Command] = []
        fields: dict[str, Any] = {}
        ponder = infinite = False
        search_moves: list[chess.Move] = []
        i = 0
        while i < len(args):
            word = args[i]
            i += 1
            if word == "ponder":
                ponder = True
            elif word == "infinite":
                infinite = True
            elif word == "searchmoves":
                while i < len(args) and args[i] not in _GO_WORDS:
                    text = args[i]
                    i += 1
                    if text == "0000":
                        continue
                    try:
                        search_moves.append(self._position.parse_uci(text.lower()))
                    except ValueError:
                        notes.append(self._notice(f"searchmoves: ignored {text}, not a legal move here"))
            elif word in _GO_INT_PARAMS:
                if i >= len(args):
                    notes.append(self._notice(f"go: {word} needs a value"))
                    break
                raw = args[i]
                i += 1
                try:
                    number = int(float(raw))
                except ValueError:
                    notes.append(self._notice(f"go: ignored {word} {raw}, not a number"))
                    continue
                fields[word] = number
            else:
                notes.append(self._notice(f"go: ignored unknown token {word}"))
        limits, more_notes = _limits_from(fields, infinite, tuple(search_moves))
        notes.extend(self._notice(text) for text in more_notes)
        return [*notes, Go(limits, ponder=ponder, received_at=received_at)]

    # -- output -------------------------------------------------------------------------------

    def on_event(self, event: Event | AdapterEvent) -> tuple[list[str], list[Command]]:
        return self.format(event), []

    def format(self, event: Event | AdapterEvent) -> list[str]:
        match event:
            case Identity(name=name, version=version, author=author, options=options):
                return identity_lines(name, version, author, options)
            case Ready():
                return ["readyok"]
            case SearchStarted():
                self._shown.clear()
            case Info(info=info, board=board):
                self._shown[info.multipv] = info
                return [self.info_line(info, board)]
            case BestMove():
                return self._bestmove_lines(event)
            case Message(text=text) | UciNotice(text=text):
                return [f"info string {_one_line(text)}"]
            case OptionError(message=message):
                return [f"info string {_one_line(message)}"]
            case OptionsSet(values=values):
                self._follow_options(values)
        return []

    def _follow_options(self, values: dict[str, Any]) -> None:
        if "UCI_Chess960" in values:
            self.chess960 = values["UCI_Chess960"]
            self._position.chess960 = self.chess960
        if "UCI_ShowWDL" in values:
            self.show_wdl = values["UCI_ShowWDL"]

    def info_line(self, info: SearchInfo, board: chess.Board) -> str:
        parts = [f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)} multipv {info.multipv}",
                 f"score {info.score}"]
        if info.bound is not None:
            parts.append(f"{info.bound}bound")
        if self.show_wdl:
            wdl = info.wdl or wdl_of(info.score)
            parts.append(f"wdl {wdl[0]} {wdl[1]} {wdl[2]}")
        parts.append(f"nodes {info.nodes} nps {info.nps} hashfull {info.hashfull} tbhits {info.tbhits} time {info.time}")
        if info.pv:
            parts.append("pv " + " ".join(move_text(board, info.pv)))
        return " ".join(parts)

    def _bestmove_lines(self, event: BestMove) -> list[str]:
        result, board = event.result, event.board
        if result.best_move is None:
            return [f"info depth 0 score {result.score}", "bestmove (none)"]
        # The final lines, unless each is the last one written already (a search stopped between
        # iterations ends on the lines of its last complete depth).
        lines = [self.info_line(line, board) for line in result.lines if self._shown.get(line.multipv) != line]
        if not result.lines:
            # Stopped before depth 1 completed: still a complete info with a score.
            lines = [self.info_line(SearchInfo(
                depth=result.depth, seldepth=result.seldepth, multipv=1, score=result.score,
                nodes=result.nodes, nps=_nps(result.nodes, result.time), time=result.time,
                pv=result.pv or (result.best_move,), hashfull=result.hashfull, tbhits=result.tbhits,
            ), board)]
        best = move_text(board, (result.best_move,))[0]
        if result.source != "search":
            lines.insert(0, f"info string {result.source} move {best}")
        if result.ponder_move is not None:
            pv = move_text(board, (result.best_move, result.ponder_move))
            lines.append(f"bestmove {best} ponder {pv[1]}")
        else:
            lines.append(f"bestmove {best}")
        return lines


def move_text(board: chess.Board, moves: tuple[chess.Move, ...]) -> list[str]:
    """Moves in UCI notation. The search generates castling in the board's own mode (king takes
    rook on a Chess960 board, `e1g1` otherwise), so the plain text is already right."""
    return [move.uci() for move in moves]


#: `go` parameter, Limits field, least sensible value, and whether a value below it is raised to
#: it (a clock at or below zero is 1 ms: the GUI still wants a move) or dropped.
_GO_FIELDS = (
    ("wtime", "white_clock", 1, True), ("btime", "black_clock", 1, True), ("movetime", "movetime", 1, True),
    ("winc", "white_inc", 0, False), ("binc", "black_inc", 0, False),
    ("movestogo", "moves_to_go", 1, False), ("depth", "depth", 1, False), ("nodes", "nodes", 1, False),
    ("mate", "mate", 1, False),
)


def _limits_from(fields: dict[str, int], infinite: bool,
                 search_moves: tuple[chess.Move, ...]) -> tuple[Limits, list[str]]:
    """Real GUI quirks to valid Limits: a clock at or below zero is 1 ms, nonsense is dropped."""
    notes: list[str] = []
    values: dict[str, Any] = {}
    for uci_name, field_name, least, clamp in _GO_FIELDS:
        if uci_name not in fields:
            continue
        value = fields[uci_name]
        if value < least:
            if not clamp:
                notes.append(f"go: ignored {uci_name} {value}")
                continue
            notes.append(f"go: {uci_name} {value} counted as {least} ms")
            value = least
        values[field_name] = value
    try:
        limits = Limits(infinite=infinite, search_moves=search_moves, **values)
    except LimitsError as error:  # cannot happen after the clean-up above; stay safe anyway
        notes.append(f"go: {error}; searching without limits")
        limits = Limits(infinite=infinite)
    return limits, notes


def _rest_after(line: str, word_index: int) -> str:
    """The text after the `word_index`-th word of `line`, spacing inside it kept."""
    rest = line.strip()
    for _ in range(word_index + 1):
        parts = rest.split(None, 1)
        rest = parts[1] if len(parts) > 1 else ""
    return rest


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _nps(nodes: int, time_ms: int) -> int:
    return nodes * 1000 // time_ms if time_ms > 0 else 0
