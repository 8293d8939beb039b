"""The UCI checks, grouped by the GUI habit each stands in for.

Every check starts its own engine. Bounds come from `bounds` (the clients' own timeouts). A
check asserts form and legality only: never a score value, never which move an engine chooses
(where a check needs a particular move it asks for it with `searchmoves`, and an engine that
ignores that is told so by the `searchmoves` check and skipped by the others).
"""

from __future__ import annotations

import re

import chess

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.driver import CheckFailed, Skipped
from cb_async.tools.gui_habits.registry import check, group
from cb_async.tools.gui_habits.runner import Context
from cb_async.tools.gui_habits.uci import OPTION_TYPES, UciEngine, info_problems, parse_option, start

#: A quiet middlegame out of every opening book (the Italian; White may castle).
ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
#: A made-up middlegame (in no opening book) with many moves: a search in it takes a while.
MIDDLEGAME = "r3r1k1/1pq2ppp/p1nbbn2/3p4/3P4/P1NBBN1P/1PQ2PP1/R3R1K1 w - - 4 16"


def _board_after(*moves: str, fen: str = chess.STARTING_FEN) -> chess.Board:
    board = chess.Board(fen)
    for move in moves:
        board.push_uci(move)
    return board


def _requested(engine: UciEngine, board: chess.Board, go: str, wanted: str) -> None:
    """Search with `searchmoves`; a move outside them skips the check (see `searchmoves`)."""
    result = engine.search(board, go, bounds.ANSWER)
    if result.text != wanted:
        raise Skipped(f"asked for searchmoves {wanted}, got {result.text}: the engine ignores searchmoves "
                      "(see uci.game.searchmoves)")


# -- start-up --------------------------------------------------------------------------------

STARTUP = group("uci", "startup", "Starting the engine", """
    A GUI starts the engine, sends `uci` and waits for `uciok`: python-chess (lichess-bot) for
    10 s (lichess-bot allows 60 s), cutechess 35 s, Scid's option dialog kills it after 5 s.
    Aquarium froze when `info` lines came before `uciok` (Stockfish#5430); a missing option
    `type` broke python-chess (weiss PR #712); Arena's autodetect sends `xboard` before `uci`, and
    Igel answered it with "Unknown command. Good bye." (igel#185).""")


@check(STARTUP, "handshake", "UCI spec (`uci`: id name, id author, options, uciok); python-chess's 10 s")
def answers_uci(context: Context) -> None:
    """answers `uci` with `id name`, `id author` and `uciok` within 10 s
    Reads every line up to `uciok`; both `id` lines must be among them."""
    engine = UciEngine(context.start()).handshake()
    texts = [line.text for line in engine.handshake_lines]
    for word in ("name", "author"):
        if not any(re.fullmatch(rf"id {word} \S.*", text) for text in texts):
            raise CheckFailed(f"no `id {word} ...` line before uciok")


@check(STARTUP, "nothing-before-uciok", "Aquarium froze on `info string` before `uciok` (Stockfish#5430)")
def nothing_before_uciok(context: Context) -> None:
    """writes no `info`, `bestmove` or `readyok` line before `uciok`
    A banner before `uci` is harmless; search output is not."""
    engine = UciEngine(context.start()).handshake()
    for line in engine.handshake_lines:
        if re.match(r"\s*(info|bestmove|readyok)\b", line.text):
            raise CheckFailed(f"{line.text!r} before uciok")


@check(STARTUP, "option-lines", "python-chess option parsing; weiss PR #712 (no type); Banksia's spin regex")
def option_lines(context: Context) -> None:
    """declares options that python-chess, cutechess and Arena can parse
    Each `option` line has a name and a known type; a spin has whole-number default, min and max
    with the default between them; a check's default is true or false; a combo's default is one
    of its vars. (An empty string default is accepted, as python-chess does.)"""
    engine = UciEngine(context.start()).handshake()
    for line in engine.handshake_lines:
        if not line.text.startswith("option"):
            continue
        parsed = parse_option(line.text)
        if not parsed.name:
            raise CheckFailed(f"{line.text!r}: no name")
        if parsed.type not in OPTION_TYPES:
            raise CheckFailed(f"{line.text!r}: type {parsed.type!r} is not one of {', '.join(OPTION_TYPES)}")
        if parsed.type == "spin":
            try:
                low, high, default = int(parsed.min or ""), int(parsed.max or ""), int(parsed.default or "")
            except ValueError:
                raise CheckFailed(f"{line.text!r}: a spin needs whole-number default, min and max") from None
            if not low <= default <= high:
                raise CheckFailed(f"{line.text!r}: the default is outside min..max")
        elif parsed.type == "check" and parsed.default not in ("true", "false"):
            raise CheckFailed(f"{line.text!r}: a check's default must be true or false")
        elif parsed.type == "combo" and parsed.default not in parsed.vars:
            raise CheckFailed(f"{line.text!r}: the combo's default is not one of its vars")


@check(STARTUP, "arena-autodetect", "Arena sends `xboard` then `uci`; Igel exited on it (igel#185)")
def arena_autodetect(context: Context) -> None:
    """ignores `xboard` sent before `uci` (Arena's autodetect) and answers `uci`"""
    driver = context.start()
    driver.send("xboard")
    engine = UciEngine(driver).handshake()
    engine.isready()


# -- input -----------------------------------------------------------------------------------

INPUT = group("uci", "input", "Line endings, blanks and junk", """
    Windows GUIs and Wine end lines with CR LF, and the UCI spec warns that any line ending may
    come (Igel could not read them, igel#284). The spec allows any whitespace between tokens.
    Banksia writes `Unknown option <line>` into the engine when it cannot parse an option, and
    Scid sends XBoard words (`exit`) to UCI engines; an engine must ignore what it does not know,
    never exit on it.""")


@check(INPUT, "crlf", "UCI spec on line endings; Windows GUIs and Wine; igel#284")
def crlf(context: Context) -> None:
    """reads commands that end in CR LF
    The whole session (uci, isready, position with moves, go) is sent with CR LF; the best move
    must be legal for Black after 1. e4."""
    driver = context.start()
    engine = UciEngine(driver).handshake(crlf=True)
    driver.send("ucinewgame", "isready", ending="\r\n")
    engine.readyok()
    board = _board_after("e2e4")
    driver.send("position startpos moves e2e4", "go depth 1", ending="\r\n")
    engine.bestmove(board, bounds.ANSWER)
    driver.send("isready", ending="\r\n")
    engine.readyok()


@check(INPUT, "whitespace", "UCI spec: any number of spaces and tabs between tokens")
def whitespace(context: Context) -> None:
    """reads tokens separated by tabs and repeated spaces"""
    engine = start(context.start())
    board = _board_after("e2e4")
    engine.send("position\tstartpos  moves\t e2e4", "go \t depth  1")
    engine.bestmove(board, bounds.ANSWER)
    engine.isready()


@check(INPUT, "unknown-commands", "Banksia's `Unknown option ...`; Scid's `exit`; igel#185")
def unknown_commands(context: Context) -> None:
    """carries on after unknown commands and junk lines
    Sends an unknown word, Banksia's `Unknown option ...` line and Scid's `exit`, then expects
    `readyok` and a legal search."""
    engine = start(context.start())
    engine.send("frobnicate now", "Unknown option name Foo type spin", "exit")
    engine.isready()
    engine.search(_board_after("d2d4"), "go depth 1", bounds.ANSWER)


# -- options ---------------------------------------------------------------------------------

OPTIONS = group("uci", "options", "Setting options", """
    Arena sends `setoption` for every option the engine declares, defaults included, with
    `<empty>` for empty strings; cutechess sends an empty string without `value` (PlentyChess
    crashed: PlentyChess#314); Scid and analysis GUIs change MultiPV while the engine analyses,
    and Stockfish 16 blocked its input thread on such a `setoption`, so the `stop` that followed
    was never read (Stockfish#5137).""")


@check(OPTIONS, "every-option-at-start", "Arena's start-up (setoption for every option)")
def every_option_at_start(context: Context) -> None:
    """takes `setoption` for every option it declares, at its default, as Arena sends them"""
    engine = UciEngine(context.start()).handshake()
    for option in engine.options.values():
        if option.type == "button":
            engine.setoption(option.name)
        else:
            default = option.default if option.default not in (None, "") else "<empty>"
            engine.setoption(option.name, default)
    engine.isready()
    engine.new_game()
    engine.search(_board_after("e2e4"), "go depth 1", bounds.ANSWER)


@check(OPTIONS, "string-without-value", "cutechess's empty string option; PlentyChess#314")
def string_without_value(context: Context) -> None:
    """takes a string option set with no `value` (cutechess's empty string)
    Uses a string option whose default is already empty, so nothing changes but the form."""
    engine = UciEngine(context.start()).handshake()
    empty = [o for o in engine.options.values() if o.type == "string" and o.default in (None, "", "<empty>")]
    if not empty:
        raise Skipped("the engine declares no string option with an empty default")
    engine.setoption(empty[0].name)
    engine.isready()
    engine.new_game()
    engine.search(_board_after("e2e4"), "go depth 1", bounds.ANSWER)


@check(OPTIONS, "multipv-mid-search", "Scid and XBoard change MultiPV mid-analysis; Stockfish#5137")
def multipv_mid_search(context: Context) -> None:
    """takes a MultiPV change during `go infinite` without blocking `stop`"""
    engine = start(context.start())
    engine.require_option("MultiPV", "spin")
    board = chess.Board(MIDDLEGAME)
    engine.position(board)
    engine.send("go infinite")
    engine.quiet(bounds.WATCH, "during go infinite")
    engine.setoption("MultiPV", "2")
    engine.send("stop")
    engine.bestmove(board, bounds.STOP, "bestmove after stop")
    engine.isready()


# -- a game ----------------------------------------------------------------------------------

GAME = group("uci", "game", "Playing a game", """
    python-chess (lichess-bot) and cutechess send `ucinewgame`, `isready`, then for every move the
    whole game as `position startpos moves ...` and `go` with both clocks; python-chess writes
    the en passant square after every double push; lichess-bot's `suggest` mode restricts the
    root moves with `searchmoves`. Castling is `e1g1` in standard chess: Arena judged `e1h1`
    illegal (Clover#154) and PyChess could not read it (shakmaty#13). An illegal `bestmove`
    forfeits the game in cutechess and makes lichess-bot resign.""")


@check(GAME, "clock-game", "python-chess and cutechess's game loop")
def clock_game(context: Context) -> None:
    """plays legal moves from the whole game resent each move, with clocks
    A game with both sides castled is resent from the start each move, with clocks of 10 s and
    a 0.1 s increment; each best move must be legal and come within the clock."""
    engine = start(context.start())
    board = _board_after("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "f8c5", "d2d3", "e8g8")
    for _ in range(3):
        result = engine.search(board, "go wtime 10000 btime 10000 winc 100 binc 100", 10 + bounds.SLACK)
        assert result.move is not None
        board.push(result.move)
        reply = sorted(board.legal_moves, key=lambda move: move.uci())[0]
        board.push(reply)
    engine.isready()


@check(GAME, "en-passant-square", "python-chess writes the e.p. square after every double push")
def en_passant_square(context: Context) -> None:
    """takes a FEN whose en passant square no pawn can capture"""
    engine = start(context.start())
    board = chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
    engine.search(board, "go depth 1", bounds.ANSWER)
    engine.isready()


@check(GAME, "searchmoves", "UCI spec `searchmoves`; python-chess root_moves (lichess-bot suggest mode)")
def searchmoves(context: Context) -> None:
    """restricts its search to the moves after `searchmoves`"""
    engine = start(context.start())
    board = chess.Board(ITALIAN)
    result = engine.search(board, "go depth 2 searchmoves h2h4 g2g3", bounds.ANSWER)
    if result.text not in ("h2h4", "g2g3"):
        raise CheckFailed(f"bestmove {result.text} is not one of the searchmoves h2h4 g2g3")


@check(GAME, "castles-e1g1", "Arena (Clover#154), PyChess (shakmaty#13)")
def castles_e1g1(context: Context) -> None:
    """writes castling as `e1g1` in standard chess, not king takes rook"""
    engine = start(context.start())
    _requested(engine, chess.Board(ITALIAN), "go depth 1 searchmoves e1g1", "e1g1")


@check(GAME, "promotion", "UCI spec (e7e8q); python-chess lowercases AnMon's upper-case promotions")
def promotion(context: Context) -> None:
    """reads and writes promotions in lower case (`a7a8q`)
    The position comes with a promotion in its moves; the engine is asked for another."""
    engine = start(context.start())
    board = _board_after("b2b1n", fen="8/P6k/8/8/8/8/1p4K1/8 b - - 0 1")
    _requested(engine, board, "go depth 1 searchmoves a7a8q", "a7a8q")


# -- stopping --------------------------------------------------------------------------------

STOP = group("uci", "stop", "Stop, isready and quit at any moment", """
    Fritz starts analysing with `stop`, `position`, `go infinite` and no `ucinewgame` (zahak#102);
    a `stop` that arrives before the search has started must still be answered, and must not be
    kept for the next `go` (arasan#21, lc0 PR #693, chess-3 PR #23); python-chess and cutechess
    send `isready` while the engine thinks, and engines that answer only after the search are
    killed as unresponsive (python-chess#83, cutechess#476, Ethereal#177; Cinnamon stopped its
    search instead, Cinnamon PR #3). One `bestmove` per `go`, exactly: a second one is read as
    the answer to the next command (python-chess).""")


@check(STOP, "fritz-no-ucinewgame", "Fritz (zahak#102); a cached stop (arasan#21)")
def fritz_no_ucinewgame(context: Context) -> None:
    """searches until `stop` after an idle `stop`, `position` and `go infinite`, with no `ucinewgame`"""
    engine = UciEngine(context.start()).handshake()
    engine.send("stop")
    board = _board_after("e2e4")
    engine.position(board)
    engine.send("go infinite")
    engine.quiet(bounds.WATCH, "during go infinite, before any stop")
    engine.send("stop")
    engine.bestmove(board, bounds.STOP, "bestmove after stop")
    engine.isready()


@check(STOP, "stop-right-after-go", "arasan#21, lc0 PR #693, chess-3 PR #23")
def stop_right_after_go(context: Context) -> None:
    """answers a `stop` sent right after `go` with exactly one `bestmove`, every time
    `go` and `stop` go out in one write, 10 times with `go infinite` and 5 with `go depth 30`;
    each must get one legal best move before the `readyok` that follows."""
    engine = start(context.start())
    board = _board_after("e2e4", "c7c5")
    engine.position(board)
    for go in ["go infinite"] * 10 + ["go depth 30"] * 5:
        engine.send(go, "stop")
        engine.bestmove(board, bounds.STOP, f"bestmove after `{go}` and `stop`")
        engine.isready()


@check(STOP, "isready-while-searching", "python-chess#83, cutechess#476, Ethereal#177, Cinnamon PR #3")
def isready_while_searching(context: Context) -> None:
    """answers `isready` at once during `go infinite`, and goes on searching"""
    engine = start(context.start())
    board = chess.Board(MIDDLEGAME)
    engine.position(board)
    engine.send("go infinite")
    engine.isready(bounds.ANSWER, "readyok during go infinite")
    engine.quiet(bounds.WATCH, "after readyok, with no stop: isready must not stop the search")
    engine.send("stop")
    engine.bestmove(board, bounds.STOP, "bestmove after stop")


@check(STOP, "stop-after-bestmove", "UCI spec (stop while idle is ignored); python-chess")
def stop_after_bestmove(context: Context) -> None:
    """writes nothing for a `stop` that comes after its search has ended"""
    engine = start(context.start())
    board = _board_after("g1f3")
    engine.search(board, "go depth 1", bounds.ANSWER)
    engine.send("stop")
    engine.isready()


@check(STOP, "quit-while-searching", "cutechess kills an engine 5 s after `quit`")
def quit_while_searching(context: Context) -> None:
    """exits within 5 s of `quit` during `go infinite`"""
    driver = context.start()
    engine = start(driver)
    engine.position(chess.Board(MIDDLEGAME))
    engine.send("go infinite")
    engine.quiet(bounds.WATCH, "during go infinite")
    engine.quit()
    if driver.wait_exit(bounds.EXIT) is None:
        raise CheckFailed(f"still running {bounds.EXIT:g} s after quit")


@check(STOP, "end-of-input", "protocols.md 5.1: end of input is quit, and the search owed is answered")
def end_of_input(context: Context) -> None:
    """at end of input, writes the `bestmove` it owes and exits with status 0
    `go infinite`, then the input closes (a script piping commands, a GUI that died): one legal
    best move, then exit 0, within 5 s. Stockfish does this (end of input is `quit`, and a
    stopped search still answers)."""
    driver = context.start()
    engine = start(driver)
    board = _board_after("e2e4", "e7e5")
    engine.position(board)
    engine.send("go infinite")
    engine.quiet(bounds.WATCH, "during go infinite")
    driver.close_input()
    engine.bestmove(board, bounds.EXIT, "bestmove after end of input")
    code = driver.wait_exit(bounds.EXIT)
    if code is None:
        raise CheckFailed(f"still running {bounds.EXIT:g} s after the end of its input")
    if code != 0:
        raise CheckFailed(f"exit status {code} at end of input, expected 0")


# -- time ------------------------------------------------------------------------------------

TIME = group("uci", "time", "Short clocks", """
    lichess-bot sends the clock minus its overhead, never below 1 ms, and increments even when
    0; cutechess forfeits a move that arrives after the flag (no margin by default). Engines lost
    on time under Arena and Fritz (Stockfish#603, Stockfish#2442). A few milliseconds on the
    clock must give a move at once, and `movetime` must be kept.""")


@check(TIME, "tiny-clock", "lichess-bot's clocks (at least 1 ms); cutechess forfeits on time")
def tiny_clock(context: Context) -> None:
    """moves within 1 s when its clock shows 50 ms"""
    engine = start(context.start())
    board = _board_after("e2e4")
    engine.position(board)
    sent = engine.send("go wtime 50 btime 50 winc 0 binc 0")
    result = engine.bestmove(board, 0.05 + bounds.SLACK + bounds.ANSWER)
    took = result.line.at - sent
    if took > 0.05 + bounds.SLACK:
        raise CheckFailed(f"bestmove after {took:.2f} s with 0.05 s on the clock")


@check(TIME, "movetime", "UCI spec: movetime is exact; python-chess times out at movetime + 10 s")
def movetime(context: Context) -> None:
    """answers `go movetime 300` within its movetime (plus 1 s)"""
    engine = start(context.start())
    board = chess.Board(MIDDLEGAME)
    engine.position(board)
    sent = engine.send("go movetime 300")
    result = engine.bestmove(board, 0.3 + bounds.SLACK + bounds.ANSWER)
    took = result.line.at - sent
    if took > 0.3 + bounds.SLACK:
        raise CheckFailed(f"bestmove after {took:.2f} s for movetime 300")


# -- pondering -------------------------------------------------------------------------------

PONDER = group("uci", "ponder", "Pondering", """
    cutechess and python-chess ponder only with engines that declare `Ponder`: `go ponder` on the
    expected reply, then `ponderhit` (the reply came) or `stop` (it did not) and a new `go`. A
    `bestmove` before either is "illegal end of ponder search" to Shredder (rodent-iv#25) and a
    discarded result to cutechess (cutechess#180; Carballo#5 on a mate, Patricia#161 at maximum
    depth). Lc0 hung when `position` and `go` followed a ponder `stop` at once (lc0#944).
    `ponderhit` carries no clock: the engine keeps the one given with `go ponder`.""")


def _ponder_engine(context: Context) -> UciEngine:
    engine = start(context.start())
    engine.require_option("Ponder", "check")
    engine.setoption("Ponder", "true")
    engine.isready()
    return engine


@check(PONDER, "holds-bestmove", "Shredder (rodent-iv#25), cutechess#180, Carballo#5, Patricia#161")
def holds_bestmove(context: Context) -> None:
    """holds its `bestmove` during `go ponder`, even with a mate in one found, until `ponderhit`"""
    engine = _ponder_engine(context)
    board = _board_after("b5b4", fen="6k1/5ppp/8/1p6/8/8/5PPP/R5K1 b - - 0 1")  # Ra8 mates
    engine.position(board)
    engine.send("go ponder wtime 5000 btime 5000")
    engine.quiet(2 * bounds.WATCH, "during go ponder, before ponderhit")
    engine.send("ponderhit")
    engine.bestmove(board, 5 + bounds.SLACK, "bestmove after ponderhit")
    engine.isready()


@check(PONDER, "ponder-miss", "python-chess and cutechess's ponder miss; lc0#944")
def ponder_miss(context: Context) -> None:
    """answers `stop` during `go ponder` with one `bestmove`, then searches the real position at once"""
    engine = _ponder_engine(context)
    pondered = _board_after("e2e4", "e7e5", "g1f3", "b8c6")
    engine.position(pondered)
    engine.send("go ponder wtime 3000 btime 3000")
    engine.quiet(bounds.WATCH, "during go ponder, before stop")
    engine.send("stop")
    engine.bestmove(pondered, bounds.STOP, "bestmove after stop (the ponder miss)")
    real = _board_after("e2e4", "e7e5", "g1f3", "g8f6")
    engine.search(real, "go wtime 3000 btime 3000", 3 + bounds.SLACK)
    engine.isready()


@check(PONDER, "ponderhit-clock", "UCI spec: ponderhit switches to the clock of `go ponder`")
def ponderhit_clock(context: Context) -> None:
    """moves on the clock it was given with `go ponder` after `ponderhit` (1 s: within 2 s)"""
    engine = _ponder_engine(context)
    board = chess.Board(MIDDLEGAME)
    engine.position(board)
    engine.send("go ponder wtime 1000 btime 1000")
    engine.quiet(bounds.WATCH, "during go ponder, before ponderhit")
    hit = engine.send("ponderhit")
    result = engine.bestmove(board, 1 + bounds.SLACK + bounds.ANSWER, "bestmove after ponderhit")
    took = result.line.at - hit
    if took > 1 + bounds.SLACK:
        raise CheckFailed(f"bestmove {took:.2f} s after ponderhit with 1 s on its clock")


# -- MultiPV ---------------------------------------------------------------------------------

MULTIPV = group("uci", "multipv", "MultiPV", """
    python-chess files each `info` under its `multipv` number, and analysis GUIs (Scid, En
    Croissant, liground) show line k as the k-th best: the lines of a depth come together,
    numbered 1..k, best first (out-of-order reports: Clover#320, cutechess#76, liground#118).""")


@check(MULTIPV, "numbered-best-first", "UCI spec (multipv 1 = best); python-chess; Clover#320; cutechess#76")
def multipv_numbered(context: Context) -> None:
    """with MultiPV 3, numbers each depth's lines 1, 2, 3, best first, with distinct first moves
    Bound lines (lowerbound/upperbound) are not compared; each depth that has all three lines
    must have them in order of number and of score."""
    engine = start(context.start())
    option = engine.require_option("MultiPV", "spin")
    if option.max is not None and option.max.lstrip("-").isdigit() and int(option.max) < 3:
        raise Skipped("MultiPV cannot reach 3")
    engine.setoption("MultiPV", "3")
    engine.isready()
    board = chess.Board(ITALIAN)
    result = engine.search(board, "go depth 4", bounds.ANSWER * 3)
    by_depth: dict[str, list[tuple[int, list[str]]]] = {}
    for line in result.infos:
        words = line.text.split()
        if "multipv" in words and "depth" in words and "pv" in words:
            number = int(words[words.index("multipv") + 1])
            by_depth.setdefault(words[words.index("depth") + 1], []).append((number, words))
    complete = [lines for lines in by_depth.values() if {n for n, _ in lines} >= {1, 2, 3}]
    if not complete:
        raise CheckFailed("no depth with the lines multipv 1, 2 and 3")
    for lines in complete:
        block = lines[-3:]
        if [n for n, _ in block] != [1, 2, 3]:
            raise CheckFailed(f"a depth's lines end numbered {[n for n, _ in lines]}, not 1, 2, 3")
        firsts = [words[words.index("pv") + 1] for _, words in block]
        if len(set(firsts)) != 3:
            raise CheckFailed(f"two of the three lines start with the same move: {firsts}")
        scores = [_score(words) for _, words in block]
        comparable = [s for s in scores if s is not None]
        if comparable != sorted(comparable, reverse=True):
            raise CheckFailed(f"multipv 1..3 are not best first: scores {scores}")


def _score(words: list[str]) -> int | None:
    """A comparable score for ordering (mate far above any cp), None for a bound."""
    if "score" not in words:
        return None
    at = words.index("score")
    kind, text = words[at + 1], words[at + 2] if at + 2 < len(words) else ""
    if not re.fullmatch(r"-?\d+", text):
        return None  # uci.output.info-lines says what is wrong with it
    value = int(text)
    if at + 3 < len(words) and words[at + 3] in ("lowerbound", "upperbound"):
        return None
    if kind == "mate":
        return 1_000_000 - value if value > 0 else -1_000_000 - value
    return value


# -- terminal positions and output -----------------------------------------------------------

OUTPUT = group("uci", "output", "What the engine writes", """
    Arena drops an `info` line with a leading blank (Devre#76); Scid and En Croissant drop a
    `score` without `cp`/`mate` (en-croissant#500) and read everything after `pv` as moves;
    python-chess wants a bound word right after the score. With no legal move, an engine must
    still answer: engines that wrote nothing hung their host (A.C.A.S PR #111), `a1a1` confused
    it (Halogen PR #896); python-chess takes `(none)` as no move.""")


@check(OUTPUT, "info-lines", "Devre#76 (Arena), en-croissant#500, Scid's pv parsing, python-chess")
def info_lines(context: Context) -> None:
    """writes `info` lines GUIs can parse: no leading blank, `score cp|mate N`, a legal `pv` last"""
    engine = start(context.start())
    board = chess.Board(ITALIAN)
    result = engine.search(board, "go depth 5", bounds.ANSWER * 3)
    for line in result.infos:
        if line.text.lstrip().startswith("info"):
            problems = info_problems(board, line.text)
            if problems:
                raise CheckFailed(f"{line.text!r}: {problems[0]}")


@check(OUTPUT, "no-legal-move", "A.C.A.S PR #111, Halogen PR #896, Caissa#24; python-chess `(none)`")
def no_legal_move(context: Context) -> None:
    """answers a mated or stalemated side with `bestmove (none)` (or `0000`) at once"""
    engine = start(context.start())
    for fen in ("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"):
        engine.search(chess.Board(fen), "go depth 5", bounds.ANSWER)
    engine.isready()


# -- Chess960 --------------------------------------------------------------------------------

CHESS960 = group("uci", "chess960", "Chess960", """
    lichess-bot (through python-chess) and cutechess set `UCI_Chess960`, send Shredder-FEN
    castling rights and castling as king takes rook, and expect it back that way: an engine that
    wrote the king's destination crashed a python-chess GUI (Clover#330), and cutechess once
    rejected a legal `e8h8` (cutechess#15).""")


@check(CHESS960, "king-takes-rook", "UCI_Chess960 (python-chess, cutechess); Clover#330")
def king_takes_rook(context: Context) -> None:
    """with UCI_Chess960, reads Shredder-FEN and castling as king takes rook, and castles that way"""
    engine = start(context.start())
    engine.require_option("UCI_Chess960", "check")
    engine.setoption("UCI_Chess960", "true")
    engine.new_game()
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", chess960=True)
    board.push(chess.Move.from_uci("e1h1"))
    _requested(engine, board, "go depth 1 searchmoves e8a8", "e8a8")
    board = chess.Board("bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1", chess960=True)
    for move in ("h1g3", "h8g6"):
        board.push_uci(move)
    _requested(engine, board, "go depth 1 searchmoves f1g1", "f1g1")
