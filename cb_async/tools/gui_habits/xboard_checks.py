"""The XBoard (CECP v2) checks, grouped by the GUI habit each stands in for.

Every check starts its own engine and, after the handshake, answers each feature with
`accepted` as XBoard and cutechess do (one check does it python-chess's way, with none). Moves
are judged by python-chess's parser, which is what lichess-bot uses; nothing asserts which move
an engine plays.
"""

from __future__ import annotations

import re

import chess

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.driver import CheckFailed, Line, Skipped
from cb_async.tools.gui_habits.registry import check, group
from cb_async.tools.gui_habits.runner import Context
from cb_async.tools.gui_habits.xboard import MOVE, THINKING, XBoardEngine, errors, parse_features, start

#: A made-up middlegame, in no opening book: a search in it does not end by itself at once.
MIDDLEGAME = "r3r1k1/1pq2ppp/p1nbbn2/3p4/3P4/P1NBBN1P/1PQ2PP1/R3R1K1 w - - 4 16"
#: Seconds per move for the checks that just need a move (`st`), and the bound on it.
ST = 1


def move_bound() -> float:
    """How long a move with `st ST` may take to arrive (the clock, the slack, a client's timeout)."""
    return ST + bounds.SLACK + bounds.ANSWER


def _first(board: chess.Board, avoid: str | None = None) -> chess.Move:
    """A reply chosen by the check itself: the first legal move in UCI order (not `avoid`)."""
    moves = sorted(board.legal_moves, key=lambda move: move.uci())
    return next((move for move in moves if move.uci() != avoid), moves[0])


def _no_errors(lines: list[Line], what: str) -> None:
    found = errors(lines)
    if found:
        raise CheckFailed(f"{found[0]!r} {what} (python-chess raises on it; lichess-bot abandons the game)")


def _think(engine: XBoardEngine, board: chess.Board, what: str = "move") -> chess.Board:
    """`go` in force mode; the engine's move must be legal. Returns the board after it."""
    engine.send(f"st {ST}", "go")
    played = engine.expect_move(board, move_bound(), what)
    after = board.copy()
    after.push(played.move)
    return after


# -- start-up --------------------------------------------------------------------------------

STARTUP = group("xboard", "startup", "The handshake", """
    XBoard and python-chess send `xboard` and `protover 2` and wait 2 s for the features (an
    hour after `done=0`); python-chess refuses an engine without `ping=1` and `setboard=1`
    (lichess-bot#408) and with `san=1` or `reuse=0`, takes `myname` as the engine's name, and
    never answers `accepted` (except memory, smp, egt). XBoard reads a string feature only in
    double quotes. GNU Chess 6.2.7 sent no `done=1` and python-chess timed out
    (python-chess#572).""")


@check(STARTUP, "features-done", "XBoard's 2 s feature wait; python-chess#572")
def features_done(context: Context) -> None:
    """answers `protover 2` with features ending in `done=1` within 2 s (10 s after `done=0`)"""
    engine = XBoardEngine(context.start()).handshake()
    if engine.features.done != "1":
        raise CheckFailed("no `feature done=1` in time" if engine.features.lines else "no feature line at all")


@check(STARTUP, "required-features", "python-chess's required features (ping, setboard); lichess-bot#408")
def required_features(context: Context) -> None:
    """declares `ping=1`, `setboard=1` and a `myname`, and neither `san=1` nor `reuse=0`"""
    features = XBoardEngine(context.start()).handshake().features
    for name in ("ping", "setboard"):
        if not features.flag(name):
            raise CheckFailed(f"no `{name}=1`: python-chess refuses the engine")
    if "myname" not in features.values:
        raise CheckFailed("no `myname`: python-chess and lichess-bot have no name for the engine")
    if features.flag("san"):
        raise CheckFailed("`san=1`: python-chess rejects it")
    if features.values.get("reuse") == "0":
        raise CheckFailed("`reuse=0`: python-chess rejects it")


BOOLEAN_FEATURES = ("ping", "setboard", "playother", "san", "usermove", "time", "draw", "sigint", "sigterm",
                    "reuse", "analyze", "colors", "ics", "name", "pause", "nps", "debug", "memory", "smp",
                    "exclude", "setscore", "highlight")
STRING_FEATURES = ("myname", "variants", "egt", "option")


@check(STARTUP, "feature-syntax", "CECP 9 (feature values); XBoard's StringFeature needs the quote")
def feature_syntax(context: Context) -> None:
    """writes features XBoard can parse: NAME=VALUE, strings in double quotes, booleans 0 or 1"""
    features = XBoardEngine(context.start()).handshake().features
    for line in features.lines:
        words = re.findall(r'(\w+)=("[^"]*"|\S*)', line.text)
        for name, value in words:
            if name in STRING_FEATURES and not value.startswith('"'):
                raise CheckFailed(f"{line.text!r}: {name}={value} is not in double quotes, XBoard ignores it")
            if name in BOOLEAN_FEATURES and value not in ("0", "1"):
                raise CheckFailed(f"{line.text!r}: {name}={value} is not 0 or 1")
        if len(parse_features(line.text)) != len(words):
            raise CheckFailed(f"{line.text!r}: not a list of NAME=VALUE")


@check(STARTUP, "no-accepted-needed", "python-chess never sends `accepted`; lrozenblyum/chess#207")
def no_accepted_needed(context: Context) -> None:
    """plays without any `accepted` reply, as python-chess does"""
    engine = XBoardEngine(context.start()).handshake(accept=False)
    board = engine.new_game()
    engine.send(engine.move_command(board, chess.Move.from_uci("e2e4")))
    board.push_uci("e2e4")
    _think(engine, board)
    engine.ping()


# -- input -----------------------------------------------------------------------------------

INPUT = group("xboard", "input", "Line endings and unknown commands", """
    Windows GUIs and Wine end lines with CR LF. CECP asks for `Error (unknown command): CMD` for
    what the engine does not know, and nothing more: GUIs send commands an engine may not know
    (Scid's `ponder off`, XBoard's probes such as `nps`), and an engine that exits on them is
    lost (igel#185).""")


@check(INPUT, "crlf", "Windows GUIs and Wine; igel#284")
def crlf(context: Context) -> None:
    """reads commands that end in CR LF"""
    driver = context.start()
    engine = XBoardEngine(driver).handshake(ending="\r\n")
    usermove = "usermove " if engine.features.flag("usermove") else ""
    driver.send("new", "force", f"{usermove}e2e4", f"st {ST}", "go", ending="\r\n")
    board = chess.Board()
    board.push_uci("e2e4")
    engine.expect_move(board, move_bound())
    driver.send("ping 7", ending="\r\n")
    driver.read_until("pong 7", bounds.ANSWER, "pong 7")


@check(INPUT, "unknown-command", "CECP (Error (unknown command)); Scid's `ponder off`; igel#185")
def unknown_command(context: Context) -> None:
    """carries on after an unknown command"""
    engine = start(context.start())
    engine.send("frobnicate now", "ponder off")
    engine.ping()
    board = engine.new_game()
    _think(engine, board)


# -- a GUI's housekeeping --------------------------------------------------------------------

HOUSEKEEPING = group("xboard", "housekeeping", "A GUI's housekeeping", """
    XBoard initialises every game with `new`, `random` (its default init string), `level`,
    `post`, `hard`, `easy`, `ping`, after `memory`/`cores` for engines that asked; python-chess
    (lichess-bot) sends `name`, `rating`, `computer`, `force`, `setboard`, `st 10.0`, `level 0
    2:57 2.0`, `time`, `otim`, `post`, `easy` and `result`. python-chess raises on any `Error`
    or `Illegal move` line during a game, and lichess-bot then abandons it.""")


@check(HOUSEKEEPING, "xboard-game-init", "XBoard 4.9's InitChessProgram (protocols.md 1.11)")
def xboard_game_init(context: Context) -> None:
    """takes XBoard 4.9's game initialisation without an `Error` line"""
    engine = start(context.start())
    if engine.features.flag("memory"):
        engine.send("memory 16")
    if engine.features.flag("smp"):
        engine.send("cores 1")
    engine.send("new", "random", "level 40 5 0", "post", "hard", "easy")
    _no_errors(engine.ping(), "in XBoard's game initialisation")


@check(HOUSEKEEPING, "python-chess-commands", "python-chess XBoardProtocol (protocols.md 3.2); lichess-bot")
def python_chess_commands(context: Context) -> None:
    """takes python-chess's game commands without an `Error` or `Illegal move` line"""
    engine = start(context.start())
    board = chess.Board(MIDDLEGAME)
    engine.send("new")
    if engine.features.values.get("name") != "0":
        engine.send("name BOT somebot")
    engine.send("rating 2100 2000", "computer", "force", f"setboard {MIDDLEGAME}",
                "level 0 0:05 0.1", "time 500", "otim 500", "post", "easy", "go")
    played = engine.expect_move(board, 5 + bounds.SLACK + bounds.ANSWER)
    lines = played.before + engine.ping()
    engine.send("force", "result 1/2-1/2 {Draw agreed}")
    _no_errors(lines + engine.ping(), "in python-chess's game")


# -- playing ---------------------------------------------------------------------------------

PLAY = group("xboard", "play", "Playing moves", """
    In XBoard's two-machine mode (and cutechess's) the opponent's move replaces `go`; a GUI book
    feeds the engine its own moves in force mode; the GUI answers the instant `move` arrives, so
    an engine must update its board before it writes `move` (KillerQueen in cutechess#405,
    RubiChess#99, arasan#48); an illegal move must get `Illegal move: MOVE` and change nothing,
    and the engine's own `Illegal move` forfeits it in cutechess (cutechess#109).""")


@check(PLAY, "engine-plays-black", "XBoard's engine-as-Black (protocols.md 1.11); cutechess")
def engine_plays_black(context: Context) -> None:
    """after `new`, the opponent's move makes it think and answer with a legal `move`, without `go`"""
    engine = start(context.start())
    engine.send("new", f"st {ST}", "time 600", "otim 600")
    board = chess.Board()
    engine.send(engine.move_command(board, chess.Move.from_uci("e2e4")))
    board.push_uci("e2e4")
    engine.expect_move(board, move_bound())
    engine.ping()


@check(PLAY, "engine-plays-on-go", "XBoard's MachineWhiteEvent; python-chess's play()")
def engine_plays_on_go(context: Context) -> None:
    """on `go` in force mode, it plays a legal `move` for the side to move"""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    _think(engine, board)
    engine.ping()


@check(PLAY, "move-race", "cutechess#405 (KillerQueen), RubiChess#99, arasan#48, lrozenblyum/chess#237")
def move_race(context: Context) -> None:
    """takes the opponent's reply sent the instant its `move` arrives, and answers it
    Three times: the reply goes out as soon as `move` is read; no `Illegal move` may come, and
    the engine's next move must be legal after the reply."""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    engine.send(f"st {ST}", "go")
    for _ in range(3):
        played = engine.expect_move(board, move_bound())
        board.push(played.move)
        reply = _first(board)
        engine.send(engine.move_command(board, reply))
        board.push(reply)
    engine.expect_move(board, move_bound())
    engine.ping()


@check(PLAY, "book-moves-in-force", "XBoard's SendMoveToBookUser (GUI book)")
def book_moves_in_force(context: Context) -> None:
    """takes moves for both sides in force mode, its own included (a GUI book)"""
    engine = start(context.start())
    board = engine.new_game()
    for text in ("e2e4", "e7e5", "g1f3", "b8c6"):
        move = chess.Move.from_uci(text)
        engine.send(engine.move_command(board, move))
        board.push(move)
    lines = engine.ping()
    found = [line.text for line in lines if line.text.startswith("Illegal move")]
    if found:
        raise CheckFailed(f"{found[0]!r} for a book move in force mode")
    _think(engine, board)


@check(PLAY, "illegal-move", "CECP (Illegal move: MOVE); XBoard retracts it; python-chess re-syncs")
def illegal_move(context: Context) -> None:
    """answers an illegal move with `Illegal move: MOVE` and keeps its position"""
    engine = start(context.start())
    board = engine.new_game()
    usermove = "usermove " if engine.features.flag("usermove") else ""
    engine.send(f"{usermove}e2e5")
    lines = engine.ping()
    if not any(re.fullmatch(r"Illegal move(\s*\([^()]*\))?\s*:\s*e2e5\s*", line.text) for line in lines):
        raise CheckFailed("no `Illegal move: e2e5` line before the pong")
    engine.send(f"{usermove}e2e4")
    board.push_uci("e2e4")
    _think(engine, board)


# -- commands while thinking ------------------------------------------------------------------

THINKING_GROUP = group("xboard", "thinking", "Commands while the engine thinks", """
    XBoard and cutechess end a game with `result` and `force` whatever the engine is doing, and
    `new` resets it; each must stop the search with no `move` (XBoard's ping guard drops a stale
    `move` only until the `pong`). `?` is ignored when the engine is not thinking. The engine
    thinks on a 10-minute clock when the command comes.""")


def _thinking_long(context: Context) -> tuple[XBoardEngine, chess.Board]:
    """The engine thinking on a 10-minute clock (a search with no definite limit of its own)."""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    engine.send("level 0 10 0", "time 60000", "otim 60000", "go")
    engine.quiet(0.2, "on a 10-minute clock after 0.2 s")
    return engine, board


def _stopped_without_move(engine: XBoardEngine, command: str) -> None:
    engine.send(command)
    engine.ping(what=f"pong after `{command}`", forbid=MOVE.pattern)
    engine.send("?")
    engine.ping(what="pong after `?`", forbid=MOVE.pattern)
    engine.quiet(bounds.WATCH, f"after `{command}` stopped the search")


@check(THINKING_GROUP, "force-stops", "CECP `force`; cutechess and XBoard at a game's end")
def force_stops(context: Context) -> None:
    """stops thinking on `force`, with no `move`"""
    engine, _ = _thinking_long(context)
    _stopped_without_move(engine, "force")


@check(THINKING_GROUP, "result-stops", "CECP `result`; XBoard's GameEnds")
def result_stops(context: Context) -> None:
    """stops thinking on `result`, with no `move`"""
    engine, _ = _thinking_long(context)
    _stopped_without_move(engine, "result 0-1 {White resigns}")


@check(THINKING_GROUP, "new-stops", "CECP `new`; XBoard's Reset")
def new_stops(context: Context) -> None:
    """stops thinking on `new`, with no `move`, and starts a new game"""
    engine, _ = _thinking_long(context)
    _stopped_without_move(engine, "new")
    engine.send("force")
    _think(engine, chess.Board())


# -- pondering -------------------------------------------------------------------------------

PONDER = group("xboard", "ponder", "Pondering", """
    `hard` turns pondering on: after its move the engine ponders on a reply it guesses
    (announced by `Hint:`); `ping` is answered at once while it ponders; python-chess cancels a
    ponder with `easy` and `ping`; the reply that comes, expected or not, must get a legal move
    for the position it makes. Skipped when the engine answers `hard` with an error.""")


def _pondering(context: Context) -> tuple[XBoardEngine, chess.Board, str | None]:
    """The engine Black with `hard`, just after its first move: (engine, board, hint or None)."""
    engine = start(context.start())
    board = engine.new_game()
    engine.send("hard")
    if errors(engine.ping()):
        raise Skipped("the engine answers `hard` with an error: it does not ponder")
    engine.send(engine.move_command(board, chess.Move.from_uci("e2e4")))
    board.push_uci("e2e4")
    engine.send(f"st {ST}", "time 600", "otim 600", "go")
    played = engine.expect_move(board, move_bound())
    board.push(played.move)
    hint = None
    for line in engine.quiet(0.2, "right after its move, while it ponders"):
        if line.text.startswith("Hint:"):
            hint = line.text.split(":", 1)[1].strip()
    return engine, board, hint


@check(PONDER, "pong-while-pondering", "CECP `ping` (answer at once while pondering); python-chess")
def pong_while_pondering(context: Context) -> None:
    """answers `ping` at once while it ponders, with no `move`"""
    engine, _, _ = _pondering(context)
    engine.ping(what="pong while pondering", forbid=MOVE.pattern)
    engine.quiet(bounds.WATCH, "while pondering")


@check(PONDER, "easy-stops-pondering", "python-chess cancels a ponder with `easy` + `ping`")
def easy_stops_pondering(context: Context) -> None:
    """stops pondering on `easy`, with no `move`"""
    engine, _, _ = _pondering(context)
    engine.send("easy")
    engine.ping(what="pong after `easy`", forbid=MOVE.pattern)
    engine.quiet(bounds.WATCH, "after `easy` stopped the ponder")


@check(PONDER, "ponder-miss", "CECP pondering (a miss starts a new search)")
def ponder_miss(context: Context) -> None:
    """answers a reply other than the one it pondered on with a legal `move`"""
    engine, board, hint = _pondering(context)
    reply = _first(board, avoid=_hint_uci(board, hint))
    engine.send("time 590", "otim 590", engine.move_command(board, reply))
    board.push(reply)
    engine.expect_move(board, move_bound())


@check(PONDER, "ponder-hit", "CECP pondering (a hit goes on with the same search)")
def ponder_hit(context: Context) -> None:
    """answers the reply it pondered on (its `Hint:`) with a legal `move`"""
    engine, board, hint = _pondering(context)
    hinted = _hint_uci(board, hint)
    if hinted is None:
        raise Skipped("the engine wrote no `Hint:` after its move: the ponder move is unknown")
    reply = chess.Move.from_uci(hinted)
    engine.send("time 590", "otim 590", engine.move_command(board, reply))
    board.push(reply)
    engine.expect_move(board, move_bound())


def _hint_uci(board: chess.Board, hint: str | None) -> str | None:
    if hint is None:
        return None
    try:
        return board.parse_san(hint).uci()
    except ValueError:
        raise CheckFailed(f"`Hint: {hint}` is not a legal move after the engine's move") from None


# -- analysis --------------------------------------------------------------------------------

ANALYZE = group("xboard", "analyze", "Analysis", """
    XBoard analyses with `post`, `analyze`, then feeds moves and `undo` straight into the
    running analysis, and leaves it with `exit`; python-chess stops it with `.`, `exit` and
    `ping`. An analysing engine never moves. Skipped with `analyze=0`.""")


@check(ANALYZE, "never-moves", "CECP analyze mode; python-chess's analysis stop (`.`, `exit`, `ping`)")
def analyze_never_moves(context: Context) -> None:
    """analyses after `analyze` with thinking output and no `move`, and leaves on `exit`"""
    engine = start(context.start())
    engine.require("analyze", "no analysis mode")
    engine.new_game(MIDDLEGAME)
    engine.send("post", "analyze")
    engine.driver.read_until(THINKING.pattern, bounds.ANSWER, "a thinking line in analyze mode", forbid=MOVE.pattern)
    engine.quiet(bounds.WATCH, "in analyze mode")
    engine.send(".", "exit")
    engine.ping(what="pong after `exit`", forbid=MOVE.pattern)
    engine.quiet(bounds.WATCH, "after `exit`")


@check(ANALYZE, "follows-moves-and-undo", "XBoard feeds moves and `undo` into a running analysis")
def analyze_follows_moves(context: Context) -> None:
    """takes moves and `undo` during analysis: its position follows them"""
    engine = start(context.start())
    engine.require("analyze", "no analysis mode")
    board = engine.new_game()
    engine.send("post", "analyze")
    for text in ("e2e4", "e7e5"):
        move = chess.Move.from_uci(text)
        engine.send(engine.move_command(board, move))
        board.push(move)
    engine.send("undo")
    board.pop()
    engine.send("exit")
    engine.ping(what="pong after `exit`", forbid=MOVE.pattern)
    _think(engine, board, "move for Black after 1. e4 (the analysis took e4, e5 and undo)")


# -- time ------------------------------------------------------------------------------------

TIME = group("xboard", "time", "Clocks in three units", """
    `time`/`otim` are centiseconds, `level`'s base is minutes or M:SS and its increment may be
    fractional (XBoard writes `%g`, python-chess `2.0`), `st` may be a float (python-chess's
    `st 10.0`). Little Wing divided by zero on `level 0 ...` (littlewing#3); wrong units lost
    games on time (lichess-bot PR #189).""")


@check(TIME, "level-and-st-forms", "python-chess `st 10.0`, `level 0 2:57 2.0`; XBoard's `%g` increment")
def level_and_st_forms(context: Context) -> None:
    """takes `st` in fractional seconds and `level` with an M:SS base and a fractional increment"""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    engine.send("st 0.5", "go")
    played = engine.expect_move(board, 0.5 + bounds.SLACK + bounds.ANSWER)
    board = engine.new_game(MIDDLEGAME)
    engine.send("level 0 0:05 0.5", "time 500", "otim 500", "go")
    played2 = engine.expect_move(board, 5 + bounds.SLACK + bounds.ANSWER)
    _no_errors(played.before + played2.before + engine.ping(), "for `st 0.5` or `level 0 0:05 0.5`")


@check(TIME, "tiny-clock", "XBoard never sends less than 1; cutechess forfeits on time")
def tiny_clock(context: Context) -> None:
    """moves within 1 s when `time` gives it 5 centiseconds"""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    engine.send("level 0 1 0", "time 5", "otim 6000")
    sent = engine.send("go")
    played = engine.expect_move(board, 0.05 + bounds.SLACK + bounds.ANSWER)
    took = played.line.at - sent
    if took > 0.05 + bounds.SLACK:
        raise CheckFailed(f"move after {took:.2f} s with 5 centiseconds on its clock")


# -- Chess960 --------------------------------------------------------------------------------

CHESS960 = group("xboard", "chess960", "Chess960", """
    In `variant fischerandom` XBoard (with its default `oocastle`) and cutechess send castling as
    `O-O`/`O-O-O`, and python-chess reads the engine's castling as O-O, 0-0 or king takes rook;
    the king's destination is ambiguous (pychess#362; Fairy-Stockfish#524). Skipped unless
    `variants` lists fischerandom.""")


@check(CHESS960, "castling", "XBoard's SendMoveToProgram (O-O with oocastle); cutechess; pychess#362")
def chess960_castling(context: Context) -> None:
    """in `variant fischerandom`, takes castling as O-O and writes it as O-O/O-O-O or king takes rook
    The engine then plays a position whose only mate in one is O-O-O; whatever it plays must be
    legal as python-chess reads it."""
    engine = start(context.start())
    engine.require_variant("fischerandom")
    board = engine.new_game(chess.Board("k7/8/8/8/8/8/8/4RKR1 w GE - 0 1", chess960=True).fen(shredder=True),
                            "fischerandom")
    castle = next(move for move in board.legal_moves if board.is_kingside_castling(move))
    engine.send(engine.move_command(board, castle))
    board.push(castle)
    found = errors(engine.ping())
    if found:
        raise CheckFailed(f"{found[0]!r} for O-O in fischerandom (XBoard and cutechess send O-O)")
    _think(engine, board, "move for Black after O-O")
    board = engine.new_game(chess.Board("3k4/2p1p3/1N3N2/8/8/8/P7/R1K5 w A - 0 1", chess960=True).fen(shredder=True),
                            "fischerandom")
    engine.send("sd 3")
    _think(engine, board)


# -- leaving ---------------------------------------------------------------------------------

END = group("xboard", "end", "Quitting", """
    cutechess kills an engine 5 s after `quit`; python-chess and asyncio kill a child that has
    not exited when they close it; a GUI that dies closes the engine's input, which is `quit`.""")


@check(END, "quit-while-thinking", "cutechess's 5 s quit timeout")
def quit_while_thinking(context: Context) -> None:
    """exits within 5 s of `quit` while thinking"""
    engine, _ = _thinking_long(context)
    engine.send("quit")
    if engine.driver.wait_exit(bounds.EXIT) is None:
        raise CheckFailed(f"still running {bounds.EXIT:g} s after quit")


@check(END, "end-of-input", "protocols.md 5.1: end of input is quit")
def end_of_input(context: Context) -> None:
    """exits with status 0 within 5 s at end of input, even while thinking"""
    engine, _ = _thinking_long(context)
    engine.driver.close_input()
    code = engine.driver.wait_exit(bounds.EXIT)
    if code is None:
        raise CheckFailed(f"still running {bounds.EXIT:g} s after the end of its input")
    if code != 0:
        raise CheckFailed(f"exit status {code} at end of input, expected 0")


# -- output ----------------------------------------------------------------------------------

OUTPUT = group("xboard", "output", "Thinking output", """
    With `post`, thinking lines are `PLY SCORE TIME NODES PV`; python-chess takes any line that
    starts with a digit and has four words as one, and XBoard reads an old-style `NUMBER ...
    MOVE` line as a move, so no other line may start with a digit. lichess-bot needs a score on
    every search for its draw and resign logic.""")


@check(OUTPUT, "thinking-lines", "CECP 10 (thinking output); python-chess `_parse_xboard_post`")
def thinking_lines(context: Context) -> None:
    """with `post`, writes thinking lines as PLY SCORE TIME NODES PV, and no other line starts with a digit"""
    engine = start(context.start())
    board = engine.new_game(MIDDLEGAME)
    engine.send("post")
    engine.send(f"st {ST}", "go")
    played = engine.expect_move(board, move_bound())
    thinking = 0
    for line in played.before:
        if re.match(r"\s*\d", line.text):
            if not THINKING.fullmatch(line.text):
                raise CheckFailed(f"{line.text!r} starts with a digit but is not PLY SCORE TIME NODES PV")
            thinking += 1
    if not thinking:
        raise CheckFailed("no thinking line before the move, with `post`")

