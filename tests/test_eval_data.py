"""`cb-async eval-data`: the training set is the same from the same seed, however many workers
make it, and an interrupted run resumes without losing or repeating a game."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chess
import pytest

from cb_async.cli import UsageError
from cb_async.training.data import CbAsyncPlayer, DataFile, Job, StockfishDriver, generate, openings, play_game

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="Debian's stockfish is not installed "
                                     "(sh scripts/install-debian-engines.sh stockfish)")


def games(path: Path) -> dict[int, dict[str, object]]:
    lines = path.read_text().splitlines()
    return {record["game"]: record for record in map(json.loads, lines[1:])}


@needs_stockfish
def test_the_same_seed_makes_the_same_games_with_one_worker_or_two(tmp_path: Path) -> None:
    assert STOCKFISH is not None
    job = Job(seed=7, nodes=300, engine=STOCKFISH)
    generate(job, tmp_path / "one.jsonl", games=4, workers=1, progress=False)
    generate(job, tmp_path / "two.jsonl", games=4, workers=2, progress=False)
    one, two = games(tmp_path / "one.jsonl"), games(tmp_path / "two.jsonl")
    assert sorted(one) == [0, 1, 2, 3] and one == two
    header = json.loads((tmp_path / "one.jsonl").read_text().splitlines()[0])
    assert header["seed"] == 7 and header["nodes"] == 300 and header["engine"].startswith("Stockfish")
    kept = [position for record in one.values() for position in record["positions"]]  # type: ignore[attr-defined]
    assert kept, "every game was empty"
    for fen, label in kept:
        board = chess.Board(fen)
        assert not board.is_check() and abs(label) <= 3000
    assert {record["result"] for record in one.values()} <= {0.0, 0.5, 1.0}


@needs_stockfish
def test_with_cb_async_choosing_the_moves_a_game_is_the_same_whichever_worker_plays_it() -> None:
    """cb-async's table and history are cleared at each game's start: a game played after others
    by the same player is the game a fresh player makes, so workers can share games in any
    order. (Without the clearing, game 2 of this seed comes out different.)"""
    assert STOCKFISH is not None
    driver = StockfishDriver(STOCKFISH, 300)
    try:
        lines = openings()
        used = CbAsyncPlayer(400)
        for index in range(3):
            after_others = play_game(driver, 7, index, lines, used)
            assert after_others == play_game(driver, 7, index, lines, CbAsyncPlayer(400)), f"game {index}"
    finally:
        driver.close()


@needs_stockfish
def test_an_interrupted_run_resumes_and_drops_a_torn_last_line(tmp_path: Path) -> None:
    assert STOCKFISH is not None
    job = Job(seed=8, nodes=300, engine=STOCKFISH)
    whole = tmp_path / "whole.jsonl"
    generate(job, whole, games=3, workers=1, progress=False)
    cut = tmp_path / "cut.jsonl"
    lines = whole.read_text().splitlines(keepends=True)
    cut.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])  # one game and half a line
    generate(job, cut, games=3, workers=1, progress=False)
    assert games(cut) == games(whole)
    assert cut.read_text().count("\n") == 4  # header and three games, nothing torn left behind


def test_a_file_made_by_another_job_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps({"eval-data": 1, "seed": 1, "nodes": 5000, "engine": "Stockfish 15.1"}) + "\n")
    with pytest.raises(UsageError, match="made by another job"):
        DataFile(path, {"eval-data": 1, "seed": 2, "nodes": 5000, "engine": "Stockfish 15.1"}).open()
