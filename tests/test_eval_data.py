"""`cb-async eval-data`: the training set is the same from the same seed, however many workers
make it, and an interrupted run resumes without losing or repeating a game. Its workers are our
worker processes like any other: they end with their host, however it ends, and so do their
Stockfish processes; a worker whose engine dies ends the run with one line."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
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


def test_a_data_files_header_names_the_command_that_made_it() -> None:
    # The net file's provenance is built from these headers: a set cb-async played must say so.
    from cb_async.training.train import data_arguments

    for player, expected in ((0, "--seed 3 --nodes 700"), (500, "--seed 3 --nodes 700 --player-nodes 500")):
        header = Job(seed=3, nodes=700, engine="stockfish", player_nodes=player).header("Stockfish 15.1")
        assert data_arguments(json.loads(json.dumps(header))) == expected


def test_a_set_made_by_a_net_playing_one_side_names_both_in_its_header() -> None:
    from cb_async.search import network
    from cb_async.training.train import data_arguments

    job = Job(seed=3, nodes=700, engine="stockfish", player_nodes=500, player_eval_file="default.net",
              player_sides="one")
    header = json.loads(json.dumps(job.header("Stockfish 15.1")))
    assert header["player-net-sha256"] == network.default().header["sha256"]
    assert data_arguments(header) == "--seed 3 --nodes 700 --player-nodes 500 --player-eval-file default.net --player-sides one"
    assert CbAsyncPlayer(500, "default.net").searcher.network is network.default()
    assert CbAsyncPlayer(500).searcher.network is None


class RecordingPlayer:
    """Plays the first legal move and remembers which side asked: a stand-in for cb-async."""

    def __init__(self) -> None:
        self.turns: list[bool] = []

    def new_game(self) -> None:
        self.turns.clear()

    def choose(self, board: chess.Board) -> chess.Move:
        self.turns.append(board.turn)
        return next(iter(board.legal_moves))


@needs_stockfish
def test_with_one_side_cb_async_plays_white_in_even_games_and_black_in_odd_ones() -> None:
    assert STOCKFISH is not None
    driver = StockfishDriver(STOCKFISH, 300)
    try:
        lines = openings()
        for index, colour in ((0, chess.WHITE), (1, chess.BLACK)):
            player = RecordingPlayer()
            record = play_game(driver, 7, index, lines, player, "one")  # type: ignore[arg-type]
            assert player.turns and set(player.turns) == {colour}, f"game {index}"
            assert record["positions"], f"game {index} kept no position"
            both = RecordingPlayer()
            play_game(driver, 7, index, lines, both, "both")  # type: ignore[arg-type]
            assert set(both.turns) == {chess.WHITE, chess.BLACK}, f"game {index}"
    finally:
        driver.close()


@pytest.mark.parametrize("words, message", [
    (["--player-sides", "one"], "cb-async eval-data: --player-eval-file and --player-sides need --player-nodes"),
    (["--player-nodes", "500", "--player-eval-file", "missing.net"], "cb-async eval-data: --player-eval-file: cannot read the net missing.net"),
])
def test_a_player_option_it_cannot_use_is_one_line_and_exit_status_2(tmp_path: Path, words: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "cb_async", "eval-data", "--out", str(tmp_path / "d.jsonl"), *words],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), done.stderr
    assert not (tmp_path / "d.jsonl").exists()


PGN = """[White "cb-net"]
[Black "sf1000"]
[Result "0-1"]

1. f3 e5 2. g4 Qh4# 0-1

[White "sf1000"]
[Black "cb-net"]
[Result "1/2-1/2"]
[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]
[SetUp "1"]

1. e4 Kd7 2. Kd2 Ke6 3. Ke3 Ke5 1/2-1/2
"""


@needs_stockfish
def test_from_pgn_labels_every_quiet_position_of_the_games_with_one_worker_or_two(tmp_path: Path) -> None:
    from cb_async.training.data import pgn_hash, read_pgn_games
    from cb_async.training.train import data_arguments

    assert STOCKFISH is not None
    pgn = tmp_path / "match.pgn"
    pgn.write_text(PGN)
    job = Job(seed=0, nodes=300, engine=STOCKFISH, pgn=(str(pgn),))
    generate(job, tmp_path / "one.jsonl", games=2, workers=1, progress=False)
    generate(job, tmp_path / "two.jsonl", games=2, workers=2, progress=False)
    one, two = games(tmp_path / "one.jsonl"), games(tmp_path / "two.jsonl")
    assert one == two and sorted(one) == [0, 1]
    assert (one[0]["result"], one[1]["result"]) == (0.0, 0.5)
    for index, game in enumerate(read_pgn_games((str(pgn),))):
        board = game.board()
        before = []
        for move in game.mainline_moves():
            before.append(board.fen())
            board.push(move)
        kept = [fen for fen, _ in one[index]["positions"]]  # type: ignore[attr-defined]
        assert kept and set(kept) <= set(before), f"game {index}"
        assert all(not chess.Board(fen).is_check() for fen in kept)
    # The king and pawn game: no capture or check anywhere, so every position is kept.
    assert len(one[1]["positions"]) == 6  # type: ignore[arg-type]
    header = json.loads((tmp_path / "one.jsonl").read_text().splitlines()[0])
    assert header["from-pgn"] == ["match.pgn"] and header["pgn-sha256"] == pgn_hash((str(pgn),))
    assert data_arguments(header) == "--from-pgn match.pgn --nodes 300"


@pytest.mark.parametrize("words, message", [
    (["--from-pgn", "{tmp}/missing.pgn"], "cb-async eval-data: cannot read the PGN"),
    (["--from-pgn", "{tmp}/broken.pgn"], "cb-async eval-data: {tmp}/broken.pgn: game 1 does not parse"),
    (["--from-pgn", "{tmp}/empty.pgn"], "cb-async eval-data: --from-pgn: the files hold no game"),
    (["--from-pgn", "{tmp}/empty.pgn", "--player-nodes", "500"], "cb-async eval-data: --from-pgn labels games already played"),
])
def test_a_pgn_it_cannot_label_is_one_line_and_exit_status_2(tmp_path: Path, words: list[str], message: str) -> None:
    (tmp_path / "broken.pgn").write_text('[White "a"]\n\n1. e4 e5 2. Ke3 *\n')
    (tmp_path / "empty.pgn").write_text("")
    words = [word.replace("{tmp}", str(tmp_path)) for word in words]
    done = subprocess.run([sys.executable, "-m", "cb_async", "eval-data", "--out", str(tmp_path / "d.jsonl"), *words],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(message.replace("{tmp}", str(tmp_path))), done.stderr
    assert not (tmp_path / "d.jsonl").exists()


# -- the worker processes ------------------------------------------------------------------------

on_linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process tree from Linux's /proc")


def _process_tree(root: int) -> set[int]:
    """Every process below `root` at this moment: its children, theirs, and so on."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # ended while we looked
            children.setdefault(parent, []).append(int(entry.name))
    found: set[int] = set()
    waiting = [root]
    while waiting:
        for child in children.get(waiting.pop(), []):
            if child not in found:
                found.add(child)
                waiting.append(child)
    return found


def _process_group(group: int) -> set[int]:
    """Every process of process group `group` at this moment (a run and what it started there)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) == group:
                    found.add(int(entry.name))
            except (OSError, IndexError, ValueError):
                continue  # ended while we looked
    return found


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for_the_end_of(pids: set[int], seconds: float) -> dict[int, str]:
    """Wait until none of `pids` lives, or `seconds` pass; those still alive, with their names."""
    deadline = time.monotonic() + seconds
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return {pid: _name(pid) for pid in pids if _alive(pid)}


def _start_eval_data(out: Path, games: int, nodes: int = 300, engine: str | None = STOCKFISH) -> subprocess.Popen[str]:
    """`cb-async eval-data` with two workers, in a process group of its own (as a shell runs a
    command), with SIGINT at its default (a test runner may run us with it ignored)."""
    assert engine is not None
    return subprocess.Popen(
        [sys.executable, "-m", "cb_async", "eval-data", "--seed", "3", "--games", str(games), "--nodes", str(nodes),
         "--workers", "2", "--engine", engine, "--out", str(out)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_mid_run(host: subprocess.Popen[str], out: Path, finished: int) -> set[int]:
    """Wait until both workers' Stockfish run and `out` holds `finished` games; the host's
    processes then (the forkserver, the workers, their Stockfish)."""
    deadline = time.monotonic() + 60
    while True:
        assert host.poll() is None, "the run ended before it could be stopped"
        assert time.monotonic() < deadline, "the run did not get going"
        tree = _process_tree(host.pid)
        engines = [pid for pid in tree if _name(pid) == "stockfish"]
        if len(engines) == 2 and out.exists() and out.read_bytes().count(b"\n") >= 1 + finished:
            return tree
        time.sleep(0.02)


def _clean_up(host: subprocess.Popen[str], tree: set[int]) -> None:
    """What a failing test leaves behind: killed, so that it does not outlive the test run."""
    if host.poll() is None:
        host.kill()
    host.wait()
    if host.stderr is not None:
        host.stderr.close()
    for pid in tree:
        if _alive(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@on_linux
@needs_stockfish
def test_the_workers_and_their_stockfish_end_with_a_host_killed_by_sigkill(tmp_path: Path) -> None:
    """A host killed by SIGKILL says nothing to its workers. Each worker's orphan watch
    (`worker_entry`) ends it within a fraction of a second, busy or not, and its Stockfish ends
    at the end of its input. (A worker without the watch plays on: at this node budget a move
    takes Stockfish many seconds.)"""
    out = tmp_path / "killed.jsonl"
    host = _start_eval_data(out, games=500, nodes=50_000_000)
    tree: set[int] = set()
    try:
        tree = _wait_mid_run(host, out, finished=0)
        host.send_signal(signal.SIGKILL)
        host.wait(timeout=5)
        assert _wait_for_the_end_of(tree, 5) == {}, "outlived their host"
    finally:
        _clean_up(host, tree)


@on_linux
@needs_stockfish
def test_ctrl_c_ends_every_worker_and_keeps_the_finished_games_for_a_resume(tmp_path: Path) -> None:
    assert STOCKFISH is not None
    out = tmp_path / "interrupted.jsonl"
    host = _start_eval_data(out, games=500)
    tree: set[int] = set()
    try:
        tree = _wait_mid_run(host, out, finished=1)
        os.killpg(host.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        _, stderr = host.communicate(timeout=10)
        assert host.returncode == 130
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
        assert _wait_for_the_end_of(tree, 5) == {}, "outlived the interrupted run"
    finally:
        _clean_up(host, tree)
    kept = set(games(out))
    assert kept
    last = max(kept)
    job = Job(seed=3, nodes=300, engine=STOCKFISH)
    generate(job, out, games=last + 1, workers=2, progress=False)  # plays only the games missing
    assert sorted(games(out)) == list(range(last + 1))
    assert out.read_text().count("\n") == last + 2


#: An engine that answers like Stockfish until it dies: at its first search, or as it starts
#: (after a first start, the host's, which only asks its name).
DYING_ENGINE = """#!{python}
import os, sys

if {death!r} == "as it starts" and os.path.exists({started!r}):
    sys.exit(1)
open({started!r}, "a").close()
for line in sys.stdin:
    word = (line.split() or [""])[0]
    if word == "uci":
        print("id name Dying 1", flush=True)
        print("uciok", flush=True)
    elif word == "isready":
        print("readyok", flush=True)
    elif word == "go" or word == "quit":
        sys.exit(1)
"""


@on_linux
@pytest.mark.parametrize("death", ["as it starts", "at its first search"])
def test_a_worker_whose_engine_dies_ends_the_run_with_one_line(tmp_path: Path, death: str) -> None:
    engine = tmp_path / "engine"
    engine.write_text(DYING_ENGINE.format(python=sys.executable, death=death, started=str(tmp_path / "started")))
    engine.chmod(0o755)
    out = tmp_path / "data.jsonl"
    host = _start_eval_data(out, games=4, engine=str(engine))
    left: dict[int, str] = {}
    try:
        _, stderr = host.communicate(timeout=30)  # neither a hang nor a pool that restarts for ever
        left = _wait_for_the_end_of(_process_group(host.pid), 5)
    finally:
        _clean_up(host, set())
        try:
            os.killpg(host.pid, signal.SIGKILL)  # a worker the run left behind, if any
        except OSError:
            pass
    assert left == {}, "outlived the failed run"
    waited_for = "uciok" if death == "as it starts" else "bestmove"
    assert host.returncode == 2 and "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 2 and lines[0] == f"eval-data: writing {out}", stderr
    assert lines[1].startswith("cb-async eval-data: worker ") and f"while we waited for '{waited_for}'" in lines[1]
    assert lines[1].endswith(f"kept in {out}, and the same command resumes")


@on_linux
def test_closing_the_driver_of_an_engine_that_died_closes_its_pipes_without_a_traceback(tmp_path: Path) -> None:
    engine = tmp_path / "engine"
    engine.write_text(DYING_ENGINE.format(python=sys.executable, death="at its first search",
                                          started=str(tmp_path / "started")))
    engine.chmod(0o755)
    driver = StockfishDriver(str(engine), nodes=10)
    with pytest.raises(RuntimeError, match="while we waited for 'bestmove'"):
        driver.search(chess.STARTING_FEN)
    driver.process.wait(timeout=10)  # the engine is gone before we ask it to quit
    unraisable: list[object] = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        driver.close()
        stdin = driver.process.stdin
        del driver
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert stdin is not None and stdin.closed
    assert unraisable == []
