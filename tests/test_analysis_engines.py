"""`cb-async analyse --engine`: any UCI engine in every worker, reproducible at a fixed node
budget, one clear error for an engine that cannot serve, a position that kills its engine
reported as failed while the run goes on; and the analysis API under trio."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import chess
import pytest

from cb_async.analysis import GameAnalysis, Job, PositionAnalysis, Problem, read_text
from cb_async.analysis.engines import EngineSpec, EngineUnavailable, reproducibility
from cb_async.limits import Limits

DATA = Path(__file__).parent / "data"
GAMES = DATA / "analysis-games.pgn"
STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
NEEDS_STOCKFISH = pytest.mark.skipif(
    STOCKFISH is None, reason="Stockfish is not installed (sh scripts/install-debian-engines.sh stockfish; "
                              ".ci/run does it as root)")

#: A UCI engine that dies whenever it is asked to search one position (the FEN's board part is
#: the first argument) and otherwise answers the first legal move at once.
DYING_ENGINE = textwrap.dedent('''
    import sys, chess
    poison = sys.argv[1]
    board = chess.Board()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            print("id name Dying 1\\noption name Threads type spin default 1 min 1 max 8\\nuciok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            fen = " ".join(words[2:8]) if words[1] == "fen" else chess.STARTING_FEN
            board = chess.Board(fen)
            if "moves" in words:
                for move in words[words.index("moves") + 1:]:
                    board.push_uci(move)
        elif words[0] == "go":
            if board.board_fen() == poison:
                sys.exit(3)
            move = next(iter(board.legal_moves)).uci()
            print(f"info depth 1 seldepth 1 score cp 7 nodes 1 time 0 pv {move}\\nbestmove {move}", flush=True)
        elif words[0] == "quit":
            break
''')


def analyse(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cb_async", "analyse", *args], capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def dying_engine(tmp_path: Path, poison: str) -> str:
    script = tmp_path / "dying.py"
    script.write_text(DYING_ENGINE)
    return f"{sys.executable} {script} '{poison}'"


# -- Stockfish at a fixed node budget --------------------------------------------------------


@NEEDS_STOCKFISH
def test_stockfish_at_fixed_nodes_gives_the_same_output_for_one_and_two_workers_and_after_a_resume(
        tmp_path: Path) -> None:
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"sf{workers}.pgn"
        done = analyse(str(GAMES), "--engine", "stockfish", "--nodes", "5000", "--workers", workers, "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert done.stderr.strip().splitlines()[-1].startswith("cb-async analyse: 3 games analysed (2 skipped)")
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]
    header = outputs[0].split("\n\n", 1)[0].splitlines()
    assert header[0].startswith("% cb-async analyse ") and "Stockfish" in header[0] and "Threads 1" in header[0]
    assert header[1] == "% budget per position: nodes 5000, multipv 1"
    assert header[2].startswith("% reproducible: ") and "one thread, the table cleared before each position" in header[2]
    assert "[%eval" in outputs[0] and outputs[0].count("[Event ") == 3
    again = analyse(str(GAMES), "--engine", "stockfish", "--nodes", "5000", "--out", str(tmp_path / "sf1.pgn"))
    assert again.returncode == 0 and "0 searched" in again.stderr
    assert (tmp_path / "sf1.pgn").read_text() == outputs[0]


@NEEDS_STOCKFISH
def test_a_journal_of_another_engine_is_refused(tmp_path: Path) -> None:
    epd = tmp_path / "one.epd"
    epd.write_text("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - id \"back rank\";\n")
    journal = str(tmp_path / "j")
    assert analyse(str(epd), "--nodes", "300", "--journal", journal).returncode == 0
    other = analyse(str(epd), "--nodes", "300", "--engine", "stockfish", "--journal", journal)
    assert other.returncode == 2 and other.stderr.count("\n") == 1
    assert "was written by another job (engine cb-async " in other.stderr and "--restart" in other.stderr


def test_reproducibility_is_stated_for_node_and_depth_budgets_with_one_thread_only() -> None:
    stockfish = EngineSpec.parse("stockfish")
    assert reproducibility(stockfish, Limits(nodes=20_000))[0]
    assert reproducibility(EngineSpec(), Limits(depth=8))[0]
    assert not reproducibility(stockfish, Limits(movetime=100))[0]
    threads = reproducibility(EngineSpec.parse("stockfish", ["Threads=2"]), Limits(nodes=20_000))
    assert threads == (False, "Threads 2: several threads search in an order no run repeats")


@NEEDS_STOCKFISH
def test_several_threads_are_said_to_be_not_reproducible_in_the_output(tmp_path: Path) -> None:
    epd = tmp_path / "one.epd"
    epd.write_text("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - id \"back rank\";\n")
    done = analyse(str(epd), "--engine", "stockfish", "--option", "Threads=2", "--nodes", "2000", "--json",
                   "--journal", str(tmp_path / "j"))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["header"]["reproducible"] is False and "Threads 2" in records[0]["header"]["why"]
    assert records[1]["best"] == "a1a8" and records[1]["score"] == {"mate": 1}


# -- an engine that cannot serve -------------------------------------------------------------


@pytest.mark.parametrize(("engine", "options", "message"), [
    ("/no/such/engine", [], "--engine /no/such/engine: no such command"),
    (f"{sys.executable} -c pass", [], "did not start as a UCI engine"),
    ("stockfish", ["--option", "NoSuchOption=3"], "has no option 'NoSuchOption'"),
    ("stockfish", ["--option", "Threads"], "--option must be NAME=VALUE, not 'Threads'"),
])
def test_an_engine_that_cannot_serve_is_one_line_and_status_2_before_any_work(
        tmp_path: Path, engine: str, options: list[str], message: str) -> None:
    if engine == "stockfish" and STOCKFISH is None and "NAME=VALUE" not in message:
        pytest.skip("Stockfish is not installed")
    out = tmp_path / "out.pgn"
    done = analyse(str(GAMES), "--engine", engine, *options, "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert not out.exists() and not (tmp_path / "out.pgn.partial").exists()
    assert not (tmp_path / "out.pgn.journal").exists()  # nothing was started, nothing recorded


def test_the_engine_check_raises_engine_unavailable_for_the_library() -> None:
    from cb_async.analysis.engines import identify

    with pytest.raises(EngineUnavailable, match="no such command"):
        identify(EngineSpec.parse("/no/such/engine"))


def test_an_engine_that_dies_on_one_position_is_restarted_and_that_position_reported_failed(tmp_path: Path) -> None:
    epd = tmp_path / "three.epd"
    poison = "6k1/5ppp/8/8/8/8/5PPP/R5K1"
    epd.write_text("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id \"start\";\n"
                   f"{poison} w - - id \"poison\";\n"
                   "7k/8/6K1/8/8/8/8/5R2 w - - id \"after\";\n")
    journal = tmp_path / "j"
    done = analyse(str(epd), "--engine", dying_engine(tmp_path, poison), "--workers", "1", "--json",
                   "--journal", str(journal))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[0]["header"]["engines"] == ["Dying 1"]
    assert records[1]["line"] == 1 and records[1]["best"] == "g1h3"  # the first legal move, as it says
    assert records[2]["line"] == 2 and "failed 2 times" in records[2]["problem"] and "best" not in records[2]
    assert records[3]["line"] == 3 and records[3]["best"] is not None
    assert "1 positions failed" in done.stderr.splitlines()[-1]
    journaled = [json.loads(line) for line in journal.read_text().splitlines()[1:]]
    assert len(journaled) == 2 and not any(poison in record["key"] for record in journaled)  # nothing invented


def test_a_uci_engine_gets_the_moves_since_the_last_capture_or_pawn_move(tmp_path: Path) -> None:
    """A repetition is the engine's to see: it is sent `position fen ... moves ...`, not the bare FEN."""
    [item] = list(read_text("1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 *\n"))
    assert not isinstance(item, Problem)
    last = item.positions[-1]
    assert last.start == chess.STARTING_FEN and last.moves == ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3")
    assert last.board().fen() == last.fen and last.board().move_stack


# -- anyio: asyncio and trio -----------------------------------------------------------------


async def _analyse_two_games() -> list[object]:
    source = read_text("1. f3 e5 2. g4 Qh4# 0-1\n\n1. e4 *\n")
    async with Job(source, Limits(depth=2), workers=2, ordered=True) as job:
        return [result async for result in job.results()]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_analysis_api_runs_under_asyncio_and_trio(backend: str) -> None:
    results = anyio.run(_analyse_two_games, backend=backend)
    assert [type(result) for result in results] == [GameAnalysis, GameAnalysis]
    fools = results[0]
    assert isinstance(fools, GameAnalysis) and fools.evaluations[-2].best == "d8h4"


def test_leaving_the_job_early_under_trio_ends_its_workers() -> None:
    async def first_then_leave() -> list[int]:
        source = [chess.Board() for _ in range(6)]
        async with Job(source, Limits(depth=3), workers=2) as job:
            pool = job.pool
            assert pool is not None
            pids = pool.pids()
            async for result in job.results():
                assert isinstance(result, PositionAnalysis)
                break
        return pids

    import os

    pids = anyio.run(first_then_leave, backend="trio")
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


# -- test suites -----------------------------------------------------------------------------

SUITE = (
    '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#; id "mate.1";\n'
    '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - am Ra8#; id "avoid.1";\n'
    '7k/8/8/8/8/8/8/R5K1 w - - bm Kf2; c0 "Kf2=10, Ra7=4, Kg2=3"; id "points.c0";\n'
    '7k/8/8/8/8/8/8/R5K1 w - - c8 "10 5"; c9 "a1a7 g1f2"; bm Ra7; id "points.c8";\n'
)
#: STS's third form: the points in c8, the moves in SAN in c7.
SAN_POINTS = '7k/8/8/8/8/8/8/R5K1 w - - c8 "10 5"; c7 "Ra7 Kf2"; bm Ra7; id "points.c7";\n'


def test_a_suite_is_scored_per_position_with_solve_rate_and_points_from_either_opcode_form() -> None:
    from cb_async.analysis.model import Evaluation
    from cb_async.analysis.suites import Scoreboard, expected, verdict
    from cb_async.results import Score

    items = [item for item in read_text(SUITE) if not isinstance(item, Problem)]
    from cb_async.analysis.model import PositionInput

    assert len(items) == 4 and all(isinstance(item, PositionInput) for item in items)
    c0 = expected(items[2])  # type: ignore[arg-type]
    assert {move.uci(): value for move, value in c0.points.items()} == {"g1f2": 10, "a1a7": 4, "g1g2": 3}
    c8 = expected(items[3])  # type: ignore[arg-type]
    assert {move.uci(): value for move, value in c8.points.items()} == {"a1a7": 10, "g1f2": 5}
    [c7_item] = list(read_text(SAN_POINTS))
    c7 = expected(c7_item)  # type: ignore[arg-type]
    assert {move.uci(): value for move, value in c7.points.items()} == {"a1a7": 10, "g1f2": 5}
    assert verdict(items[0], "a1a8").solved and not verdict(items[0], "h2h3").solved  # type: ignore[arg-type]
    assert not verdict(items[1], "a1a8").solved and verdict(items[1], "h2h3").solved  # type: ignore[arg-type]
    assert verdict(items[2], "g1g2") == verdict(items[2], "g1g2") and verdict(items[2], "g1g2").points == 3  # type: ignore[arg-type]
    board = Scoreboard(["A", "B"])
    answers = {0: ("a1a8", "h2h3"), 1: ("h2h3", "a1a8"), 2: ("g1f2", "a1a7"), 3: ("a1a7", "g1f2")}
    for index, item in enumerate(items):
        for engine, best in enumerate(answers[index]):
            evaluation = Evaluation(item.position.key, best, Score(cp=0), (best,), 1, 1, 1, 0)  # type: ignore[union-attr]
            board.add(engine, PositionAnalysis(item, evaluation))  # type: ignore[arg-type]
    first, second = board.tallies()
    assert (first.solved, first.positions, first.points, first.max_points) == (4, 4, 20, 20)
    assert (second.solved, second.points) == (0, 9)
    table = board.table("1 node")
    assert "| A | 4/4 | 100.0% | 20/20 |" in table and "| B | 0/4 | 0.0% | 9/20 |" in table
    assert "| 1 | mate.1 | bm Ra8# | Ra8# ok | h3 miss |" in table
    records = [json.loads(line) for line in board.json_lines().splitlines()]
    assert records[0]["engines"]["A"]["solved"] is True and records[0]["bm"] == ["a1a8"]
    assert records[2]["engines"]["B"]["points"] == 4
    assert records[-1]["summary"][1] == {"engine": "B", "positions": 4, "solved": 0, "rate": 0.0, "points": 9,
                                         "max_points": 20, "failed": 0}


@NEEDS_STOCKFISH
def test_two_engines_are_scored_side_by_side_at_the_same_budget(tmp_path: Path) -> None:
    suite = tmp_path / "suite.epd"
    suite.write_text(SUITE)
    done = analyse(str(suite), "--engine", "cb-async", "--engine", "stockfish", "--nodes", "3000",
                   "--out", str(tmp_path / "scores.md"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "scores.md").read_text()
    assert "Scored at 3,000 nodes per position." in text
    engines = text.splitlines()[0]
    assert engines.startswith("% cb-async analyse ") and "cb-async" in engines and "Stockfish" in engines
    rows = [line for line in text.splitlines() if line.startswith("| 1 | mate.1 |")]
    assert rows == ["| 1 | mate.1 | bm Ra8# | Ra8# ok | Ra8# ok |"]
    as_json = analyse(str(suite), "--engine", "cb-async", "--engine", "stockfish", "--nodes", "3000", "--json",
                      "--journal", str(tmp_path / "j"))
    records = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert records[0]["header"]["reproducible"] and len(records[0]["header"]["engines"]) == 2
    assert len(records) == 1 + 4 + 1 and all(len(record["engines"]) == 2 for record in records[1:5])
    assert [entry["positions"] for entry in records[-1]["summary"]] == [4, 4]
    assert records[1]["engines"][records[0]["header"]["engines"][1]]["solved"] is True  # Stockfish finds the mate


def test_several_engines_on_games_are_a_usage_error(tmp_path: Path) -> None:
    done = analyse(str(GAMES), "--engine", "cb-async", "--engine", "stockfish")
    assert done.returncode == 2 and "several --engine compare engines on a test suite" in done.stderr


# -- on Ray ----------------------------------------------------------------------------------

from test_analysis_cli import _ray_missing, in_loopback_namespace  # noqa: E402 - the Ray helpers live there

NEEDS_RAY = pytest.mark.skipif(_ray_missing() is not None, reason=str(_ray_missing()))


def _on_ray(*args: str) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run(in_loopback_namespace([sys.executable, "-m", "cb_async", "analyse", *args]),
                          capture_output=True, text=True, timeout=300, env=env, stdin=subprocess.DEVNULL)


@NEEDS_RAY
@NEEDS_STOCKFISH
def test_stockfish_on_a_local_ray_cluster_writes_the_same_output_as_local_workers(tmp_path: Path) -> None:
    local = tmp_path / "local.pgn"
    assert analyse(str(GAMES), "--engine", "stockfish", "--nodes", "5000", "--workers", "2",
                   "--out", str(local)).returncode == 0
    on_ray = tmp_path / "ray.pgn"
    done = _on_ray(str(GAMES), "--engine", "stockfish", "--nodes", "5000", "--cluster", "local", "--workers", "2",
                   "--out", str(on_ray))
    assert done.returncode == 0, done.stderr[-3000:]
    assert on_ray.read_text() == local.read_text()


@NEEDS_RAY
def test_on_ray_an_engine_missing_on_a_node_fails_at_actor_start_with_the_nodes_name(tmp_path: Path) -> None:
    import socket

    done = _on_ray(str(GAMES), "--engine", "/no/such/engine", "--cluster", "local", "--workers", "1",
                   "--out", str(tmp_path / "out.pgn"))
    assert done.returncode == 2, done.stderr[-3000:]
    last = done.stderr.strip().splitlines()[-1]
    assert last == f"cb-async analyse: on node {socket.gethostname()}: --engine /no/such/engine: no such command"
    assert not (tmp_path / "out.pgn").exists()


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in task.read_text().split()]
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_each_worker_owns_one_engine_process_and_leaving_the_job_early_ends_them_all(
        tmp_path: Path, backend: str) -> None:
    import os

    spec = EngineSpec.parse(dying_engine(tmp_path, "no position is poison"))

    async def first_then_leave() -> tuple[list[int], list[int]]:
        source = [chess.Board() for _ in range(4)] + [chess.Board(chess.STARTING_BOARD_FEN.replace("P", "1", 1))]
        async with Job(source, Limits(nodes=1), workers=2, engine=spec) as job:
            assert job.engine_name == "Dying 1"
            pool = job.pool
            assert pool is not None
            workers = pool.pids()
            engines = [child for worker in workers for child in _children(worker)]
            async for result in job.results():
                assert isinstance(result, PositionAnalysis)
                break
        return workers, engines

    workers, engines = anyio.run(first_then_leave, backend=backend)
    assert len(workers) == 2 and len(engines) == 2  # one engine process per worker
    for pid in workers + engines:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
