"""A small UCI and XBoard engine that misbehaves on demand: the conformance tool's own test.

    python faulty_engine.py --protocol uci|xboard [--fault NAME]

With no fault it follows both protocols (it claims every optional feature the checks look for:
Ponder, MultiPV, UCI_Chess960, `hard`, `analyze`, fischerandom), so every check must pass.
Each fault in FAULTS reproduces one published engine bug, narrowly enough that exactly the
check named for it fails. Its "search" is simulated: each depth takes a few milliseconds and
the move is the first legal one in UCI order (a mate in one if there is one), so it costs
next to no CPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import chess

#: fault -> what it does (the test maps each to the check that must catch it).
FAULTS = {
    # UCI
    "no-id-author": "no `id author` line",
    "info-before-uciok": "an `info string` line before `uciok` (Stockfish#5430)",
    "spin-default-out-of-range": "a spin option whose default is below its min",
    "exits-on-xboard": "exits on `xboard` before `uci` (igel#185)",
    "crlf": "keeps the CR of a CR LF line as part of the last word (igel#284)",
    "single-spaces": "splits commands on single spaces only",
    "exits-on-unknown": "exits on an unknown command",
    "empty-value-crash": "exits on `value <empty>`",
    "no-value-crash": "exits on a string option set without `value` (PlentyChess#314)",
    "setoption-waits-for-search": "`setoption` waits for the running search to end (Stockfish#5137)",
    "needs-ucinewgame": "exits on `go` if no `ucinewgame` came first",
    "idle-stop-leaks": "keeps a `stop` sent while idle for the next search (arasan#21)",
    "move-list-limit": "applies only the first 10 moves of `position ... moves`",
    "rejects-ep-square": "ignores a FEN whose en passant square no pawn can capture",
    "ignores-searchmoves": "ignores `searchmoves`",
    "castles-king-takes-rook": "writes standard castling as e1h1 (Clover#154)",
    "uppercase-promotion": "writes promotions in upper case (a7a8Q)",
    "bestmove-twice": "answers a `stop` after its search ended with a second bestmove",
    "stop-before-search-lost": "loses a `stop` that arrives before its search has started (lc0 PR #693)",
    "isready-after-search": "answers `isready` only after the search (Ethereal#177)",
    "quit-ignored-while-searching": "ignores `quit` during a search",
    "eof-silent": "exits at end of input without answering its search",
    "slow-tiny-clock": "thinks 3 s when its clock is under 100 ms",
    "movetime-ignored": "thinks 3 s whatever the movetime",
    "bestmove-while-pondering": "prints bestmove while pondering when it finds a mate (Carballo#5)",
    "ponder-stop-silent": "writes no bestmove for a `stop` during `go ponder`",
    "ponderhit-keeps-pondering": "keeps searching without a clock after `ponderhit`",
    "multipv-unordered": "writes MultiPV lines in reverse order",
    "score-without-cp": "writes `score N` without `cp` (en-croissant#500)",
    "no-bestmove-without-moves": "writes nothing when it has no legal move (A.C.A.S PR #111)",
    "chess960-king-destination": "writes Chess960 castling as the king's destination (Clover#330)",
    # XBoard
    "no-done": "never sends `feature done=1`",
    "no-setboard-feature": "declares setboard=0",
    "unquoted-myname": "writes myname=faulty without quotes",
    "usermove-needs-accepted": "reads `usermove` only after `accepted usermove`",
    "error-on-random": "answers `random` with an Error line",
    "error-on-rating": "answers `rating` with an Error line",
    "needs-go-after-move": "after `new`, thinks on the opponent's move only after a `go`",
    "move-before-board-update": "writes `move` before it updates its board (cutechess#405)",
    "rejects-own-moves-in-force": "rejects its own side's moves in force mode",
    "illegal-move-silent": "ignores an illegal move without a word",
    "force-keeps-thinking": "answers `force` while thinking with a move",
    "result-keeps-thinking": "answers `result` while thinking with a move",
    "new-keeps-thinking": "answers `new` while thinking with a move",
    "no-pong-while-pondering": "answers `ping` while pondering only when the ponder search ends",
    "easy-moves": "answers `easy` while pondering with a move",
    "ponder-miss-stale-move": "re-sends its previous move on a ponder miss (cutechess#405, case 7)",
    "ponder-hit-no-move": "never moves after a ponder hit",
    "moves-in-analyze": "writes a move after 0.3 s of analysis",
    "analyze-ignores-undo": "ignores `undo` in analyze mode",
    "st-integer-only": "exits on a fractional `st` (as hoichess does)",
    "rejects-o-o": "answers O-O in fischerandom with an Error (Fairy-Stockfish#524)",
    "quit-ignored-while-thinking": "ignores `quit` while thinking",
    "eof-hangs": "never exits at end of input while thinking",
    "thinking-bad-line": "writes a line starting with a digit that is not thinking output",
}

MAX_DEPTH = 100


def depth_time(depth: int) -> float:
    return min(0.002 * 2 ** (depth - 1), 0.05)


class Search(threading.Thread):
    """A simulated iterative deepening search; `on_done(move)` runs when it ends by itself or
    is stopped (with the best move so far)."""

    def __init__(self, engine: Engine, board: chess.Board, *, depth: int | None = None,
                 seconds: float | None = None, moves: list[chess.Move] | None = None, hold: bool = False,
                 multipv: int = 1, info: bool = True) -> None:
        super().__init__(daemon=True)
        self.engine = engine
        self.board = board.copy()
        self.max_depth = depth or MAX_DEPTH
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.hold = hold
        self.multipv = multipv
        self.info = info
        self.answer = True  # False: stopped by a command that wants no answer
        self.stop_event = threading.Event()
        self.released = threading.Event()
        self.started_iterating = threading.Event()
        self.done = threading.Event()  # the search loop has ended (set before search_done runs)
        self.finished = threading.Event()  # search_done has run: its answer is written
        legal = sorted(self.board.legal_moves, key=lambda m: m.uci())
        if moves:
            legal = [m for m in legal if m in moves] or legal
        mates = [m for m in legal if self._mates(m)]
        self.ranked = mates + [m for m in legal if m not in mates]
        self.best = self.ranked[0] if self.ranked else None
        self.depth_reached = 0
        self.started = time.monotonic()

    def _mates(self, move: chess.Move) -> bool:
        self.board.push(move)
        mate = self.board.is_checkmate()
        self.board.pop()
        return mate

    def stop(self) -> None:
        self.stop_event.set()
        self.released.set()

    def set_deadline(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def run(self) -> None:
        depth = 0
        while self.best is not None and depth < self.max_depth and not self.stop_event.is_set():
            if self.deadline is not None and time.monotonic() >= self.deadline and depth >= 1:
                break  # as real engines do, the first iteration always completes (however late this thread ran)
            wait = depth_time(depth + 1)
            if self.deadline is not None:
                wait = max(0.0, min(wait, self.deadline - time.monotonic()))
            if self.stop_event.wait(wait):
                break
            depth += 1
            self.depth_reached = depth
            self.started_iterating.set()
            if self.info:
                self.engine.report(self, depth)
            if self._mates(self.best):
                break  # a mate in one: nothing deeper to find
        self.started_iterating.set()
        if self.hold:
            self.engine.search_waiting(self)
            self.released.wait()
        self.done.set()
        self.engine.search_done(self)
        self.finished.set()


class Engine:
    def __init__(self, fault: str | None) -> None:
        self.fault = fault
        self.lock = threading.RLock()  # the engine's state: the reader and the search's end
        self.out_lock = threading.Lock()  # whole lines on stdout
        self.board = chess.Board()
        self.search: Search | None = None

    def has(self, fault: str) -> bool:
        return self.fault == fault

    def write(self, text: str) -> None:
        with self.out_lock:
            sys.stdout.write(text + "\n")
            sys.stdout.flush()

    def words(self, line: str) -> list[str]:
        if self.has("single-spaces"):
            return [word for word in line.rstrip("\r\n").split(" ") if word]
        if self.has("crlf"):
            return line.rstrip("\n").split()[:-1] + [line.rstrip("\n").split()[-1] + "\r"] \
                if line.endswith("\r\n") and line.strip() else line.split()
        return line.split()

    def main(self) -> int:
        for line in sys.stdin:
            words = self.words(line)
            if words and self.command(words) == "quit":
                return 0
        return self.end_of_input()

    def command(self, words: list[str]) -> str | None:
        raise NotImplementedError

    def end_of_input(self) -> int:
        raise NotImplementedError

    def report(self, search: Search, depth: int) -> None:
        raise NotImplementedError

    def search_waiting(self, search: Search) -> None:
        """The search finished but holds its answer (ponder, infinite)."""

    def search_done(self, search: Search) -> None:
        raise NotImplementedError


# -- UCI ---------------------------------------------------------------------------------------

class Uci(Engine):
    def __init__(self, fault: str | None) -> None:
        super().__init__(fault)
        self.options = {"hash": "16", "multipv": "1", "ponder": "false", "uci_chess960": "false",
                        "syzygypath": ""}
        self.handshaken = False
        self.new_game_seen = False
        self.pending_stop = False
        self.answered: set[int] = set()
        self.ponder_clock: float | None = None
        self.last_search: Search | None = None
        self.pondering = False

    def command(self, words: list[str]) -> str | None:
        name, rest = words[0], words[1:]
        if name == "uci":
            self.handshake()
        elif name == "isready":
            if self.has("isready-after-search") and self.search is not None:
                self.search.finished.wait()
            self.write("readyok")
        elif name == "setoption":
            self.setoption(rest)
        elif name == "ucinewgame":
            self.new_game_seen = True
        elif name == "position":
            self.position(rest)
        elif name == "go":
            self.go(rest)
        elif name == "stop":
            self.stop()
        elif name == "ponderhit":
            self.ponderhit()
        elif name == "quit":
            if self.has("quit-ignored-while-searching") and self.search is not None:
                return None
            return "quit"
        elif name == "xboard" and not self.handshaken:
            if self.has("exits-on-xboard"):
                sys.exit(1)
        elif name == "debug":
            pass
        else:
            if self.has("exits-on-unknown") and self.handshaken:
                sys.exit(1)
            self.write(f"info string unknown command {name}")
        return None

    def handshake(self) -> None:
        self.write("id name faulty")
        if not self.has("no-id-author"):
            self.write("id author the cb-async conformance tests")
        if self.has("info-before-uciok"):
            self.write("info string starting up")
        low = "17" if self.has("spin-default-out-of-range") else "1"
        self.write(f"option name Hash type spin default 16 min {low} max 64")
        self.write("option name MultiPV type spin default 1 min 1 max 8")
        self.write("option name Ponder type check default false")
        self.write("option name UCI_Chess960 type check default false")
        self.write("option name SyzygyPath type string default <empty>")
        self.write("option name Clear Hash type button")
        self.write("uciok")
        self.handshaken = True

    def setoption(self, rest: list[str]) -> None:
        if self.has("setoption-waits-for-search") and self.search is not None:
            self.search.finished.wait()
        text = " ".join(rest)
        if not text.startswith("name "):
            return
        name, has_value, value = text[5:].partition(" value ")
        key = name.strip().lower()
        if self.has("empty-value-crash") and value.strip() == "<empty>":
            sys.exit(1)
        if self.has("no-value-crash") and key == "syzygypath" and not has_value:
            sys.exit(1)
        if key in self.options:
            self.options[key] = "" if value.strip() == "<empty>" else value.strip()

    @property
    def chess960(self) -> bool:
        return self.options["uci_chess960"] == "true"

    def position(self, rest: list[str]) -> None:
        moves: list[str] = []
        if "moves" in rest:
            at = rest.index("moves")
            rest, moves = rest[:at], rest[at + 1:]
        try:
            if rest[:1] == ["startpos"]:
                board = chess.Board(chess960=self.chess960)
            else:
                fen = " ".join(rest[1:])
                board = chess.Board(fen, chess960=self.chess960)
                if self.has("rejects-ep-square") and not board.has_legal_en_passant() and fen.split()[3] != "-":
                    return
            if self.has("move-list-limit"):
                moves = moves[:10]
            for text in moves:
                board.push(board.parse_uci(text.lower()))
        except (ValueError, IndexError):
            self.write("info string bad position")
            return
        self.board = board

    def go(self, rest: list[str]) -> None:
        if self.has("needs-ucinewgame") and not self.new_game_seen:
            sys.exit(1)
        values: dict[str, int] = {}
        moves: list[chess.Move] = []
        ponder = infinite = False
        index = 0
        while index < len(rest):
            word = rest[index]
            if word in ("ponder", "infinite"):
                ponder |= word == "ponder"
                infinite |= word == "infinite"
            elif word == "searchmoves":
                for text in rest[index + 1:]:
                    try:
                        moves.append(self.board.parse_uci(text))
                    except ValueError:
                        pass
                break
            elif index + 1 < len(rest):
                try:
                    values[word] = int(rest[index + 1])
                except ValueError:
                    pass
                index += 1
            index += 1
        if self.has("ignores-searchmoves"):
            moves = []
        seconds = self.budget(values)
        if ponder:
            self.ponder_clock, seconds = seconds, None
        if infinite:
            seconds = None
        if "depth" in values:
            seconds = None
        if not any(self.board.legal_moves):
            if not self.has("no-bestmove-without-moves"):
                self.write("info depth 0 score mate 0" if self.board.is_check() else "info depth 0 score cp 0")
                self.write("bestmove (none)")
            return
        search = Search(self, self.board, depth=values.get("depth"), seconds=seconds, moves=moves,
                        hold=ponder or infinite, multipv=int(self.options["multipv"] or 1))
        with self.lock:
            self.pondering = ponder
            self.search = search
        search.start()
        if self.pending_stop:
            self.pending_stop = False
            search.stop()

    def budget(self, values: dict[str, int]) -> float | None:
        if "movetime" in values:
            return 3.0 if self.has("movetime-ignored") else values["movetime"] / 1000
        clock = values.get("wtime" if self.board.turn == chess.WHITE else "btime")
        if clock is None:
            return None
        if self.has("slow-tiny-clock") and clock < 100:
            return 3.0
        increment = values.get("winc" if self.board.turn == chess.WHITE else "binc", 0)
        return max(0.001, min(clock / 30 + increment / 2, clock / 2) / 1000)

    def stop(self) -> None:
        search = self.search
        if search is None:
            if self.has("bestmove-twice") and self.last_search is not None and self.last_search.best is not None:
                self.write(f"bestmove {self.move_text(self.last_search.board, self.last_search.best)}")
            if self.has("idle-stop-leaks"):
                self.pending_stop = True
            return
        if self.has("stop-before-search-lost") and not search.started_iterating.is_set():
            return
        if self.has("ponder-stop-silent") and self.pondering:
            search.answer = False
        search.stop()
        search.finished.wait()

    def ponderhit(self) -> None:
        search = self.search
        if search is None or not self.pondering:
            return
        self.pondering = False
        if self.ponder_clock is not None and not self.has("ponderhit-keeps-pondering"):
            search.set_deadline(self.ponder_clock)
        search.hold = False
        search.released.set()

    def search_waiting(self, search: Search) -> None:
        if self.has("bestmove-while-pondering") and self.pondering and search.best is not None \
                and search._mates(search.best):
            search.released.set()

    def report(self, search: Search, depth: int) -> None:
        lines = []
        for number, move in enumerate(search.ranked[:search.multipv], 1):
            score = "score 0" if self.has("score-without-cp") and search.multipv == 1 else f"score cp {-10 * number}"
            if search._mates(move):
                score = "score mate 1"
            elapsed = int((time.monotonic() - search.started) * 1000)
            pv = self.move_text(search.board, move)
            lines.append(f"info depth {depth} multipv {number} {score} nodes {depth * 100} time {elapsed} pv {pv}")
        if self.has("multipv-unordered"):
            lines.reverse()
        for line in lines:
            self.write(line)

    def move_text(self, board: chess.Board, move: chess.Move) -> str:
        text = board.uci(move, chess960=self.chess960)
        if board.is_castling(move):
            if self.has("castles-king-takes-rook") and not self.chess960:
                text = board.uci(move, chess960=True)
            if self.has("chess960-king-destination") and self.chess960:
                text = board.uci(move, chess960=False)
                if text[:2] == text[2:]:
                    text = text[:2] + ("c" if move.to_square < move.from_square else "g") + text[3]
        if self.has("uppercase-promotion") and move.promotion:
            text = text[:4] + text[4:].upper()
        return text

    def search_done(self, search: Search) -> None:
        with self.lock:
            if self.search is search:
                self.search = None
                self.last_search = search
            if search.answer and search.best is not None:
                after = search.board.copy()
                after.push(search.best)
                reply = sorted(after.legal_moves, key=lambda m: m.uci())
                ponder = f" ponder {self.move_text(after, reply[0])}" if reply else ""
                self.write(f"bestmove {self.move_text(search.board, search.best)}{ponder}")

    def end_of_input(self) -> int:
        search = self.search
        if search is not None:
            if self.has("eof-silent"):
                os._exit(0)
            search.stop()
            search.finished.wait()
        return 0


# -- XBoard ------------------------------------------------------------------------------------

class XBoard(Engine):
    def __init__(self, fault: str | None) -> None:
        super().__init__(fault)
        self.force = False
        self.engine_color = chess.BLACK
        self.st: float | None = None
        self.sd: int | None = None
        self.clock: float | None = None
        self.post = False
        self.hard = False
        self.analyzing = False
        self.accepted: set[str] = set()
        self.go_seen = False
        self.kind = ""  # "think", "ponder", "analyze"
        self.previous: chess.Move | None = None
        self.guess: chess.Move | None = None
        self.prepared: chess.Move | None = None
        self.variant = "normal"

    def command(self, words: list[str]) -> str | None:
        name, rest = words[0], words[1:]
        simple = {"xboard", "computer", "name", "post", "nopost", "random", "rejected", "otim", "draw",
                  "memory", "cores", "egtpath", "option", "ics", "hint", "bk", "."}
        if name == "protover":
            self.features()
        elif name == "accepted":
            self.accepted.update(rest)
        elif name == "quit":
            if self.has("quit-ignored-while-thinking") and self.kind == "think":
                return None
            return "quit"
        elif name == "ping":
            if self.has("no-pong-while-pondering") and self.kind == "ponder" and self.search is not None:
                self.search.done.wait()
            self.write(f"pong {' '.join(rest)}")
        elif name == "random" and self.has("error-on-random"):
            self.write("Error (unknown command): random")
        elif name == "rating":
            if self.has("error-on-rating"):
                self.write("Error (unknown command): rating")
        elif name in ("post", "nopost"):
            self.post = name == "post"
        elif name in simple:
            pass
        elif name == "new":
            self.halt("new-keeps-thinking")
            self.board, self.force, self.engine_color = chess.Board(), False, chess.BLACK
            self.sd = None
            self.variant = "normal"
            self.go_seen = False
        elif name == "variant":
            self.variant = rest[0] if rest else "normal"
            self.board = chess.Board(chess960=self.variant == "fischerandom")
        elif name == "force":
            self.halt("force-keeps-thinking")
            self.force = True
        elif name == "result":
            self.halt("result-keeps-thinking")
            self.force = True
        elif name == "go":
            self.halt()
            self.force = False
            self.go_seen = True
            self.engine_color = self.board.turn
            self.think()
        elif name == "setboard":
            self.halt()
            try:
                self.board = chess.Board(" ".join(rest), chess960=self.variant == "fischerandom")
            except ValueError:
                self.write("tellusererror Illegal position")
        elif name == "st":
            if self.has("st-integer-only") and not rest[0].isdigit():
                self.write("Illegal time value.")
                sys.exit(1)
            self.st, self.clock = float(rest[0]), None
        elif name == "sd":
            self.sd = int(rest[0])
        elif name == "level":
            self.st = None
        elif name == "time":
            self.clock = int(rest[0]) / 100
        elif name == "hard":
            self.hard = True
        elif name == "easy":
            self.hard = False
            if self.kind == "ponder" and self.search is not None:
                if self.has("easy-moves") and self.search.best is not None:
                    self.write(f"move {self.search.best.uci()}")
                self.halt()
        elif name == "?":
            if self.kind == "think" and self.search is not None:
                self.search.stop()
        elif name == "analyze":
            self.halt()
            self.analyzing = True
            self.analyse()
        elif name == "exit":
            self.halt()
            self.analyzing = False
            self.force = True
        elif name == "undo":
            if self.has("analyze-ignores-undo") and self.analyzing:
                return None
            self.halt()
            if self.board.move_stack:
                self.board.pop()
            if self.analyzing:
                self.analyse()
        elif name == "remove":
            self.halt()
            for _ in range(2):
                if self.board.move_stack:
                    self.board.pop()
        elif name == "usermove":
            if self.has("usermove-needs-accepted") and "usermove" not in self.accepted:
                self.write("Error (unknown command): usermove")
            elif rest:
                self.user_move(rest[0])
        elif self.looks_like_move(name):
            self.user_move(name)
        else:
            if self.has("exits-on-unknown"):
                sys.exit(1)
            self.write(f"Error (unknown command): {name}")
        return None

    def main(self) -> int:
        for line in sys.stdin:
            words = self.words(line)
            with self.lock:  # a command and the end of a search never interleave
                if words and self.command(words) == "quit":
                    return 0
        with self.lock:
            return self.end_of_input()

    def features(self) -> None:
        setboard = "0" if self.has("no-setboard-feature") else "1"
        myname = "myname=faulty" if self.has("unquoted-myname") else 'myname="faulty"'
        self.write(f"feature ping=1 setboard={setboard} usermove=1 time=1 draw=0 sigint=0 sigterm=0 reuse=1 "
                   f'analyze=1 colors=0 {myname} variants="normal,fischerandom"')
        if not self.has("no-done"):
            self.write("feature done=1")

    def looks_like_move(self, text: str) -> bool:
        return len(text) >= 2 and (text[0] in "abcdefgh" and text[1] in "12345678" or text.startswith(("O-O", "0-0")))

    def user_move(self, text: str) -> None:
        search = self.search
        if self.has("rejects-o-o") and text.startswith(("O-O", "0-0")):
            self.write(f"Error (unknown command): {text}")
            return
        try:
            move = self.board.parse_san(text)
        except ValueError:
            if not self.has("illegal-move-silent"):
                self.write(f"Illegal move: {text}")
            return
        if self.has("rejects-own-moves-in-force") and self.force and not self.analyzing \
                and self.board.turn == self.engine_color:
            self.write(f"Illegal move: {text}")
            return
        hit = self.kind == "ponder" and move == self.guess
        prepared = search.best if search is not None and self.kind == "ponder" else None
        self.halt()
        self.board.push(move)
        if self.analyzing:
            self.analyse()
        elif not self.force:
            if self.has("needs-go-after-move") and not self.go_seen:
                return
            if hit and self.has("ponder-hit-no-move"):
                return
            if not hit and prepared is not None and self.has("ponder-miss-stale-move"):
                self.write(f"move {self.board.move_stack[-2].uci()}")  # its previous move, again
                return
            self.think()

    def halt(self, fault: str | None = None) -> None:
        search = self.search
        if search is None:
            return
        if fault is not None and self.has(fault) and self.kind == "think" and search.best is not None:
            self.write(f"move {self.move_text(self.board, search.best)}")  # the search's move, played
        search.answer = False
        search.stop()
        search.done.wait()
        self.search = None
        self.kind = ""

    def budget(self) -> float:
        if self.clock is not None:
            if self.has("slow-tiny-clock") and self.clock < 0.1:
                return 3.0
            return max(0.001, self.clock / 30)
        if self.st is not None:
            return self.st / 20
        return 0.2

    def think(self) -> None:
        self.kind = "think"
        self.search = Search(self, self.board, depth=self.sd, seconds=self.budget(), info=True)
        self.search.start()

    def analyse(self) -> None:
        self.kind = "analyze"
        self.search = Search(self, self.board, hold=True, info=True)
        self.search.start()
        if self.has("moves-in-analyze"):
            search = self.search
            threading.Timer(0.3, lambda: search.best is not None and self.search is search
                            and self.write(f"move {search.best.uci()}")).start()

    def report(self, search: Search, depth: int) -> None:
        if self.post and search.best is not None:
            elapsed = int((time.monotonic() - search.started) * 100)
            self.write(f"{depth} {-10} {elapsed} {depth * 100}\t{search.best.uci()}")
            if self.has("thinking-bad-line") and depth == 1:
                self.write("1 move searched")

    def move_text(self, board: chess.Board, move: chess.Move) -> str:
        if board.chess960 and board.is_castling(move):
            return "O-O" if board.is_kingside_castling(move) else "O-O-O"
        return board.uci(move)

    def search_done(self, search: Search) -> None:
        with self.lock:
            if self.search is not search or not search.answer:
                return
            if self.kind != "think" or search.best is None:
                return
            move = search.best
            text = self.move_text(self.board, move)
            if self.has("move-before-board-update"):
                self.write(f"move {text}")
                self.search, self.kind = None, ""
                board = self.board  # updated 50 ms later, without the lock: the race
                threading.Timer(0.05, board.push, [move]).start()
                return
            else:
                self.board.push(move)
                self.write(f"move {text}")
            self.search, self.kind = None, ""
            if self.hard and not self.board.is_game_over():
                self.guess = sorted(self.board.legal_moves, key=lambda m: m.uci())[0]
                self.write(f"Hint: {self.guess.uci()}")
                pondered = self.board.copy()
                pondered.push(self.guess)
                self.kind = "ponder"
                self.search = Search(self, pondered, hold=True, info=False)
                self.search.start()

    def end_of_input(self) -> int:
        if self.has("eof-hangs") and self.kind == "think":
            threading.Event().wait()
        self.halt()
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", choices=("uci", "xboard"), required=True)
    parser.add_argument("--fault", choices=sorted(FAULTS))
    args = parser.parse_args()
    engine: Engine = Uci(args.fault) if args.protocol == "uci" else XBoard(args.fault)
    code = engine.main()
    sys.stdout.flush()
    os._exit(code)  # daemon search threads may still be held


if __name__ == "__main__":
    sys.exit(main())
