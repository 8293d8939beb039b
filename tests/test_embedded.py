"""The embedded library: python-chess's Protocol API, in-process, never stalling the host."""

from __future__ import annotations

import asyncio
import os

import chess
import chess.engine
import pytest

import cb_async
from cb_async.embedded import Engine

START = chess.Board()
ITALIAN = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")


@pytest.fixture
async def engine():
    async with cb_async.Engine(options={"Hash": 8}) as engine:
        yield engine


async def test_identity_and_options(engine: Engine) -> None:
    assert engine.id["name"].startswith("cb-async")
    assert isinstance(engine.options["Hash"], chess.engine.Option)
    assert engine.options["Hash"].type == "spin" and engine.options["Hash"].default == 16
    assert engine.config["Hash"] == 8


async def test_play_returns_a_legal_move_with_info(engine: Engine) -> None:
    result = await engine.play(ITALIAN, chess.engine.Limit(depth=3), info=chess.engine.INFO_ALL)
    assert isinstance(result, chess.engine.PlayResult)
    assert result.move in ITALIAN.legal_moves
    assert result.info["depth"] == 3
    assert isinstance(result.info["score"], chess.engine.PovScore)
    assert result.info["score"].turn == chess.BLACK
    assert result.info["pv"][0] == result.move
    assert not result.draw_offered and not result.resigned


async def test_play_without_info_has_an_empty_info(engine: Engine) -> None:
    result = await engine.play(START, chess.engine.Limit(depth=2))
    assert result.info == {}


async def test_analyse_single_and_multipv(engine: Engine) -> None:
    info = await engine.analyse(ITALIAN, chess.engine.Limit(depth=3))
    assert isinstance(info, dict) and info["depth"] == 3
    infos = await engine.analyse(ITALIAN, chess.engine.Limit(depth=3), multipv=3)
    assert isinstance(infos, list) and len(infos) == 3
    assert len({i["pv"][0] for i in infos}) == 3
    scores = [i["score"].relative.score(mate_score=100_000) for i in infos]
    assert scores == sorted(scores, reverse=True)


async def test_root_moves(engine: Engine) -> None:
    move = chess.Move.from_uci("h2h3")
    result = await engine.play(START, chess.engine.Limit(depth=2), root_moves=[move])
    assert result.move == move


async def test_analysis_iterates_and_stops(engine: Engine) -> None:
    analysis = await engine.analysis(ITALIAN)
    async for info in analysis:
        if info.get("depth", 0) >= 3:
            break
    analysis.stop()
    best = await asyncio.wait_for(analysis.wait(), 5)
    assert best.move in ITALIAN.legal_moves
    assert analysis.info["depth"] >= 3


async def test_analysis_with_a_limit_ends_by_itself(engine: Engine) -> None:
    analysis = await engine.analysis(START, chess.engine.Limit(depth=2))
    depths = [info["depth"] async for info in analysis if "depth" in info]
    assert depths[-1] == 2
    assert (await analysis.wait()).move in START.legal_moves


async def test_cancelling_play_stops_the_search_and_leaves_the_engine_ready(engine: Engine) -> None:
    task = asyncio.create_task(engine.play(START, chess.engine.Limit(depth=60)))
    await asyncio.sleep(0.2)  # the search is deep in its work
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(engine.ping(), 2)
    assert engine._running is None
    result = await asyncio.wait_for(engine.play(START, chess.engine.Limit(depth=2)), 10)
    assert result.move in START.legal_moves


async def test_a_new_command_ends_a_running_analysis(engine: Engine) -> None:
    analysis = await engine.analysis(START)
    result = await engine.play(ITALIAN, chess.engine.Limit(depth=2))
    assert result.move in ITALIAN.legal_moves
    best = await asyncio.wait_for(analysis.wait(), 5)
    assert best.move is None  # ended without a move, like python-chess does


async def test_pondering_hit_and_miss(engine: Engine) -> None:
    board = chess.Board()
    limit = chess.engine.Limit(white_clock=2, black_clock=2)
    first = await engine.play(board, limit, ponder=True)
    assert first.ponder is not None
    board.push(first.move)
    board.push(first.ponder)  # the expected reply: a hit
    second = await engine.play(board, limit, ponder=True)
    assert second.move in board.legal_moves
    board.push(second.move)
    board.push(next(m for m in board.legal_moves if m != second.ponder))  # a miss
    third = await engine.play(board, limit)
    assert third.move in board.legal_moves


async def test_configure_errors_like_python_chess(engine: Engine) -> None:
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"MultiPV": 2})
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"NoSuchOption": 1})
    with pytest.raises(chess.engine.EngineError):
        await engine.configure({"Hash": 0})
    await engine.configure({"move overhead": 50})
    assert engine.config["Move Overhead"] == 50


async def test_engines_search_side_by_side() -> None:
    async with Engine() as a, Engine() as b:
        ra, rb = await asyncio.gather(
            a.play(START, chess.engine.Limit(depth=3)), b.play(ITALIAN, chess.engine.Limit(depth=3)))
        assert ra.move in START.legal_moves and rb.move in ITALIAN.legal_moves
        assert a._runner is not None and b._runner is not None
        assert a._runner._process.pid != b._runner._process.pid  # type: ignore[union-attr]


async def test_close_ends_the_worker_process() -> None:
    engine = await Engine().start()
    process = engine._runner._process  # type: ignore[union-attr]
    assert process is not None and process.is_alive()
    pid = process.pid
    await engine.aclose()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # gone, and reaped
    with pytest.raises(chess.engine.EngineTerminatedError):
        await engine.ping()
    await engine.aclose()  # twice is fine


def test_simple_engine_blocks() -> None:
    with cb_async.SimpleEngine() as engine:
        assert engine.id["name"].startswith("cb-async")
        result = engine.play(START, chess.engine.Limit(depth=2))
        assert result.move in START.legal_moves
        with engine.analysis(START) as analysis:
            for info in analysis:
                if info.get("depth", 0) >= 2:
                    break
        assert analysis.wait().move in START.legal_moves
        engine.ping()
