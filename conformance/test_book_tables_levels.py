"""Book, tablebases and levels through the real binary, in each protocol, every line checked.

The tests write their own tiny book; the tablebase tests use the shared 3-4 piece tables and
skip (saying why) when they are absent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import chess
import pytest

from cb_async.search.book import write_book
from cb_async.search.levels import level_for
from conformance.engine_process import EngineProcess

TABLES = Path(__file__).resolve().parents[2] / "shared" / "syzygy"
needs_tables = pytest.mark.skipif(not (TABLES / "KRvK.rtbw").exists(),
                                  reason=f"the shared Syzygy test tables are not at {TABLES}")
UCI_INFO = r"info depth \d+ seldepth \d+ multipv 1 score (cp|mate) -?\d+ nodes \d+ nps \d+ hashfull \d+ tbhits \d+ time \d+ pv .+"


@pytest.fixture
def tiny_book(tmp_path: Path) -> str:
    start = chess.Board()
    path = str(tmp_path / "tiny.bin")
    write_book(path, [(start, chess.Move.from_uci("e2e4"), 60), (start, chess.Move.from_uci("d2d4"), 30)])
    return path


@pytest.fixture
def uci() -> Iterator[EngineProcess]:
    with EngineProcess() as engine:
        engine.send("uci")
        engine.expect("uciok", skip=r"(id|option) .*")
        yield engine


def test_uci_book_move_bad_file_ponder_and_analysis(uci: EngineProcess, tiny_book: str, tmp_path: Path) -> None:
    uci.send(f"setoption name BookFile value {tmp_path / 'missing.bin'}")
    uci.expect(r"info string cannot read book .*missing\.bin: .*")
    for line in (f"setoption name BookFile value {tiny_book}", "setoption name OwnBook value true",
                 "setoption name BookBestMove value true", "position startpos", "go wtime 60000 btime 60000"):
        uci.send(line)
    uci.expect("info string book move e2e4")
    uci.expect(r"info depth 0 seldepth 0 multipv 1 score cp 0 nodes 0 nps 0 hashfull \d+ tbhits 0 time \d+ pv e2e4")
    uci.expect("bestmove e2e4")
    # A ponder search takes its book move and holds it until the hit, then answers at once.
    uci.send("go ponder wtime 60000 btime 60000")
    uci.send("isready")
    uci.expect("readyok")
    uci.send("ponderhit")
    uci.expect("info string book move e2e4", timeout=2)
    uci.expect(r"info depth 0 .* pv e2e4")
    uci.expect("bestmove e2e4")
    # Analysis never uses the book.
    uci.send("go infinite")
    uci.expect(UCI_INFO, timeout=10)
    uci.send("stop")
    uci.expect("bestmove .+", skip=UCI_INFO)
    uci.send("quit")
    assert uci.remaining_output() == []


@needs_tables
def test_uci_tablebase_move_and_a_bad_path(uci: EngineProcess) -> None:
    uci.send("setoption name SyzygyPath value /nonexistent/tables")
    uci.expect("info string SyzygyPath: no such directory: /nonexistent/tables")
    uci.send(f"setoption name SyzygyPath value {TABLES}")
    uci.send("position fen 8/8/8/4k3/8/8/3r4/4K2R w - - 0 1")
    uci.send("go wtime 60000 btime 60000")
    uci.expect("info string tablebase move e1d2")
    uci.expect(r"info depth 0 seldepth 0 multipv 1 score cp 19\d\d\d nodes 0 nps 0 hashfull \d+ tbhits [1-9]\d* time \d+ pv e1d2")
    uci.expect("bestmove e1d2")
    uci.send("quit")
    assert uci.remaining_output() == []


def test_uci_a_level_keeps_its_horizon_on_a_long_clock(uci: EngineProcess) -> None:
    level = level_for(800)
    for line in ("setoption name UCI_LimitStrength value true", "setoption name UCI_Elo value 800",
                 "position startpos moves e2e4", "go wtime 600000 btime 600000"):
        uci.send(line)
    # Ten minutes on the clock, yet the answer comes within the level's horizon: every line
    # the engine writes is a single-PV info within the depth and node budget, then the move.
    while True:
        line = uci.expect(r"(info depth \d+ .*|bestmove \S+( ponder \S+)?)", timeout=10)
        if line.text.startswith("bestmove"):
            break
        fields = line.text.split()
        assert "multipv 1 " in line.text
        assert int(fields[fields.index("depth") + 1]) <= level.depth
        assert int(fields[fields.index("nodes") + 1]) <= level.nodes + 64
    uci.send("quit")
    assert uci.remaining_output() == []


def test_xboard_bk_lists_the_book_moves_and_egtpath_sets_the_tables(tiny_book: str) -> None:
    with EngineProcess("--protocol", "xboard") as engine:
        engine.send("xboard")
        engine.send("protover 2")
        features = engine.expect("feature .*")
        assert 'egt="syzygy"' in features.text
        engine.expect("feature done=1", skip="feature .*")
        engine.send(f"option BookFile={tiny_book}")
        engine.send("new")
        engine.send("bk")
        engine.expect(r"\te2e4 66% \(weight 60\)")
        engine.expect(r"\td2d4 33% \(weight 30\)")
        engine.expect("")
        engine.send("option BookFile=/nonexistent/book.bin")
        engine.expect(r"tellusererror cannot read book /nonexistent/book\.bin: .*")
        if (TABLES / "KRvK.rtbw").exists():
            engine.send(f"egtpath syzygy {TABLES}")
            engine.send("force")
            engine.send("setboard 8/8/8/4k3/8/8/3r4/4K2R w - - 0 1")
            engine.send("st 30")
            engine.send("go")
            engine.expect("move e1d2")
        engine.send("ping 7")
        engine.expect("pong 7")
        engine.send("quit")
        assert engine.remaining_output() == []


def _rpc(engine: EngineProcess, request_id: int, method: str, params: dict) -> dict:
    engine.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}))
    line = engine.expect(r"\{.*\}", timeout=20)
    reply = json.loads(line.text)
    assert reply["id"] == request_id
    return reply


def test_cnp_sources_capabilities_and_a_refused_book(tiny_book: str) -> None:
    with EngineProcess("--protocol", "cnp") as engine:
        hello = _rpc(engine, 1, "engine/hello", {})["result"]
        assert hello["capabilities"]["book"] and hello["capabilities"]["syzygy"]
        assert hello["capabilities"]["levels"] == {"minElo": 800, "maxElo": 1850}
        assert {"OwnBook", "BookFile", "SyzygyPath", "UCI_LimitStrength", "UCI_Elo"} <= {
            option["name"] for option in hello["options"]}
        refused = _rpc(engine, 2, "engine/setOptions", {"options": {"BookFile": "/nonexistent/book.bin"}})
        assert refused["error"]["code"] == -32602 and refused["error"]["data"]["option"] == "BookFile"
        _rpc(engine, 3, "engine/setOptions", {"options": {"BookFile": tiny_book, "OwnBook": True}})
        booked = _rpc(engine, 4, "engine/search", {"limits": {"timeMs": 5000}, "info": False})["result"]
        assert booked["source"] == "book" and booked["bestMove"] in ("e2e4", "d2d4")
        analysis_limits = {"limits": {"depth": 2}, "info": False}
        _rpc(engine, 5, "engine/setOptions", {"options": {"OwnBook": False}})
        assert _rpc(engine, 6, "engine/search", analysis_limits)["result"]["source"] == "search"
        if (TABLES / "KRvK.rtbw").exists():
            _rpc(engine, 7, "engine/setOptions", {"options": {"SyzygyPath": str(TABLES)}})
            tb = _rpc(engine, 8, "engine/search", {"position": {"fen": "8/8/8/4k3/8/8/3r4/4K2R w - - 0 1"},
                                                    "limits": {"timeMs": 5000}, "info": False})["result"]
            assert tb["source"] == "tablebase" and tb["bestMove"] == "e1d2"
            assert "mate" not in tb["score"] and tb["score"]["cp"] > 19000
        _rpc(engine, 9, "engine/shutdown", {})
