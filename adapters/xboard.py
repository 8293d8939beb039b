"""The XBoard/CECP v2 adapter: the engine keeps the game, the session keeps the searches.

In CECP the GUI sends one move at a time and the engine decides by itself when it is its turn,
so this adapter owns the XBoard game: the position and the moves that led to it (for `undo` and
`remove`), which side the engine plays (`new`, `go`, `playother`, `force`), analyze mode, the
clock settings (`level`, `st`, `sd`, `nps`, `time`/`otim`), `post` and `hard`. It turns that
state into the same neutral `Go`/`Limits` the UCI adapter builds, so both protocols drive the
same search; only the session starts searches.

Ordering is what makes it safe. The session calls `receive` only once earlier commands are
fully handled, and calls `on_event` synchronously. So when a best move comes back the adapter
applies it to its game *before* it formats `move e7e5`, and the GUI's instant answer always
meets the updated game. In `hard` mode the same event asks for the ponder search as a
follow-up command, which the session runs before any later input.

Bad input never raises: an illegal move gets `Illegal move: MOVE`, an unknown command
`Error (unknown command): CMD`, a bad `setboard` `tellusererror Illegal position: FEN`; everything
python-chess (and so lichess-bot) sends is accepted silently, because it aborts a game on any
`Error` or `Illegal move` line. The protocol facts are in `docs/protocols.md`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import chess

from cb_async import options as option_table
from cb_async.commands import (
    BookQuery, Cancel, Command, Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop,
)
from cb_async.events import (
    AdapterEvent, BestMove, BookEntries, Event, Identity, Info, Message, OptionError, Ready, SearchKind,
    SearchKindChanged,
)
from cb_async.framing import TooLong
from cb_async.limits import Limits
from cb_async.options import OptionSpec
from cb_async.positions import FenError, parse_fen
from cb_async.results import Score, SearchInfo

if TYPE_CHECKING:
    from cb_async.search.book import BookMove

#: Options with a CECP command of their own, so no `option=` feature: memory, cores, hard/easy.
_OPTIONS_WITH_COMMANDS = frozenset({"Hash", "Threads", "Ponder"})

#: Sent by python-chess and XBoard as housekeeping; accepted without a word.
_SILENT = frozenset({
    "xboard", "accepted", "rejected", "random", "draw", ".",
})

_COORDINATE_MOVE = re.compile(r"[a-h][1-8][a-h][1-8][qrbnk]?")
_CASTLING = {"O-O": "O-O", "0-0": "O-O", "O-O-O": "O-O-O", "0-0-0": "O-O-O"}
_LEVEL_BASE = re.compile(r"(\d+(?:\.\d*)?)(?::(\d+(?:\.\d*)?))?")

#: The tag of the options an `egtpath` command sets.
EGTPATH_TAG = "egtpath"


@dataclass(frozen=True, slots=True)
class XBoardLines(AdapterEvent):
    """The adapter's own output (an error, a result, a hint), passed through the session with
    `Emit` so that it is written in order with what earlier commands produce."""

    lines: tuple[str, ...]


def _say(*lines: str) -> Command:
    return Emit(XBoardLines(lines))


# -- moves ------------------------------------------------------------------------------------


def parse_move(board: chess.Board, text: str) -> chess.Move:
    """A legal move from CECP text: coordinates (`e2e4`, `e7e8q`), `O-O`/`O-O-O` (also with
    zeros), and in Chess960 king-takes-rook or the king's destination when that is unambiguous.
    ValueError otherwise."""
    castling = _CASTLING.get(text.upper())
    if castling is not None:
        try:
            return board.parse_san(castling)
        except ValueError:
            raise ValueError(f"illegal castling {text}") from None
    lowered = text.lower()
    if not _COORDINATE_MOVE.fullmatch(lowered):
        raise ValueError(f"not a move: {text}")
    try:
        return board.parse_uci(lowered)
    except ValueError:
        pass
    move = chess.Move.from_uci(lowered)
    if board.king(board.turn) == move.from_square:
        # Chess960 king's destination form (`f1c1` for O-O-O with the king on f1).
        matches = [m for m in board.generate_castling_moves()
                   if m.from_square == move.from_square and _castled_king_square(board, m) == move.to_square]
        if len(matches) == 1:
            return matches[0]
    raise ValueError(f"illegal move: {text}")


def _castled_king_square(board: chess.Board, move: chess.Move) -> chess.Square:
    rank = chess.square_rank(move.from_square)
    return chess.square(6 if board.is_kingside_castling(move) else 2, rank)


def move_text(board: chess.Board, move: chess.Move) -> str:
    """CECP coordinate notation; castling in Chess960 as `O-O`/`O-O-O` (XBoard's default,
    what cutechess and python-chess send and accept)."""
    if board.chess960 and board.is_castling(move):
        return "O-O" if board.is_kingside_castling(move) else "O-O-O"
    return board.uci(move)


def pv_text(board: chess.Board, moves: tuple[chess.Move, ...]) -> list[str]:
    """A PV in coordinate notation, cut at the first move that is not legal."""
    board = board.copy(stack=False)
    texts: list[str] = []
    for move in moves:
        if not board.is_legal(move):
            break
        texts.append(move_text(board, move))
        board.push(move)
    return texts


def game_result(board: chess.Board) -> str | None:
    """The RESULT line for a game over on the board, or None.

    Only what is true now: mate, stalemate, insufficient material, the fifty-move rule and a
    threefold repetition that has happened. (python-chess's `outcome(claim_draw=True)` also
    counts a repetition the opponent could reach with its next move: a false claim forfeits.)
    """
    if board.is_checkmate():
        return "0-1 {Black mates}" if board.turn == chess.WHITE else "1-0 {White mates}"
    if board.is_stalemate():
        return "1/2-1/2 {Stalemate}"
    if board.is_insufficient_material():
        return "1/2-1/2 {Insufficient material}"
    if board.halfmove_clock >= 100:
        return "1/2-1/2 {Draw by fifty move rule}"
    if board.is_repetition(3):
        return "1/2-1/2 {Draw by repetition}"
    return None


def score_value(score: Score) -> int:
    """Centipawns, or CECP's mate convention: 100000 + N for mate in N moves, -100000 - N
    when being mated in N."""
    if score.mate is None:
        assert score.cp is not None
        return score.cp
    return 100000 + score.mate if score.mate > 0 else -100000 + score.mate


def thinking_line(info: SearchInfo, board: chess.Board, post_moves: tuple[chess.Move, ...] = ()) -> str:
    """`depth score time nodes pv`: score from the side to move of `board` (the engine's side
    in a game, the side to move in analysis), time in centiseconds. A PV that failed low ends
    in `?`, one that failed high in `!`, so XBoard does not sort other lines under it."""
    pv = " ".join(pv_text(board, info.pv + post_moves))
    if info.bound == "upper":
        pv += "?"
    elif info.bound == "lower":
        pv += "!"
    line = f"{info.depth} {score_value(info.score)} {info.time // 10} {info.nodes}"
    return f"{line} {pv}" if pv else line


# -- time --------------------------------------------------------------------------------------


@dataclass
class TimeControl:
    """`level`, `st`, `sd`, `nps` and the last `time`/`otim`, in CECP's own units until
    `limits` turns them into milliseconds.

    Three units for one idea: `time`/`otim` in centiseconds, `level` base in minutes or
    minutes:seconds with an increment in (fractional) seconds, `st` in (fractional) seconds.
    """

    moves_per_session: int = 0
    base_ms: int | None = None
    increment_ms: int = 0
    seconds_per_move: float | None = None
    depth: int | None = None
    node_rate: int | None = None
    own_cs: int | None = None
    opponent_cs: int | None = None

    def set_level(self, moves: int, base_ms: int, increment_ms: int) -> None:
        """`level` replaces `st`; the clocks are the base until `time`/`otim` say otherwise."""
        self.moves_per_session, self.base_ms, self.increment_ms = moves, base_ms, increment_ms
        self.seconds_per_move = None
        self.own_cs = self.opponent_cs = None

    def set_seconds_per_move(self, seconds: float) -> None:
        """`st` replaces `level`."""
        self.seconds_per_move = seconds
        self.moves_per_session, self.base_ms, self.increment_ms = 0, None, 0
        self.own_cs = self.opponent_cs = None

    def limits(self, board: chess.Board, engine: chess.Color) -> Limits:
        """The Limits of the engine's next move from `board`."""
        depth = self.depth
        if self.seconds_per_move is not None:
            if self.node_rate:
                # python-chess emulates node limits with `nps 1` + `st NODES`, cutechess with
                # `st 1` + `nps NODES`: either way the budget is rate * seconds nodes.
                return Limits(nodes=max(1, round(self.node_rate * self.seconds_per_move)), depth=depth)
            return Limits(movetime=max(1, round(self.seconds_per_move * 1000)), depth=depth)
        own = self.own_cs * 10 if self.own_cs is not None else self.base_ms
        opponent = self.opponent_cs * 10 if self.opponent_cs is not None else self.base_ms
        if own is None and opponent is None:
            return Limits(depth=depth)
        white, black = (own, opponent) if engine == chess.WHITE else (opponent, own)
        moves_to_go = None
        if self.moves_per_session > 0:
            moves_to_go = self.moves_per_session - (board.fullmove_number - 1) % self.moves_per_session
        return Limits(
            white_clock=None if white is None else max(1, white),
            black_clock=None if black is None else max(1, black),
            white_inc=self.increment_ms, black_inc=self.increment_ms,
            moves_to_go=moves_to_go, depth=depth,
        )


def parse_level(args: list[str]) -> tuple[int, int, int]:
    """`level MPS BASE INC` -> (moves, base ms, increment ms); BASE is `M` or `M:SS`, INC may
    be fractional (`level 0 2:57 2.0`), anything after BASE's number is ignored. ValueError."""
    if len(args) < 3:
        raise ValueError("level needs MPS BASE INC")
    base = _LEVEL_BASE.match(args[1])
    if base is None:
        raise ValueError(f"bad level base {args[1]!r}")
    try:
        moves = int(float(args[0]))
        base_ms = round(float(base.group(1)) * 60_000 + float(base.group(2) or 0) * 1000)
        increment_ms = round(float(args[2]) * 1000)
    except OverflowError:  # `level inf ...`: float() takes it, int() and round() do not
        raise ValueError("level takes finite numbers") from None
    if moves < 0 or base_ms < 0 or increment_ms < 0:
        raise ValueError("level takes no negative numbers")
    return moves, base_ms, increment_ms


# -- the adapter ------------------------------------------------------------------------------


@dataclass
class _RunningSearch:
    """What the adapter knows of the one search it asked for: its kind decides what the
    engine's side of the game does (hold pongs, play the move, post thinking); the session
    owns the kind's change at the ponder hit and says so with `SearchKindChanged`."""

    tag: int
    kind: SearchKind
    board: chess.Board
    lines_per_depth: int
    expected: chess.Move | None = None  # ponder: the reply pondered on


@dataclass
class XBoardOpponent:
    """Who the engine plays, from `name`, `rating`, `computer` and `ics` (sent after `new`):
    passed to the session as the `UCI_Opponent` option, which Level Follows Opponent reads."""

    name: str = ""
    rating: int | None = None
    computer: bool = False
    ics: str = ""

    def uci_opponent(self) -> str:
        """UCI's `UCI_Opponent` text: `title rating computer|human name` (no title in CECP)."""
        if not (self.name or self.rating or self.computer):
            return ""
        rating = str(self.rating) if self.rating else "none"
        return f"none {rating} {'computer' if self.computer else 'human'} {self.name or 'unknown'}"


@dataclass
class XBoardGame:
    """The XBoard game: position with its moves, who the engine plays, and the modes."""

    board: chess.Board = field(default_factory=chess.Board)
    engine: chess.Color | None = chess.BLACK  # None: force mode
    analyzing: bool = False
    post: bool = False
    ponder: bool = False
    multipv: int = 1
    excluded: set[chess.Move] = field(default_factory=set)
    clock: TimeControl = field(default_factory=TimeControl)
    opponent: XBoardOpponent = field(default_factory=XBoardOpponent)

    def root_moves(self) -> list[chess.Move]:
        """The moves a search may play: all legal ones less the excluded."""
        return [move for move in self.board.legal_moves if move not in self.excluded]

    def new_position(self) -> None:
        """The exclusion set resets whenever the position changes."""
        self.excluded.clear()


class XBoardAdapter:
    name = "xboard"

    def __init__(self) -> None:
        self.game = XBoardGame()
        self.search: _RunningSearch | None = None
        self._tags = itertools.count(1)
        self._held_pongs: list[str] = []
        self._pending: list[Info] = []  # one depth's thinking lines, held until the last one
        self._option_names = {
            spec.name.replace(" ", "").lower(): spec for spec in option_table.OPTIONS
            if "xboard" in spec.protocols and spec.name not in _OPTIONS_WITH_COMMANDS
        }
        self._handlers: dict[str, Callable[[list[str], str, float], list[Command]]] = {
            "protover": lambda args, rest, at: [Identify()],
            "new": self._new, "variant": self._variant, "quit": lambda args, rest, at: [Quit()],
            "force": self._force, "go": self._go, "playother": self._playother,
            "level": self._level, "st": self._st, "sd": self._sd, "nps": self._nps,
            "time": self._time, "otim": self._otim, "usermove": self._usermove_command,
            "?": self._move_now, "ping": self._ping, "result": self._result,
            "setboard": self._setboard, "hint": self._hint, "bk": self._bk, "undo": self._undo,
            "remove": self._remove, "hard": self._hard, "easy": self._easy, "post": self._post,
            "nopost": self._nopost, "analyze": self._analyze, "exit": self._exit,
            "memory": self._memory, "cores": self._cores, "option": self._option,
            "exclude": self._exclude, "include": self._include, "egtpath": self._egtpath,
            "name": self._name, "rating": self._rating, "computer": self._computer, "ics": self._ics,
        }

    # -- input ----------------------------------------------------------------------------

    def receive(self, line: str | TooLong, received_at: float) -> list[Command]:
        if isinstance(line, TooLong):
            return [_say(f"Error (line too long): {line.size} bytes")]
        tokens = line.split()
        if not tokens:
            return []
        word, args = tokens[0], tokens[1:]
        rest = line.strip()[len(word):].strip()
        if word in _SILENT:
            return []
        handler = self._handlers.get(word)
        if handler is not None:
            return handler(args, rest, received_at)
        if _CASTLING.get(word.upper()) or _COORDINATE_MOVE.fullmatch(word.lower()):
            return self._usermove(word, received_at)  # a bare move (before `accepted usermove`)
        return [_say(f"Error (unknown command): {word[:100]}")]

    def drain_notes(self) -> list[str]:
        return []

    # -- the game ---------------------------------------------------------------------------

    def _new(self, args: list[str], rest: str, at: float) -> list[Command]:
        commands = self._cancel()
        game = self.game
        game.board = chess.Board()
        game.engine = chess.BLACK
        game.new_position()
        game.clock.depth = None  # `sd` and `nps` last until `new`; the time control stays
        game.clock.node_rate = None
        commands.append(NewGame())
        if game.opponent != XBoardOpponent():  # a new game, a new opponent (if any: after `new`)
            game.opponent = XBoardOpponent()
            commands.append(self._opponent_option())
        if game.analyzing:
            commands += self._start_analysis(at)
        return commands

    # -- the opponent: accepted silently (python-chess aborts a game on any error line) ------

    def _opponent_option(self) -> Command:
        return SetOptions((("UCI_Opponent", self.game.opponent.uci_opponent()),))

    def _name(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.opponent.name = rest
        return [self._opponent_option()]

    def _rating(self, args: list[str], rest: str, at: float) -> list[Command]:
        """`rating ENGINE OPPONENT`: only the opponent's counts (0 or junk: unknown)."""
        rating = _number(args[1:], int)
        self.game.opponent.rating = rating if rating is not None and rating > 0 else None
        return [self._opponent_option()]

    def _computer(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.opponent.computer = True
        return [self._opponent_option()]

    def _ics(self, args: list[str], rest: str, at: float) -> list[Command]:
        """`ics HOST` (`ics -`: not on a server): kept, it changes nothing in the search."""
        self.game.opponent.ics = "" if rest == "-" else rest
        return []

    def _variant(self, args: list[str], rest: str, at: float) -> list[Command]:
        name = args[0] if args else ""
        if name not in ("normal", "fischerandom"):
            return [_say(f"Error (unsupported variant): {name}")]
        self.game.board.chess960 = name == "fischerandom"
        return []

    def _force(self, args: list[str], rest: str, at: float) -> list[Command]:
        if self.game.analyzing:
            return []  # analysis goes on; `exit` ends it
        self.game.engine = None
        return self._cancel()

    def _go(self, args: list[str], rest: str, at: float) -> list[Command]:
        game = self.game
        if self.search is not None and self.search.kind == "game":
            return []  # already thinking on its move
        commands = self._cancel()
        game.analyzing = False
        game.engine = game.board.turn
        return commands + self._think(at)

    def _playother(self, args: list[str], rest: str, at: float) -> list[Command]:
        commands = self._cancel()
        self.game.analyzing = False
        self.game.engine = not self.game.board.turn
        return commands

    def _result(self, args: list[str], rest: str, at: float) -> list[Command]:
        commands = self._cancel()
        self.game.engine = None
        self.game.analyzing = False
        return commands

    def _setboard(self, args: list[str], rest: str, at: float) -> list[Command]:
        commands = self._cancel()
        try:
            board = parse_fen(rest, chess960=self.game.board.chess960)
        except FenError:
            # The FEN is named: PyChess stops analysis with an empty board and hides only
            # the error that quotes it (conformance/transcripts/xboard/pychess_stop_analysis).
            return commands + [_say(f"tellusererror Illegal position: {rest.strip()[:100]}")]
        self.game.board = board
        self.game.new_position()
        if self.game.analyzing:
            commands += self._start_analysis(at)
        return commands

    def _undo(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._take_back(1, "undo", at)

    def _remove(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._take_back(2, "remove", at)

    def _take_back(self, plies: int, command: str, at: float) -> list[Command]:
        if len(self.game.board.move_stack) < plies:
            return [_say(f"Error (command not legal now): {command}")]
        commands = self._cancel()
        for _ in range(plies):
            self.game.board.pop()
        self.game.new_position()
        if self.game.analyzing:
            commands += self._start_analysis(at)
        return commands

    def _usermove_command(self, args: list[str], rest: str, at: float) -> list[Command]:
        if not args:
            return [_say("Error (too few parameters): usermove")]
        return self._usermove(args[0], at)

    def _usermove(self, text: str, at: float) -> list[Command]:
        game = self.game
        search = self.search
        try:
            move = parse_move(game.board, text)
        except ValueError:
            return [_say(f"Illegal move: {text}")]
        if search is not None and search.kind == "game":
            return [_say(f"Illegal move (not your turn): {text}")]
        if search is not None and search.kind == "ponder" and move == search.expected:
            # Ponder hit: the same search goes on, now with this move's clock (the session makes
            # it a game search and says so).
            game.board.push(move)
            game.new_position()
            assert game.engine is not None
            return [PonderHit(received_at=at, limits=game.clock.limits(game.board, game.engine))]
        commands = self._cancel()  # a ponder miss, or a move fed into analysis
        game.board.push(move)
        game.new_position()
        if game.analyzing:
            commands += self._start_analysis(at)
        elif game.engine == game.board.turn:
            commands += self._think(at)
        return commands

    def _move_now(self, args: list[str], rest: str, at: float) -> list[Command]:
        if self.search is not None and self.search.kind == "game":
            return [Stop()]
        return []  # `?` does not apply to pondering or analysis

    # -- clocks and modes -------------------------------------------------------------------

    def _level(self, args: list[str], rest: str, at: float) -> list[Command]:
        try:
            self.game.clock.set_level(*parse_level(args))
        except ValueError:
            return [_say(f"Error (bad parameters): level {rest}")]
        return []

    def _st(self, args: list[str], rest: str, at: float) -> list[Command]:
        seconds = _number(args, float)
        if seconds is None or seconds <= 0:
            return [_say(f"Error (bad parameters): st {rest}")]
        self.game.clock.set_seconds_per_move(seconds)
        return []

    def _sd(self, args: list[str], rest: str, at: float) -> list[Command]:
        depth = _number(args, int)
        if depth is None:
            return [_say(f"Error (bad parameters): sd {rest}")]
        self.game.clock.depth = depth if depth > 0 else None
        return []

    def _nps(self, args: list[str], rest: str, at: float) -> list[Command]:
        rate = _number(args, int)
        if rate is None:
            return [_say(f"Error (bad parameters): nps {rest}")]
        self.game.clock.node_rate = rate if rate > 0 else None  # `nps 0`: back to time
        return []

    def _time(self, args: list[str], rest: str, at: float) -> list[Command]:
        centiseconds = _number(args, int)
        if centiseconds is not None:
            self.game.clock.own_cs = max(1, centiseconds)
        return []

    def _otim(self, args: list[str], rest: str, at: float) -> list[Command]:
        centiseconds = _number(args, int)
        if centiseconds is not None:
            self.game.clock.opponent_cs = max(1, centiseconds)
        return []

    def _hard(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.ponder = True
        return []

    def _easy(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.ponder = False
        if self.search is not None and self.search.kind == "ponder":
            return self._cancel()  # python-chess stops pondering with `easy` + `ping`
        return []

    def _post(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.post = True
        return []

    def _nopost(self, args: list[str], rest: str, at: float) -> list[Command]:
        self.game.post = False
        return []

    def _ping(self, args: list[str], rest: str, at: float) -> list[Command]:
        tag = args[0] if args else ""
        if self.search is not None and self.search.kind == "game":
            # Thinking on its own move: the pong comes after the move (or the cancel).
            self._held_pongs.append(tag)
            return []
        return [IsReady(tag=tag)]

    def _hint(self, args: list[str], rest: str, at: float) -> list[Command]:
        search = self.search
        if search is not None and search.kind == "ponder" and search.expected is not None:
            return [_say(f"Hint: {move_text(self.game.board, search.expected)}")]
        return []

    def _bk(self, args: list[str], rest: str, at: float) -> list[Command]:
        return [BookQuery(self.game.board.copy())]

    def _egtpath(self, args: list[str], rest: str, at: float) -> list[Command]:
        """`egtpath syzygy DIR` sets SyzygyPath (the path may hold spaces); other kinds of
        tables are not ours and are ignored, as the GUI only sends what `egt` lists."""
        kind, _, path = rest.partition(" ")
        if kind.lower() != "syzygy":
            return []
        return [SetOptions((("SyzygyPath", path.strip()),), tag=EGTPATH_TAG)]

    # -- analysis ---------------------------------------------------------------------------

    def _analyze(self, args: list[str], rest: str, at: float) -> list[Command]:
        commands = self._cancel()
        self.game.analyzing = True
        self.game.engine = None
        return commands + self._start_analysis(at)

    def _exit(self, args: list[str], rest: str, at: float) -> list[Command]:
        if not self.game.analyzing:
            return []  # Scid sends `exit` on closing; not an error
        self.game.analyzing = False
        return self._cancel()

    def _exclude(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._edit_root_moves(args, exclude=True, at=at)

    def _include(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._edit_root_moves(args, exclude=False, at=at)

    def _edit_root_moves(self, args: list[str], *, exclude: bool, at: float) -> list[Command]:
        game = self.game
        commands: list[Command] = []
        for text in args:
            if text == "all":
                game.excluded = set(game.board.legal_moves) if exclude else set()
                continue
            try:
                move = parse_move(game.board, text)
            except ValueError:
                commands.append(_say(f"Illegal move: {text}"))
                continue
            if exclude:
                game.excluded.add(move)
            else:
                game.excluded.discard(move)
        if game.analyzing:
            commands += self._cancel() + self._start_analysis(at)
        return commands

    # -- options ------------------------------------------------------------------------------

    def _memory(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._clamped_option("Hash", args, "memory")

    def _cores(self, args: list[str], rest: str, at: float) -> list[Command]:
        return self._clamped_option("Threads", args, "cores")

    def _clamped_option(self, name: str, args: list[str], command: str) -> list[Command]:
        value = _number(args, int)
        if value is None:
            return [_say(f"Error (bad parameters): {command} {' '.join(args)}")]
        spec = option_table.find(name)
        assert spec.min is not None and spec.max is not None
        return [SetOptions(((spec.name, max(spec.min, min(spec.max, value))),))]

    def _option(self, args: list[str], rest: str, at: float) -> list[Command]:
        name, has_value, raw = rest.partition("=")
        spec = self._option_names.get(name.replace(" ", "").lower())
        if spec is None:
            return [_say(f"Error (unknown option): {name.strip()}")]
        value: Any = raw.strip() if has_value else None
        if spec.type == "check" and value in ("0", "1"):
            value = "true" if value == "1" else "false"
        commands: list[Command] = [SetOptions(((spec.name, value),))]
        if spec.name == "MultiPV":
            try:
                self.game.multipv = spec.parse_value(value)
            except option_table.OptionValueError:
                return commands  # the session says what is wrong
            if self.game.analyzing:
                # XBoard changes MultiPV during a running analysis: restart it.
                commands = self._cancel() + commands + self._start_analysis(at)
        return commands

    # -- searches -----------------------------------------------------------------------------

    def _think(self, at: float) -> list[Command]:
        """Search the engine's move from the game position (not in a finished game)."""
        game = self.game
        if not any(game.board.generate_legal_moves()):
            result = game_result(game.board)
            return [_say(result)] if result else []
        assert game.engine is not None
        return [self._begin("game", game.board, game.clock.limits(game.board, game.engine), at)]

    def _start_analysis(self, at: float) -> list[Command]:
        game = self.game
        moves = game.root_moves()
        if not moves:
            return []  # mate, stalemate or every move excluded: nothing to search until a change
        search_moves = tuple(moves) if game.excluded else ()
        return [self._begin("analysis", game.board, Limits(infinite=True, search_moves=search_moves), at)]

    def _begin(self, kind: SearchKind, board: chess.Board, limits: Limits, at: float | None,
               expected: chess.Move | None = None) -> Go:
        game = self.game
        if kind != "ponder" and game.excluded:
            limits = limits.replace(search_moves=tuple(game.root_moves()))
        root_count = len(limits.search_moves) or board.legal_moves.count()
        tag = next(self._tags)
        self.search = _RunningSearch(tag, kind, board.copy(), min(game.multipv, root_count), expected)
        self._pending.clear()
        return Go(limits, board=board.copy(), ponder=kind == "ponder", multipv=game.multipv,
                  received_at=at, tag=tag)

    def _cancel(self) -> list[Command]:
        """End the search without a move; pongs held for it are answered after it."""
        if self.search is None:
            return []
        self.search = None
        self._pending.clear()
        commands: list[Command] = [Cancel()]
        commands += [IsReady(tag=tag) for tag in self._held_pongs]
        self._held_pongs.clear()
        return commands

    # -- output -------------------------------------------------------------------------------

    def on_event(self, event: Event | AdapterEvent) -> tuple[list[str], list[Command]]:
        match event:
            case SearchKindChanged(kind=kind, search_tag=tag):
                if self.search is not None and self.search.tag == tag:
                    self.search.kind = kind
                return [], []
            case BestMove():
                return self._best_move(event)
            case Info():
                return self._info(event), []
            case Identity():
                return features(event), []
            case Ready(tag=tag):
                return [f"pong {tag}".rstrip()], []
            case XBoardLines(lines=lines):
                return list(lines), []
            case OptionError(message=message, tag=tag) if tag == EGTPATH_TAG:
                # XBoard sends its configured egtpath at every start, whether or not the
                # folder exists (its default is /EGT/Syzygy): a note in its debug log, no popup.
                return [f"# {' '.join(message.split())}"], []
            case OptionError(message=message):
                return [f"tellusererror {' '.join(message.split())}"], []
            case Message(text=text, quiet=True):
                return [f"# {' '.join(text.split())}"], []
            case Message(text=text):
                return [f"telluser {' '.join(text.split())}"], []
            case BookEntries(moves=moves, board=board):
                return book_lines(moves, board), []
        return [], []

    def _info(self, event: Info) -> list[str]:
        search = self.search
        if (search is None or event.search_tag != search.tag or search.kind == "ponder"
                or not self.game.post):
            return []  # a cancelled search, or pondering (python-chess would misread its lines)
        lines: list[str] = []
        if self._pending and self._pending[0].info.depth != event.info.depth:
            lines += self._flush()
        self._pending.append(event)
        if event.info.multipv >= search.lines_per_depth:
            lines += self._flush()
        return lines

    def _flush(self) -> list[str]:
        """One depth's MultiPV lines, best LAST: XBoard keeps the last line it reads as the
        engine's score and PV (saved game, evaluation graph, adjudication)."""
        pending = sorted(self._pending, key=lambda info: info.info.multipv, reverse=True)
        self._pending.clear()
        if not self.game.post:
            return []
        return [thinking_line(info.info, info.board) for info in pending]

    def _best_move(self, event: BestMove) -> tuple[list[str], list[Command]]:
        search = self.search
        if search is None or event.search_tag != search.tag:
            return [], []
        lines = self._flush()
        self.search = None
        followups: list[Command] = []
        game = self.game
        move = event.result.best_move
        if search.kind == "game" and game.board.fen() == search.board.fen():
            if move is None:
                result = game_result(game.board)
                lines += [result] if result else []
            else:
                # The move goes into the game BEFORE `move` is written: the GUI may answer at once.
                lines.append(f"move {move_text(game.board, move)}")
                game.board.push(move)
                game.new_position()
                result = game_result(game.board)
                if result is not None:
                    lines.append(result)
                elif game.ponder and game.engine is not None:
                    lines, followups = self._ponder(event, lines)
        lines += [f"pong {tag}".rstrip() for tag in self._held_pongs]
        self._held_pongs.clear()
        return lines, followups

    def _ponder(self, event: BestMove, lines: list[str]) -> tuple[list[str], list[Command]]:
        """After its move, in `hard` mode: announce the expected reply and search it with the
        next move's limits less the clock."""
        game = self.game
        expected = event.result.ponder_move
        if expected is None or not game.board.is_legal(expected):
            return lines, []
        board = game.board.copy()
        board.push(expected)
        if not any(board.generate_legal_moves()):
            return lines, []
        assert game.engine is not None
        lines.append(f"Hint: {move_text(game.board, expected)}")
        go = self._begin("ponder", board, game.clock.limits(board, game.engine), None, expected)
        return lines, [go]


def features(identity: Identity) -> list[str]:
    """The `protover 2` answer: one burst ending with `done=1` (XBoard waits 2 s, python-chess
    too). Only what works is claimed: Syzygy tables through `egtpath`."""
    lines = [
        "feature ping=1 setboard=1 playother=1 san=0 usermove=1 time=1 draw=0 sigint=0 sigterm=1"
        " reuse=1 analyze=1 colors=0 memory=1 smp=1 nps=1 exclude=1 egt=\"syzygy\""
        f' variants="normal,fischerandom" myname="{identity.name} {identity.version}"',
    ]
    lines += [f'feature option="{option_feature(spec)}"' for spec in identity.options
              if "xboard" in spec.protocols and spec.name not in _OPTIONS_WITH_COMMANDS]
    lines.append("feature done=1")
    return lines


def book_lines(moves: tuple[BookMove, ...], board: chess.Board) -> list[str]:
    """The `bk` answer: one indented line per book move with its share of the weight, then
    an empty line."""
    total = sum(entry.weight for entry in moves)
    if not total:
        return ["\tno book moves", ""]
    return [f"\t{move_text(board, entry.move)} {entry.weight * 100 // total}% (weight {entry.weight})"
            for entry in moves] + [""]


def option_feature(spec: OptionSpec) -> str:
    """An `option=` definition; the name is the UCI name without spaces, because python-chess
    takes the first word as the name."""
    name = spec.name.replace(" ", "")
    match spec.type:
        case "spin":
            return f"{name} -spin {spec.default} {spec.min} {spec.max}"
        case "check":
            return f"{name} -check {int(bool(spec.default))}"
        case "combo":
            return f"{name} -combo " + " /// ".join(
                ("*" if choice == spec.default else "") + choice for choice in spec.choices)
        case "string":
            return f"{name} -string {spec.default or ''}"
    return f"{name} -button"


def _number(args: list[str], kind: type[int] | type[float]) -> Any:
    """The first argument as a number of `kind` (`int` accepts `10.0`), or None."""
    if not args:
        return None
    try:
        value = float(args[0])
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return int(value) if kind is int else value
