"""Junk into the running engine in each protocol, then proof that it still answers and plays.

Random bytes (invalid UTF-8, NULs, carriage returns), lines of exactly 1 MiB and of 2 MiB,
broken JSON: each protocol must answer each with at most its own complaint, then `isready`,
`ping` or a CNP search must still work and the move must be legal.
"""

from __future__ import annotations

import json
import random
import re

import chess

from cb_async.framing import MAX_LINE_BYTES
from conformance.engine_process import EngineProcess


def junk(seed: int) -> list[bytes]:
    rng = random.Random(seed)
    lines = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"") for _ in range(40)]
    lines += [b"\xff\xfe\x00 go \xc3", b"\r", b"", b"x" * (2 * MAX_LINE_BYTES), b" " * (MAX_LINE_BYTES - 1),
              b'{"jsonrpc":"2.0","id":1,"method":"engine/search"', b"{" * 50_000, b'[{"jsonrpc":"2.0"}]',
              b'{"jsonrpc":"2.0","id":{"a":1},"method":"engine/stop"}', "☃ position fen ☃".encode()]
    # Nothing that is a command by chance: the engine must not start searching or quit.
    return [line for line in lines if not re.search(rb"\b(quit|go|stop|new|analyze|force|protover|xboard|uci)\b", line)]


def send_junk(engine: EngineProcess, seed: int) -> None:
    for line in junk(seed):
        engine.send_raw(line + b"\n")


def test_uci_survives_junk_and_plays_a_legal_move() -> None:
    with EngineProcess("--protocol", "uci") as engine:
        send_junk(engine, 1)
        engine.send("isready")
        engine.expect("readyok", timeout=10, skip=r"info string .*")
        engine.send("position startpos moves e2e4")
        engine.send("go depth 3")
        line = engine.expect(r"bestmove \S+( ponder \S+)?", timeout=20, skip=r"info .*")
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(line.text.split()[1]) in board.legal_moves


def test_xboard_survives_junk_and_plays_a_legal_move() -> None:
    with EngineProcess("--protocol", "xboard") as engine:
        engine.send("protover 2")
        engine.expect("feature done=1", skip=r"feature .*")
        send_junk(engine, 2)
        engine.send("ping 1")
        engine.expect("pong 1", timeout=10, skip=r"Error \(.*|Illegal move.*")
        engine.send("new")
        engine.send("st 0.2")
        engine.send("usermove e2e4")
        line = engine.expect(r"move \S+", timeout=20)
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(line.text.split()[1]) in board.legal_moves


def test_cnp_survives_junk_and_still_searches() -> None:
    with EngineProcess("--protocol", "cnp") as engine:
        send_junk(engine, 3)
        engine.send(json.dumps({"jsonrpc": "2.0", "id": "after", "method": "engine/search",
                                "params": {"position": {"moves": ["e2e4"]}, "limits": {"depth": 3}, "info": False}}))
        while True:
            message = json.loads(engine.expect(r"\{.*\}", timeout=20).text)
            assert message["jsonrpc"] == "2.0"
            if message.get("id") == "after":
                break
            assert message["id"] is None or isinstance(message["id"], int), message  # junk: errors only
            assert message["error"]["code"] in (-32700, -32600, -32601, -32602), message
        board = chess.Board()
        board.push_uci("e2e4")
        assert chess.Move.from_uci(message["result"]["bestMove"]) in board.legal_moves
