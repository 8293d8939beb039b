"""Faults around the engine, injected into the real `cb-async` for UCI, XBoard and CNP.

Each fault has a promise the engine keeps, checked here: the search is answered in time (or
the engine exits cleanly, within a second, when no one can read it), no process of the engine
outlives it, nothing on stderr is a traceback, and the next game plays.

- the output closed while a search runs (a GUI that died, `cb-async | head`);
- stderr closed by its reader;
- the log on a full disk (`--log /dev/full`);
- the search worker stopped (SIGSTOP) or killed (SIGKILL) at the start, in the middle and at
  the end of a search, and while pondering;
- the host short of memory (`ulimit -v`) when a GUI asks for a large `Hash`.

`docs/architecture.md` ("What happens when") lists these with what the engine does.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import chess
import pytest

from cb_async.session import STALL_GRACE
from cb_async.tools.procinfo import children, search_worker
from conformance.engine_process import EngineProcess, engine_command

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, /proc and rlimits: Linux")

PROTOCOLS = ("uci", "xboard", "cnp")
#: The movetime of the timed searches, and how late an answer may come on this loaded machine
#: on top of the time and the grace (the figures are `tools/faults` measurements, not these).
MOVETIME_MS = 300
SLACK = 1.5


class Player:
    """One protocol's way to play: the same few steps in UCI, XBoard and CNP words."""

    def __init__(self, engine: EngineProcess, protocol: str) -> None:
        self.engine = engine
        self.protocol = protocol
        self._id = 0
        self.board = chess.Board()

    # -- set-up ---------------------------------------------------------------------------------

    def open(self) -> None:
        engine = self.engine
        if self.protocol == "uci":
            engine.send("uci")
            engine.expect("uciok", skip=r"id .*|option .*")
            engine.send("isready")
            engine.expect("readyok")
        elif self.protocol == "xboard":
            engine.send("xboard", "protover 2")
            engine.expect("feature done=1", skip=r"feature .*")
            engine.send("post", "easy")
        else:
            self.request("engine/hello")

    def request(self, method: str, params: dict[str, object] | None = None, answer: bool = True) -> int:
        self._id += 1
        message: dict[str, object] = {"jsonrpc": "2.0", "id": self._id, "method": method}
        if params is not None:
            message["params"] = params
        self.engine.send(json.dumps(message))
        if answer:
            self.cnp_answer(self._id, 10)
        return self._id

    def cnp_answer(self, request: int, timeout: float) -> dict[str, object]:
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.engine.expect(r"\{.*\}", timeout=max(0.0, deadline - time.monotonic())).text)
            assert message["jsonrpc"] == "2.0"
            if message.get("id") == request:
                assert "error" not in message, message
                return dict(message["result"])
            assert message.get("method") == "engine/info" or message.get("result") == {}, message

    def set_hash(self, megabytes: int) -> None:
        if self.protocol == "uci":
            self.engine.send(f"setoption name Hash value {megabytes}")
        elif self.protocol == "xboard":
            self.engine.send(f"memory {megabytes}")
        else:
            self.request("engine/setOptions", {"options": {"Hash": megabytes}})

    # -- searches -------------------------------------------------------------------------------

    def analyse(self) -> None:
        """A search with no end of its own (it writes infos as it goes)."""
        if self.protocol == "uci":
            self.engine.send("position startpos", "go infinite")
        elif self.protocol == "xboard":
            self.engine.send("new", "force", "analyze")
        else:
            self.search_id = self.request("engine/search", {"limits": {}, "info": True}, answer=False)

    def timed(self, milliseconds: int) -> float:
        """A game search of `milliseconds` from the start position; when it was sent."""
        self.board = chess.Board()
        if self.protocol == "uci":
            return self.engine.send("position startpos", f"go movetime {milliseconds}")
        if self.protocol == "xboard":
            self.engine.send("new", f"st {milliseconds / 1000}", "ping 1")
            self.engine.expect("pong 1")  # the new game is set up: the fault strikes the search
            return self.engine.send("go")
        self.search_id = self.request("engine/search", {"limits": {"timeMs": milliseconds}, "info": True},
                                      answer=False)
        return time.monotonic()

    def ponder(self) -> None:
        """Ponder on the reply 1. e4 e5 with a clock of 2 s for the move after the hit."""
        self.board = chess.Board()
        for move in ("e2e4", "e7e5"):
            self.board.push_uci(move)
        if self.protocol == "uci":
            self.engine.send("position startpos moves e2e4 e7e5", "go ponder wtime 2000 btime 2000")
        elif self.protocol == "xboard":  # the engine plays 1. e4 (d4 ...), then ponders the reply it expects
            self.engine.send("new", "hard", "level 0 0:02 0", "usermove e2e4")
            self.board = chess.Board()
            self.board.push_uci("e2e4")
            self.board.push(self.answer(10))
        else:
            self.search_id = self.request("engine/search", {
                "position": {"moves": ["e2e4", "e7e5"]}, "ponder": True, "info": True,
                "limits": {"clock": {"whiteMs": 2000, "blackMs": 2000}}}, answer=False)

    def ponder_hit(self) -> float:
        if self.protocol == "uci":
            return self.engine.send("ponderhit")
        if self.protocol == "xboard":  # not a hit: a reply it did not expect, on a clock
            reply = next(m for m in self.board.legal_moves if m.uci() != "a7a6")
            self.board.push(reply)
            return self.engine.send("time 200", "otim 200", f"usermove {reply.uci()}")
        self.request("engine/ponderHit", {"id": self.search_id}, answer=False)
        return time.monotonic()

    def stop(self) -> float:
        if self.protocol == "uci":
            return self.engine.send("stop")
        if self.protocol == "xboard":
            return self.engine.send("exit")
        self.engine.send(json.dumps({"jsonrpc": "2.0", "id": 900, "method": "engine/stop",
                                     "params": {"id": self.search_id}}))
        return time.monotonic()

    def answer(self, timeout: float) -> chess.Move:
        """The answer of the running search, which must be a legal move."""
        if self.protocol == "uci":
            line = self.engine.expect(r"bestmove \S+( ponder \S+)?", timeout=timeout, skip=r"info .*")
            move = chess.Move.from_uci(line.text.split()[1])
        elif self.protocol == "xboard":
            line = self.engine.expect(r"move \S+", timeout=timeout, skip=r"-?\d+ .*|telluser .*|#.*|Hint: .*")
            move = self.board.parse_uci(line.text.split()[1])
        else:
            result = self.cnp_answer(self.search_id, timeout)
            move = chess.Move.from_uci(str(result["bestMove"]))
        assert move in self.board.legal_moves, move
        return move

    def wait_searching(self) -> None:
        """Until the running search has written its first iteration."""
        pattern = {"uci": r"info depth .*", "xboard": r"-?\d+ .*", "cnp": r'\{"jsonrpc":"2.0","method":"engine/info".*'}
        self.engine.expect(pattern[self.protocol], timeout=10, skip=r"info string .*|#.*|telluser .*|feature .*")

    def next_game(self) -> None:
        """A new game whose first search answers with a legal move."""
        if self.protocol == "uci":
            self.engine.send("ucinewgame", "position startpos moves e2e4", "go depth 2")
            self.board = chess.Board()
            self.board.push_uci("e2e4")
        elif self.protocol == "xboard":
            self.engine.send("new", "sd 2", "usermove e2e4")
            self.board = chess.Board()
            self.board.push_uci("e2e4")
        else:
            self.request("engine/newGame")
            self.board = chess.Board()
            self.board.push_uci("e2e4")
            self.search_id = self.request("engine/search", {"position": {"moves": ["e2e4"]}, "limits": {"depth": 2}},
                                          answer=False)
        self.answer(20)

    def quit(self) -> None:
        if self.protocol == "cnp":
            self.engine.send(json.dumps({"jsonrpc": "2.0", "id": 999, "method": "engine/shutdown"}))
        else:
            self.engine.send("quit")


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children(todo.pop()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def gone(pids: set[int], timeout: float = 5.0) -> set[int]:
    """The processes among `pids` still alive (not zombies) after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        alive = set()
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    if not stat.read().split(") ")[1].startswith("Z"):
                        alive.add(pid)
            except OSError:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.02)


def the_worker(engine: EngineProcess, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = search_worker(engine.process.pid)
        if found is not None:
            return found
        time.sleep(0.005)
    raise AssertionError("the engine has no search worker")


@contextmanager
def playing(protocol: str, *args: str, prefix: tuple[str, ...] = ()) -> Iterator[tuple[EngineProcess, Player]]:
    """The engine with its game open; at the end it quits, exits 0, leaves no process behind
    and wrote no traceback."""
    with EngineProcess("--protocol", protocol, *args, prefix=prefix) as engine:
        player = Player(engine, protocol)
        player.open()
        yield engine, player
        family = descendants(engine.process.pid)
        player.quit()
        assert engine.wait_exit(5) == 0
        assert gone(family) == set(), "processes of the engine outlived it"
        assert not any("Traceback" in line for line in engine.stderr_lines), engine.stderr_lines


# -- the output closed --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_closed_output_ends_the_engine_and_its_worker_within_a_second(protocol: str) -> None:
    process = subprocess.Popen([*engine_command(), "--protocol", protocol], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    try:
        start = {"uci": b"go infinite\n", "xboard": b"xboard\nprotover 2\npost\nanalyze\n",
                 "cnp": b'{"jsonrpc":"2.0","id":1,"method":"engine/search","params":{"limits":{}}}\n'}[protocol]
        process.stdin.write(start)
        marker = {"uci": b"info depth", "xboard": b"1 ", "cnp": b"engine/info"}[protocol]
        while marker not in process.stdout.readline():
            pass
        family = descendants(process.pid)
        assert family, "no worker"
        process.stdout.close()
        closed_at = time.monotonic()
        assert process.wait(5) == 0
        # Within a second (about 30 ms on an idle machine); the test allows for a loaded one.
        assert time.monotonic() - closed_at < 1.0 + SLACK
        assert gone(family) == set()
        errors = process.stderr.read().decode().splitlines()
        assert errors == ["cb-async: the output was closed: ending"]
    finally:
        process.kill()
        process.wait()
        for stream in (process.stdin, process.stderr):
            stream.close()


# -- stderr closed, the log on a full disk -------------------------------------------------------


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_closed_stderr_never_matters(protocol: str) -> None:
    with playing(protocol) as (engine, player):
        assert engine.process.stderr is not None
        engine.process.stderr.close()  # its reader thread sees the end; the engine's writes fail
        if protocol == "cnp":  # a notification is noted on stderr: a write that now fails
            engine.send('{"jsonrpc":"2.0","method":"engine/newGame"}')
        player.timed(100)
        player.answer(5)
        player.next_game()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_log_on_a_full_disk_goes_off_and_the_game_goes_on(protocol: str) -> None:
    with playing(protocol, "--log", "/dev/full") as (engine, player):
        player.timed(100)
        player.answer(5)
        player.next_game()
    assert engine.stderr_lines == ["cb-async: the log /dev/full is off: No space left on device; the engine plays on"]


# -- the worker stopped or killed ----------------------------------------------------------------

#: When the fault strikes: as the search starts, after its first iteration, near its deadline.
MOMENTS = ("start", "middle", "end")


def _strike(engine: EngineProcess, player: Player, moment: str, sent_at: float, number: int) -> int:
    worker = the_worker(engine)
    if moment == "middle":
        player.wait_searching()
    elif moment == "end":
        time.sleep(max(0.0, sent_at + (MOVETIME_MS - 60) / 1000 - time.monotonic()))
    os.kill(worker, number)
    return worker


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_stopped_worker_is_answered_for_by_the_deadline_and_replaced(protocol: str, moment: str) -> None:
    with playing(protocol) as (engine, player):
        the_worker(engine)
        sent_at = player.timed(MOVETIME_MS)
        worker = _strike(engine, player, moment, sent_at, signal.SIGSTOP)
        player.answer(MOVETIME_MS / 1000 + STALL_GRACE + SLACK)
        assert gone({worker}) == set(), "the stopped worker was not ended"
        if protocol == "uci":
            assert any(line.text.startswith("info string the search process did not answer")
                       for line in engine.transcript), "no info string says why"
        player.next_game()
        assert the_worker(engine) != worker


@pytest.mark.parametrize("moment", MOMENTS)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_killed_worker_is_answered_for_and_replaced(protocol: str, moment: str) -> None:
    with playing(protocol) as (engine, player):
        the_worker(engine)
        sent_at = player.timed(MOVETIME_MS)
        worker = _strike(engine, player, moment, sent_at, signal.SIGKILL)
        player.answer(MOVETIME_MS / 1000 + STALL_GRACE + SLACK)
        player.next_game()
        assert the_worker(engine) != worker


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_worker_stopped_while_pondering_answers_after_the_hit(protocol: str) -> None:
    with playing(protocol) as (engine, player):
        the_worker(engine)
        player.ponder()
        if protocol != "xboard":  # XBoard shows no thinking while pondering
            player.wait_searching()
        worker = the_worker(engine)
        os.kill(worker, signal.SIGSTOP)
        player.ponder_hit()
        player.answer(2.0 + STALL_GRACE + SLACK)
        assert gone({worker}) == set()
        player.next_game()


@pytest.mark.parametrize("protocol", ("uci", "cnp"))
def test_a_worker_stopped_during_an_analysis_still_answers_the_stop(protocol: str) -> None:
    with playing(protocol) as (engine, player):
        player.analyse()
        player.wait_searching()
        worker = the_worker(engine)
        os.kill(worker, signal.SIGSTOP)
        player.stop()
        player.answer(STALL_GRACE + SLACK)
        assert gone({worker}) == set()
        player.next_game()


# -- memory --------------------------------------------------------------------------------------


#: The engine under `ulimit -v` 1 GiB (the shell `exec`s it: the engine keeps the shell's pid).
UNDER_1_GIB = ("sh", "-c", 'ulimit -v 1048576 && exec "$@"', "sh")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_hash_the_machine_cannot_give_is_reduced_and_said(protocol: str) -> None:
    said = r"Hash 4096 MB is more than this machine can give now \(about \d+ MB\): using \d+ MB"
    with playing(protocol, prefix=UNDER_1_GIB) as (engine, player):
        player.set_hash(4096)
        if protocol == "uci":
            engine.expect(f"info string {said}")
        elif protocol == "xboard":
            engine.expect(f"telluser {said}")
        player.next_game()
    if protocol == "cnp":  # CNP has no message of its own: a note on stderr
        assert [line for line in engine.stderr_lines if re.fullmatch(f"cb-async: {said}", line)]


def test_a_cnp_search_with_a_stopped_worker_still_answers_at_its_max_time() -> None:
    with playing("cnp", "--max-time-ms", "500") as (engine, player):
        player.analyse()  # no limit of its own: only the node's bound ends it
        player.wait_searching()
        worker = the_worker(engine)
        os.kill(worker, signal.SIGSTOP)
        result = player.cnp_answer(player.search_id, 0.5 + STALL_GRACE + SLACK)
        assert result["stopped"] == "maxTime"
        assert chess.Move.from_uci(str(result["bestMove"])) in chess.Board().legal_moves
        assert gone({worker}) == set()
        player.next_game()


def test_an_xboard_move_on_a_clock_with_a_stopped_worker_comes_before_the_flag() -> None:
    with playing("xboard") as (engine, player):
        the_worker(engine)
        engine.send("new", "level 0 0:10 0", "time 150", "otim 1000", "ping 3")
        engine.expect("pong 3")
        player.board = chess.Board()
        player.board.push_uci("e2e4")
        sent_at = engine.send("usermove e2e4")  # 1.5 s on the engine's clock
        player.wait_searching()
        worker = the_worker(engine)
        os.kill(worker, signal.SIGSTOP)
        player.answer(1.5 + SLACK)
        answered = engine.transcript[-1].at
        assert answered - sent_at < 1.5, "the answer came after the engine's flag fell"
        assert gone({worker}) == set()
        player.next_game()
