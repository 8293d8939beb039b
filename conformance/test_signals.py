"""Bounds and signals on the real process: the 1 MiB line cap, SIGTERM, SIGINT and a dead worker.

The search worker is the engine's child process (found through /proc); killing it with
SIGKILL mid-search must not leave the GUI waiting: the search is answered as if stopped.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time

import chess
import pytest

from cb_async.framing import MAX_LINE_BYTES
from cb_async.tools.procinfo import search_worker
from conformance.engine_process import EngineProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals and /proc: Linux")

OVER = MAX_LINE_BYTES + 1


def worker_of(engine: EngineProcess, timeout: float = 5.0) -> int:
    """The search worker's pid (see `procinfo.search_worker`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = search_worker(engine.process.pid)
        if found is not None:
            return found
        time.sleep(0.01)
    raise AssertionError("the engine has no search worker")


def gone(pid: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().split(") ")[1].startswith("Z"):
                    return True  # a zombie: dead, not yet reaped by its parent
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.01)
    return False


# -- the line cap ---------------------------------------------------------------------------------


def test_each_protocol_answers_a_line_over_1_mib_and_goes_on() -> None:
    with EngineProcess("--protocol", "uci") as engine:
        engine.send_raw(b"x" * OVER + b"\nisready\n")
        engine.expect(f"info string ignored a line of {OVER} bytes: over the 1 MiB limit")
        engine.expect("readyok")
    with EngineProcess("--protocol", "xboard") as engine:
        engine.send_raw(b"x" * OVER + b"\nping 5\n")
        engine.expect(f"Error \\(line too long\\): {OVER} bytes")
        engine.expect("pong 5")
    with EngineProcess("--protocol", "cnp") as engine:
        engine.send_raw(b"{" + b" " * OVER + b'\n{"jsonrpc":"2.0","id":1,"method":"engine/newGame"}\n')
        error = json.loads(engine.expect(r"\{.*\}").text)
        assert error["id"] is None and error["error"]["code"] == -32600
        assert json.loads(engine.expect(r"\{.*\}").text) == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    with EngineProcess("--protocol", "uci") as engine:
        engine.send_raw(b"\xff\xfe is\xc3ready\nisready\n")
        engine.expect(r"info string unknown command: .*\ufffd.*")
        engine.expect("readyok")


# -- SIGTERM and SIGINT ---------------------------------------------------------------------------


@pytest.mark.parametrize("protocol,start", [("uci", "go infinite"), ("xboard", "analyze")])
def test_sigterm_stops_the_search_and_exits_cleanly(protocol: str, start: str) -> None:
    with EngineProcess("--protocol", protocol) as engine:
        if protocol == "xboard":
            engine.send("protover 2")
            engine.expect("feature done=1", skip=r"feature .*")
            engine.send("post")
        engine.send(start)
        engine.read_line(10)  # searching: its first iteration is out
        worker = worker_of(engine)
        engine.signal(signal.SIGTERM)
        assert engine.wait_exit(5) == 0
        rest = engine.remaining_output()
        assert all(not line.startswith(("bestmove", "move")) for line in rest), rest
        assert gone(worker), "the search worker outlived the engine"


@pytest.mark.parametrize("first,answer", [("uci", "uciok"), ("xboard\nprotover 2", "feature done=1")])
def test_sigterm_right_after_the_handshake_leaves_nothing_on_stderr(first: str, answer: str) -> None:
    """PyChess checks every engine it knows at start-up: the handshake, then `quit` and SIGTERM
    at once, while the search worker may still be starting; neither may print a traceback."""
    for _ in range(3):
        with EngineProcess() as engine:
            engine.send(first)
            engine.expect(answer, skip=r"(id|option|feature) .*")
            engine.send("quit")
            engine.signal(signal.SIGTERM)
            # 0, or the signal itself when it lands while `quit` already ends the engine.
            assert engine.wait_exit(5) in (0, -signal.SIGTERM)
            engine.remaining_output()
        assert not [line for line in engine.stderr_lines if line.strip()], engine.stderr_lines


def test_sigterm_with_a_cnp_search_running_exits_cleanly() -> None:
    with EngineProcess("--protocol", "cnp") as engine:
        engine.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "engine/search", "params": {}}))
        engine.expect(r'\{"jsonrpc":"2.0","method":"engine/info".*', timeout=10)
        engine.signal(signal.SIGTERM)
        assert engine.wait_exit(5) == 0
        for line in engine.remaining_output():
            message = json.loads(line)  # whatever comes out is whole, valid JSON
            assert message["jsonrpc"] == "2.0"


def test_sigint_does_not_kill_an_xboard_engine() -> None:
    with EngineProcess() as engine:  # auto-detected XBoard: the handler follows the protocol
        engine.send("xboard")
        engine.send("protover 2")
        engine.expect("feature done=1", skip=r"feature .*")
        engine.send("new")
        engine.send("st 0.3")
        engine.send("usermove e2e4")
        engine.signal(signal.SIGINT)
        engine.signal(signal.SIGINT)
        line = engine.expect(r"move \S+", timeout=10)
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(line.text.split()[1]) in board.legal_moves
        engine.send("ping 9")
        engine.expect("pong 9")
        assert engine.process.poll() is None


# -- a dead worker --------------------------------------------------------------------------------


def test_uci_a_killed_worker_is_answered_as_stopped_and_restarted() -> None:
    with EngineProcess("--protocol", "uci") as engine:
        engine.send("go wtime 600000 btime 600000")
        engine.expect(r"info depth .*", timeout=10)
        old = worker_of(engine)
        os.kill(old, signal.SIGKILL)
        line = engine.expect(r"bestmove \S+( ponder \S+)?", timeout=5, skip=r"info .*")
        assert chess.Move.from_uci(line.text.split()[1]) in chess.Board().legal_moves
        engine.send("isready")
        engine.expect("readyok", skip=r"info .*")
        assert gone(old)
        new = worker_of(engine)
        assert new != old
        engine.send("go depth 3")
        engine.expect(r"bestmove \S+( ponder \S+)?", timeout=20, skip=r"info .*")


def test_uci_a_killed_worker_under_go_infinite_still_answers_the_stop() -> None:
    with EngineProcess("--protocol", "uci") as engine:
        engine.send("go infinite")
        engine.expect(r"info depth .*", timeout=10)
        os.kill(worker_of(engine), signal.SIGKILL)
        engine.send("isready")
        engine.expect("readyok", skip=r"info .*")  # infinite: no bestmove before the stop
        engine.send("stop")
        engine.expect(r"bestmove \S+( ponder \S+)?", timeout=5, skip=r"info .*")


def test_xboard_a_killed_worker_still_gives_a_move() -> None:
    with EngineProcess("--protocol", "xboard") as engine:
        engine.send("protover 2")
        engine.expect("feature done=1", skip=r"feature .*")
        engine.send("post")
        engine.send("new")
        engine.send("st 600")
        engine.send("usermove e2e4")
        engine.expect(r"\d+ .*", timeout=10)
        os.kill(worker_of(engine), signal.SIGKILL)
        line = engine.expect(r"move \S+", timeout=5, skip=r"\d+ .*|telluser .*|#.*")
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(line.text.split()[1]) in board.legal_moves
        engine.send("ping 2")
        engine.expect("pong 2", skip=r"telluser .*|#.*")


def test_cnp_a_killed_worker_still_gets_a_response() -> None:
    with EngineProcess("--protocol", "cnp") as engine:
        engine.send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "engine/search",
                                "params": {"limits": {"timeMs": 600000}, "info": True}}))
        engine.expect(r'\{"jsonrpc":"2.0","method":"engine/info".*', timeout=10)
        os.kill(worker_of(engine), signal.SIGKILL)
        while True:
            message = json.loads(engine.expect(r"\{.*\}", timeout=5).text)
            if message.get("id") == 7:
                break
            assert message.get("method") == "engine/info"
        assert chess.Move.from_uci(message["result"]["bestMove"]) in chess.Board().legal_moves
        engine.send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "engine/search", "params": {"limits": {"depth": 2}, "info": False}}))
        assert json.loads(engine.expect(r"\{.*\}", timeout=20).text)["id"] == 8


# -- an engine that dies ----------------------------------------------------------------------------


def test_the_worker_of_a_killed_engine_ends_itself() -> None:
    """SIGKILL closes no pipe the search would notice before its next write: the worker still
    ends (it watches its parent), instead of searching on for nobody."""
    with EngineProcess("--protocol", "uci") as engine:
        engine.send("go infinite")
        engine.expect(r"info depth 3 .*", timeout=10, skip=r"info .*")
        worker = worker_of(engine)
        engine.process.kill()
        engine.process.wait(5)
        assert gone(worker, timeout=5)


HOST = """
import asyncio, os, sys
import chess, chess.engine
import cb_async

async def main():
    async with cb_async.Engine() as engine:
        analysis = await engine.analysis(chess.Board())
        async for info in analysis:
            if info.get("depth", 0) >= 3:
                print(engine._runner._process.pid, flush=True)
                await asyncio.sleep(3600)

if __name__ == "__main__":
    asyncio.run(main())
"""


def test_the_worker_of_a_crashed_host_program_ends_itself(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess

    script = tmp_path / "host.py"
    script.write_text(HOST)
    host = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        worker = int(host.stdout.readline())
        host.kill()
        host.wait(5)
        assert gone(worker, timeout=5)
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()
