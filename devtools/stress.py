"""`python3 dev.py stress`: drive the real engine with random interleavings of commands and check every line.

    python3 dev.py stress --protocol uci --commands 10000 --seed 1

Each protocol has a driver that sends random commands (`go`/`stop`/`ponderhit`/`isready`/
`setoption`/`position`/`ucinewgame`; the XBoard and CNP equivalents) with random 0-5 ms gaps,
keeps a model of what the engine owes, and after every step reads all that the engine wrote
and checks it: one `bestmove` per `go` and never early for a ponder or infinite search, a
`readyok` per `isready`, a `pong` per `ping`, one response per CNP request, legal moves, and
nothing owed for longer than the bound (no deadlock). The first violation stops the run with
the last lines of the transcript. The tests run short versions; the long run is this command.
"""

from __future__ import annotations

import argparse
import collections
import json
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import chess

from cb_async.cli import UsageError, whole_number
from cb_async.tools.gui_habits.driver import EngineDriver
from devtools import command_line

#: The longest the engine may owe an answer that is due now (an `isready`, a stopped search).
BOUND = 5.0


class StressFailure(AssertionError):
    """The engine broke an invariant; the message ends with the transcript's tail."""


@dataclass
class Owed:
    """An answer the engine owes: due by `deadline` (None: not due until something is sent)."""

    what: str
    deadline: float | None
    #: Its place among everything asked, and the kind of answer (readyok, bestmove, pong, move,
    #: response): answers of one kind that a protocol orders must come in the order asked.
    number: int = 0
    kind: str = ""


class Engine(EngineDriver):
    """The engine process, read by the one driver of an engine subprocess
    (`cb_async.tools.gui_habits.driver`); stress keeps the transcript's last lines as text."""

    def __init__(self, command: list[str]) -> None:
        super().__init__(command)
        self.recent: collections.deque[str] = collections.deque(maxlen=60)

    def send_line(self, line: str) -> None:
        self.recent.append(f"> {line}")
        self.send(line)

    def next_line(self, timeout: float | None) -> str | None:
        """A line, or None if none came within `timeout` (0: only what is there now)."""
        line = self.read(timeout or 0.0)
        if line is None:
            if self.ended:
                raise StressFailure("the engine closed its output")
            return None
        self.recent.append(f"< {line.text}")
        return line.text


class Driver:
    """Shared machinery: send with gaps, read and check after every step, watch deadlines."""

    protocol = ""

    def __init__(self, command: list[str], rng: random.Random) -> None:
        self.engine = Engine([*command, "--protocol", self.protocol])
        self.rng = rng
        self.owed: list[Owed] = []
        #: Every answer owed, in the order asked; those the engine gave, in the order it gave them;
        #: and those withdrawn (a move that a `force` or `new` made unnecessary).
        self.asked: list[Owed] = []
        self.answered: list[Owed] = []
        self.withdrawn: list[Owed] = []
        self.sent = 0
        self.longest_wait = 0.0
        #: What came back, for the summary (answered searches, pongs, busy errors ...).
        self.stats: collections.Counter[str] = collections.Counter()

    def fail(self, message: str) -> StressFailure:
        return StressFailure(f"{self.protocol}: {message}\n--- transcript ---\n" + "\n".join(self.engine.recent))

    def send(self, line: str) -> None:
        self.engine.send_line(line)
        self.sent += 1

    def owe(self, what: str, within: float | None = BOUND, kind: str = "") -> Owed:
        owed = Owed(what, None if within is None else time.monotonic() + within, len(self.asked), kind or what.split()[0])
        self.owed.append(owed)
        self.asked.append(owed)
        return owed

    def settle(self, owed: Owed, answered: bool = True) -> None:
        """`owed` came (or, not `answered`, is no longer owed)."""
        if owed.deadline is not None and answered:
            self.longest_wait = max(self.longest_wait, time.monotonic() - (owed.deadline - BOUND))
        self.owed.remove(owed)
        (self.answered if answered else self.withdrawn).append(owed)

    def check(self, timeout: float = 0.0) -> None:
        """Take every line written so far (waiting up to `timeout` for the first), then deadlines."""
        line = self.engine.next_line(timeout)
        while line is not None:
            self.on_line(line)
            line = self.engine.next_line(0)
        now = time.monotonic()
        for owed in self.owed:
            if owed.deadline is not None and now > owed.deadline:
                raise self.fail(f"still waiting for {owed.what} {now - owed.deadline + BOUND:.1f} s on")

    def drain(self) -> None:
        """Wait until everything owed has come (each within its deadline)."""
        while self.owed:
            self.check(0.05)
            if self.owed and all(o.deadline is None for o in self.owed):
                raise self.fail(f"owed without being due: {[o.what for o in self.owed]}")

    def run(self, commands: int) -> None:
        try:
            self.start()
            while self.sent < commands:
                self.step()
                self.check()
                gap = self.rng.uniform(0, 0.005)
                if gap > 0.0005:
                    time.sleep(gap)  # the stimulus: random gaps between commands
            self.finish()
            self.drain()
            code = self.quit()
            if code != 0:
                raise self.fail(f"exit status {code} after quit")
        finally:
            self.engine.close()

    def quit(self) -> int | None:
        self.send("quit")
        try:
            return self.engine.process.wait(BOUND)
        except subprocess.TimeoutExpired:
            raise self.fail("did not exit after quit") from None

    # -- per protocol -------------------------------------------------------------------------

    def start(self) -> None:
        raise NotImplementedError

    def step(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        raise NotImplementedError

    def on_line(self, line: str) -> None:
        raise NotImplementedError


def random_game(rng: random.Random, plies: int) -> chess.Board:
    board = chess.Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    return board


# -- UCI ------------------------------------------------------------------------------------------


@dataclass
class UciSearch:
    board: chess.Board
    kind: str  # game, ponder, infinite
    owed: Owed
    limit_s: float


UCI_INFO = re.compile(r"info (depth \d+ .*|string .*)")
UCI_BEST = re.compile(r"bestmove (\S+)( ponder (\S+))?")


class UciDriver(Driver):
    protocol = "uci"

    def __init__(self, command: list[str], rng: random.Random) -> None:
        super().__init__(command, rng)
        self.position = chess.Board()
        self.searches: collections.deque[UciSearch] = collections.deque()
        self.readies: collections.deque[Owed] = collections.deque()
        self.notes: list[str] = []

    def start(self) -> None:
        self.send("uci")
        while self.engine.next_line(BOUND) != "uciok":
            pass

    def isready(self) -> None:
        self.send("isready")
        self.readies.append(self.owe("readyok"))

    def release(self, search: UciSearch, within: float = BOUND) -> None:
        search.owed.deadline = min(search.owed.deadline or float("inf"), time.monotonic() + within)

    def step(self) -> None:
        roll = self.rng.random()
        running = self.searches[-1] if self.searches else None
        if roll < 0.22:
            self.go()
        elif roll < 0.37:
            self.send("stop")
            if running is not None:
                self.release(running)
        elif roll < 0.47:
            self.send("ponderhit")
            if running is not None and running.kind == "ponder":
                running.kind = "game"
                self.release(running, running.limit_s + BOUND)
        elif roll < 0.67:
            self.isready()
        elif roll < 0.77:
            self.send(self.rng.choice(["setoption name Hash value 2", "setoption name Hash value 1",
                                       "setoption name MultiPV value 2", "setoption name MultiPV value 1",
                                       "setoption name Clear Hash", "setoption name Ponder value true",
                                       "setoption name Move Overhead value 5"]))
        elif roll < 0.95:
            self.position = random_game(self.rng, self.rng.randrange(0, 30))
            moves = " ".join(move.uci() for move in self.position.move_stack)
            self.send(f"position startpos moves {moves}" if moves else "position startpos")
        else:
            self.send("ucinewgame")

    def go(self) -> None:
        for search in self.searches:
            self.release(search)  # a go answers the running search first
        choice = self.rng.randrange(6)
        clock = self.rng.randrange(20, 400)
        if choice == 0:
            line, kind, limit = f"go depth {self.rng.randrange(1, 4)}", "game", 0.0
        elif choice == 1:
            movetime = self.rng.randrange(1, 40)
            line, kind, limit = f"go movetime {movetime}", "game", movetime / 1000
        elif choice == 2:
            line, kind, limit = f"go nodes {self.rng.randrange(50, 3000)}", "game", 0.0
        elif choice == 3:
            line, kind, limit = f"go wtime {clock} btime {clock} winc 0 binc 0", "game", clock / 1000
        elif choice == 4:
            line, kind, limit = f"go ponder wtime {clock} btime {clock}", "ponder", clock / 1000
        else:
            line, kind, limit = "go infinite", "infinite", 0.0
        self.send(line)
        owed = self.owe(f"bestmove for {line!r}", limit + BOUND if kind == "game" else None)
        self.searches.append(UciSearch(self.position.copy(), kind, owed, limit))

    def finish(self) -> None:
        self.send("stop")
        for search in self.searches:
            self.release(search)
        self.isready()

    def on_line(self, line: str) -> None:
        if line == "readyok":
            if not self.readies:
                raise self.fail("readyok without an isready")
            self.settle(self.readies.popleft())
            self.stats["readyok"] += 1
        elif match := UCI_BEST.fullmatch(line):
            if not self.searches:
                raise self.fail("bestmove without a go")
            search = self.searches.popleft()
            if search.owed.deadline is None:
                raise self.fail(f"early bestmove: {search.owed.what} was neither stopped nor hit")
            self.settle(search.owed)
            self.stats[f"bestmove ({search.kind})"] += 1
            legal = {move.uci() for move in search.board.legal_moves}
            if match.group(1) not in legal and not (match.group(1) == "(none)" and not legal):
                raise self.fail(f"illegal bestmove {match.group(1)} in {search.board.fen()}")
        elif UCI_INFO.fullmatch(line):
            if line.startswith("info string"):
                self.notes.append(line)
        else:
            raise self.fail(f"not UCI: {line!r}")


# -- XBoard ---------------------------------------------------------------------------------------

XB_THINKING = re.compile(r"\d+ -?\d+ \d+ \d+( .*)?")
XB_RESULT = re.compile(r"(1-0|0-1|1/2-1/2) \{[^}]+\}")


class XBoardDriver(Driver):
    """The engine keeps the game in CECP, so the driver mirrors it and checks every move on it."""

    protocol = "xboard"

    def __init__(self, command: list[str], rng: random.Random) -> None:
        super().__init__(command, rng)
        self.board = chess.Board()
        self.engine_side: chess.Color | None = chess.BLACK
        self.thinking: Owed | None = None
        self.move_may_come = False  # a cancel crossed a move that may be on its way
        self.analyzing = False
        self.pings: collections.deque[tuple[int, Owed]] = collections.deque()
        self.ping_ids = 0

    def start(self) -> None:
        self.send("xboard")
        self.send("protover 2")
        while self.engine.next_line(BOUND) != "feature done=1":
            pass
        self.send("post")
        self.send("st 0.05")
        self.new()

    def new(self) -> None:
        self.cancel("new")
        self.board = chess.Board()
        self.engine_side = chess.BLACK
        self.analyzing = False

    def ping(self) -> int:
        self.ping_ids += 1
        self.send(f"ping {self.ping_ids}")
        self.pings.append((self.ping_ids, self.owe(f"pong {self.ping_ids}", (0.05 + BOUND) if self.thinking else BOUND)))
        return self.ping_ids

    def sync(self) -> None:
        """Wait for a pong: the engine has read everything sent before it."""
        last = self.ping()
        while any(tag == last for tag, _ in self.pings):
            self.check(0.05)

    def cancel(self, command: str) -> None:
        """`new`, `force` or `exit` while the engine may be thinking: its move may already be
        on its way, so let it come (or not) before going on."""
        self.send(command)
        if self.thinking is not None:
            self.settle(self.thinking, answered=False)
            self.thinking = None
            self.move_may_come = True
            self.sync()
            self.move_may_come = False

    def think(self) -> None:
        if self.board.is_game_over():
            self.new()
        else:
            self.thinking = self.owe(f"a move in {self.board.fen()}", 0.05 + BOUND, kind="move")

    def step(self) -> None:
        roll = self.rng.random()
        our_turn = self.engine_side != self.board.turn and self.thinking is None
        if self.board.is_game_over() and self.thinking is None:
            self.new()
        elif roll < 0.3 and our_turn:
            move = self.rng.choice(list(self.board.legal_moves))
            self.send(f"usermove {move.uci()}")
            self.board.push(move)
            if self.engine_side == self.board.turn and not self.analyzing:
                self.think()
        elif roll < 0.4 and self.thinking is None and not self.analyzing:
            self.send("go")
            self.engine_side = self.board.turn
            self.think()
        elif roll < 0.6:
            self.ping()
        elif roll < 0.65:
            self.send("?")
        elif roll < 0.7:
            self.cancel("force")
            self.engine_side = None
        elif roll < 0.75:
            self.new()
        elif roll < 0.8:
            self.send(self.rng.choice(["hard", "easy"]))
        elif roll < 0.85:
            self.send(self.rng.choice(["post", "nopost", "time 500", "otim 500", "st 0.02", "st 0.1",
                                       "option MultiPV=2", "option MultiPV=1"]))
        elif roll < 0.9 and self.thinking is None:
            if self.analyzing:
                self.cancel("exit")
                self.analyzing = False
            else:
                self.send("analyze")
                self.analyzing = True
                self.engine_side = None
        elif roll < 0.95 and self.engine_side is None and self.board.move_stack:
            self.send("undo")
            self.board.pop()
        else:
            self.ping()

    def finish(self) -> None:
        self.cancel("force")
        self.ping()

    def on_line(self, line: str) -> None:
        words = line.split()
        if words[:1] == ["pong"]:
            if not self.pings or words[1:] != [str(self.pings[0][0])]:
                raise self.fail(f"{line!r} out of order; expected pong {self.pings[0][0] if self.pings else None}")
            self.settle(self.pings.popleft()[1])
            self.stats["pong"] += 1
        elif words[:1] == ["move"]:
            if self.thinking is None and not self.move_may_come:
                raise self.fail(f"a move nobody asked for: {line!r}")
            try:
                self.board.push(self.board.parse_uci(words[1]))
            except (ValueError, IndexError):
                raise self.fail(f"illegal move {line!r} in {self.board.fen()}") from None
            self.stats["move"] += 1
            if self.thinking is not None:
                self.settle(self.thinking)
                self.thinking = None
            self.move_may_come = False
        elif XB_THINKING.fullmatch(line) or XB_RESULT.fullmatch(line) or line.startswith("Hint: "):
            pass
        else:
            raise self.fail(f"unexpected CECP output: {line!r}")


# -- CNP ------------------------------------------------------------------------------------------


@dataclass
class CnpRequest:
    method: str
    owed: Owed
    target: int | None = None  # stop/ponderHit/cancel: the search's id
    kind: str = ""  # search: game, ponder, infinite
    limit_s: float = 0.0
    answered_at: int | None = None  # index of the response line
    refused: bool = False
    stopped: bool = False
    hit: bool = False
    cancelled: bool = False
    sent_at: int = 0  # how many lines had been read when it was sent


class CnpDriver(Driver):
    protocol = "cnp"

    def __init__(self, command: list[str], rng: random.Random) -> None:
        super().__init__(command, rng)
        self.requests: dict[int, CnpRequest] = {}
        self.ids = 0
        self.read = 0
        self.searches: list[int] = []

    def request(self, method: str, params: dict[str, Any], within: float | None = BOUND, **extra: Any) -> CnpRequest:
        self.ids += 1
        self.send(json.dumps({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params}))
        request = CnpRequest(method, self.owe(f"the response to {method} {self.ids}", within, kind="response"),
                             sent_at=self.read, **extra)
        self.requests[self.ids] = request
        return request

    def start(self) -> None:
        self.request("engine/hello", {"protocol": "cnp/1"})

    def step(self) -> None:
        roll = self.rng.random()
        live = [k for k in self.searches if not self.requests[k].refused and self.requests[k].answered_at is None]
        if live and self.rng.random() < 0.85:
            target = live[0]  # most likely the one running
        else:
            target = self.rng.choice(self.searches) if self.searches else 0
        search = self.requests.get(target)
        if roll < 0.3:
            self.search()
        elif roll < 0.45 and search is not None:
            search.stopped = True
            search.owed.deadline = min(search.owed.deadline or float("inf"), time.monotonic() + BOUND)
            self.request("engine/stop", {"id": target}, target=target)
        elif roll < 0.55 and search is not None:
            if search.kind == "ponder" and not search.hit:
                search.hit = True
                search.owed.deadline = time.monotonic() + search.limit_s + BOUND
            self.request("engine/ponderHit", {"id": target}, target=target)
        elif roll < 0.6 and search is not None:
            search.cancelled = True
            search.owed.deadline = min(search.owed.deadline or float("inf"), time.monotonic() + BOUND)
            self.request("engine/cancel", {"id": target}, target=target)
        elif roll < 0.75:
            options = self.rng.choice([{"Hash": 1}, {"Hash": 2}, {"MultiPV": 2}, {"MultiPV": 1}, {"Clear Hash": None}])
            self.request("engine/setOptions", {"options": options})
        elif roll < 0.85:
            self.request("engine/newGame", {})
        elif roll < 0.9:
            self.request("engine/hello", {})
        else:
            self.send(self.rng.choice(['{"jsonrpc":"2.0","id":', "not json", '{"jsonrpc":"2.0","method":"engine/stop"}']))
            if self.engine.recent[-1].endswith('engine/stop"}'):
                return  # a notification: no response
            self.ids += 1
            self.requests[-self.ids] = CnpRequest("junk", self.owe("the error for a junk line", kind="response"),
                                                  sent_at=self.read)

    def search(self) -> None:
        board = random_game(self.rng, self.rng.randrange(0, 20))
        position = {"moves": [move.uci() for move in board.move_stack]}
        choice = self.rng.randrange(6)
        clock = self.rng.randrange(50, 400)
        limit, kind = 0.0, "game"
        limits: dict[str, Any] = {}
        if choice == 0:
            limits = {"depth": self.rng.randrange(1, 4)}
        elif choice == 1:
            limits = {"timeMs": self.rng.randrange(1, 40)}
            limit = limits["timeMs"] / 1000
        elif choice == 2:
            limits = {"clock": {"whiteMs": clock, "blackMs": clock}}
            limit = clock / 1000
        elif choice == 3:
            limits, kind, limit = {"clock": {"whiteMs": clock, "blackMs": clock}}, "ponder", clock / 1000
        elif choice == 4:
            limits, kind = {"infinite": True}, "infinite"
        else:
            limits = {"nodes": self.rng.randrange(50, 3000)}
        params: dict[str, Any] = {"position": position, "limits": limits, "info": self.rng.random() < 0.5}
        if kind == "ponder":
            params["ponder"] = True
        request = self.request("engine/search", params, limit + BOUND if kind == "game" else None,
                               kind=kind, limit_s=limit)
        self.searches.append(self.ids)
        del request

    def finish(self) -> None:
        for search_id in self.searches:
            search = self.requests.get(search_id)
            if search is not None and search.answered_at is None:
                search.stopped = True
                search.owed.deadline = time.monotonic() + BOUND
                self.request("engine/stop", {"id": search_id}, target=search_id)

    def quit(self) -> int | None:
        self.request("engine/shutdown", {})
        self.drain()
        try:
            return self.engine.process.wait(BOUND)
        except subprocess.TimeoutExpired:
            raise self.fail("did not exit after engine/shutdown") from None

    def answered_before(self, search_id: int | None, index: int) -> bool:
        search = self.requests.get(search_id) if search_id is not None else None
        return search is None or search.refused or (search.answered_at is not None and search.answered_at < index)

    def on_line(self, line: str) -> None:
        index = self.read
        self.read += 1
        try:
            message = json.loads(line)
        except ValueError:
            raise self.fail(f"not JSON: {line!r}") from None
        if message.get("method") == "engine/info":
            search = self.requests.get(message["params"]["id"])
            if search is None or search.method != "engine/search" or search.answered_at is not None:
                raise self.fail(f"info for no running search: {line}")
            return
        request_id = message.get("id")
        if request_id is None:
            junk = next((k for k, r in self.requests.items() if r.method == "junk"), None)
            if junk is None or "error" not in message:
                raise self.fail(f"a response to nothing: {line}")
            self.settle(self.requests.pop(junk).owed)
            return
        request = self.requests.get(request_id)
        if request is None or request.answered_at is not None:
            raise self.fail(f"a response to nothing or a second one: {line}")
        request.answered_at = index
        self.settle(request.owed)
        error = message.get("error")
        code = error["code"] if error else None
        self.stats[f"{request.method} {'error ' + str(code) if code else 'result'}"] += 1
        if request.method == "engine/search":
            self.check_search(request, message, code)
        elif request.method in ("engine/stop", "engine/cancel", "engine/ponderHit"):
            target = self.requests.get(request.target) if request.target is not None else None
            gone = self.answered_before(request.target, index)
            if code is None and request.method != "engine/ponderHit" and not (target and target.answered_at is not None):
                raise self.fail(f"{request.method} acknowledged before its search answered: {line}")
            if code == -32002 and not gone:
                raise self.fail(f"no such search, but it is running: {line}")
            if code not in (None, -32002, -32003):
                raise self.fail(f"unexpected error: {line}")
        elif request.method == "engine/newGame" and code == -32001:
            self.check_busy(request_id, index, line)
        elif code is not None and request.method != "junk":
            raise self.fail(f"unexpected error: {line}")

    def check_search(self, request: CnpRequest, message: dict[str, Any], code: int | None) -> None:
        if code == -32001:
            request.refused = True
            self.check_busy(message["id"], request.answered_at or 0, json.dumps(message))
            return
        if code == -32800:
            if not request.cancelled:
                raise self.fail(f"cancelled without a cancel: {message}")
            return
        if code is not None:
            raise self.fail(f"search failed: {message}")
        result = message["result"]
        early = (request.kind == "ponder" and not (request.hit or request.stopped)) or (
            request.kind == "infinite" and not request.stopped)
        if early and result.get("stopped") != "maxTime":
            raise self.fail(f"early answer of a {request.kind} search: {message}")

    def check_busy(self, request_id: int, index: int, line: str) -> None:
        """Busy is right only if an earlier search was still running when this was read."""
        running = [k for k in self.searches if k < request_id and not self.answered_before(k, index)]
        if not running:
            raise self.fail(f"busy, but no search was running: {line}")


DRIVERS: dict[str, type[Driver]] = {"uci": UciDriver, "xboard": XBoardDriver, "cnp": CnpDriver}


def stress(protocol: str, commands: int, seed: int, command: list[str] | None = None) -> Driver:
    """Run one driver to the end; raises StressFailure on the first broken invariant."""
    driver = DRIVERS[protocol](command or engine_command(), random.Random(seed))
    driver.run(commands)
    return driver


def engine_command() -> list[str]:
    """This Python's `cb-async`, so the stress runs the code next to it."""
    return [sys.executable, "-m", "cb_async"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--protocol", choices=[*DRIVERS, "all"], default="all")
    parser.add_argument("--commands", type=whole_number(1), default=10_000, help="commands per protocol (default 10000)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engine", help="the engine command (default: this cb-async)")


def run(args: argparse.Namespace) -> int:
    command = None
    if args.engine:
        try:
            command = shlex.split(args.engine)
        except ValueError as error:
            raise UsageError(f"--engine {args.engine!r}: {error}") from None
        if not command or shutil.which(command[0]) is None:
            raise UsageError(f"--engine: no such program: {args.engine!r}")
    status = 0
    for protocol in DRIVERS if args.protocol == "all" else [args.protocol]:
        started = time.monotonic()
        try:
            driver = stress(protocol, args.commands, args.seed, command)
        except StressFailure as failure:
            print(f"{protocol}: FAILED\n{failure}", flush=True)
            status = 1
            continue
        print(f"{protocol}: {driver.sent} commands in {time.monotonic() - started:.1f} s, all invariants held; "
              f"longest wait for an answer past its due time {driver.longest_wait * 1000:.0f} ms", flush=True)
        print("  " + ", ".join(f"{key}: {count}" for key, count in sorted(driver.stats.items())), flush=True)
    return status


def main(argv: list[str] | None = None) -> int:
    return command_line("python3 dev.py stress", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
