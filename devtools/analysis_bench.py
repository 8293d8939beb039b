"""`python3 dev.py analysis-bench`: what batch analysis costs, on this machine, in one run.

Runs the same job (the 64 positions of `data/openings.epd`, or with `--job games` the 64
opening lines that lead to them as games, at a fixed node budget) several ways,
interleaved round by round so that the machine's load falls on all of them alike, and prints
the median of each:

- `analyse` on local worker processes, 1 and 2 workers (scaling efficiency);
- `analyse` on a private 2-CPU Ray (`--cluster local`), started in a network namespace of its
  own with only the loopback interface up, so that Ray binds and talks on 127.0.0.1 alone;
- python-chess's `chess.engine` driving a Stockfish subprocess (`scripts/install-debian-engines.sh stockfish`
  installs Debian's) at the same node budget: the reference for what a harness costs.

With `--engine CMD` (`--engine stockfish`) the local runs drive that UCI engine in every worker, as
`cb-async analyse --engine` does, beside the same engine in python-chess's own loop: the
difference is what our harness (pool, pipe, journal, a `ucinewgame` per position) costs.

Each is also run at a budget of 1 node, where the search costs nearly nothing and what is left
is the harness's own cost per position. The driver's CPU time per position says how many
positions one driver (and its journal) can take in a second, which bounds a large cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

import cb_async
from cb_async.analysis import Job
from cb_async.analysis.engines import EngineSpec
from cb_async.analysis.local import LocalPool
from cb_async.analysis.pool import Pool, Worker
from cb_async.cli import whole_number
from cb_async.limits import Limits
from devtools import command_line

OPENINGS = Path(cb_async.__file__).parent / "data" / "openings.epd"
#: The clone this tool runs from: its child process imports `devtools` from there.
ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Measure:
    """One run: positions per second once the workers were up, the driver's and the workers' CPU
    per position (the workers' is what wall-clock figures cannot show on a loaded machine)."""

    positions_per_second: float
    driver_ms_per_position: float
    worker_ms_per_position: float
    start_seconds: float


def with_children(pids: Sequence[int]) -> list[int]:
    """The processes and their children (a worker's UCI engine subprocess), Linux /proc."""
    found = list(pids)
    for pid in pids:
        # Any thread may have started the child (python-chess starts the engine from its own).
        for task in Path(f"/proc/{pid}/task").glob("*/children"):
            try:
                found += [int(child) for child in task.read_text().split()]
            except (OSError, ValueError):
                continue
    return found


def cpu_seconds(pids: Sequence[int]) -> float:
    """User and system CPU time of these processes and their children so far (Linux /proc; 0 elsewhere)."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in with_children(pids):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


Source = list[chess.Board] | list[chess.pgn.Game]


def positions(count: int) -> list[chess.Board]:
    """The positions at the end of the opening lines: a job of independent positions."""
    boards = []
    for line in OPENINGS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            boards.append(chess.Board.from_epd(line)[0])
    return boards[:count]


def games(count: int) -> list[chess.pgn.Game]:
    """The opening lines as games (7 to 11 positions each): each one batch for one worker."""
    found = []
    for line in OPENINGS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            moves = str(chess.Board.from_epd(line)[1]["c0"])
            game = chess.pgn.read_game(io.StringIO(moves))
            if game is not None:
                found.append(game)
    return found[:count]


def job_source(kind: str, count: int) -> Source:
    return games(count) if kind == "games" else positions(count)


def size(source: Source) -> int:
    return sum(len(list(item.mainline_moves())) + 1 if isinstance(item, chess.pgn.Game) else 1 for item in source)


class _Timed:
    """A pool that notes when its workers were ready, so start-up is not counted as work."""

    def __init__(self, pool: Pool) -> None:
        self.pool = pool
        self.ready_at = 0.0
        self.cpu_at_ready = 0.0
        self.workers_cpu_at_ready = 0.0

    async def start(self) -> Sequence[Worker]:
        workers = await self.pool.start()
        self.ready_at = time.perf_counter()
        self.cpu_at_ready = time.process_time()
        self.workers_cpu_at_ready = cpu_seconds(self.pool.pids())
        return workers

    async def replace(self, worker: Worker) -> Worker:
        return await self.pool.replace(worker)

    async def close(self) -> None:
        await self.pool.close()

    def pids(self) -> list[int]:
        return self.pool.pids()


async def run_job(source: Source, nodes: int, pool: Pool, journal: str | None,
                  engine: EngineSpec = EngineSpec()) -> Measure:
    timed = _Timed(pool)
    began = time.perf_counter()
    job = Job(source, Limits(nodes=nodes), pool=timed, journal=journal, engine=engine)
    count = 0
    ended = spent = workers = 0.0
    async with job:
        async for _ in job.results():
            count += 1
            # Timed at the last result: closing the pool (a Ray shutdown takes seconds) is not work.
            ended = time.perf_counter()
            spent = time.process_time() - timed.cpu_at_ready
            if count == len(source):
                workers = cpu_seconds(timed.pids()) - timed.workers_cpu_at_ready
    assert count == len(source)
    searched = job.progress.searched  # positions shared between games are searched once: count them once
    return Measure(searched / (ended - timed.ready_at), spent * 1000 / searched, workers * 1000 / searched,
                   timed.ready_at - began)


def local(source: Source, nodes: int, workers: int, engine: EngineSpec = EngineSpec()) -> Measure:
    with tempfile.TemporaryDirectory() as directory:
        return asyncio.run(run_job(source, nodes, LocalPool(workers, engine), os.path.join(directory, "journal"),
                                   engine))


def ray_in_namespace(job: str, count: int, nodes: int) -> Measure:
    """The Ray run, in a child process inside a loopback-only network namespace."""
    command = [sys.executable, "-m", "devtools.analysis_bench", "--ray-once", "--job", job,
               "--positions", str(count), "--nodes", str(nodes)]
    quoted = " ".join("'" + part + "'" for part in command)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(["unshare", "-n", "sh", "-c", f"ip link set lo up && exec {quoted}"],
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the Ray run failed: {done.stderr.strip().splitlines()[-1:]}")
    return Measure(**json.loads(done.stdout.strip().splitlines()[-1]))


def ray_once(job: str, count: int, nodes: int) -> None:
    from cb_async.analysis.ray_pool import RayPool

    with tempfile.TemporaryDirectory() as directory:
        measure = asyncio.run(run_job(job_source(job, count), nodes, RayPool("local", 2), os.path.join(directory, "j")))
    print(json.dumps(measure.__dict__))


def stockfish(source: Source, nodes: int, path: str) -> Measure:
    import chess.engine

    boards: list[chess.Board] = []
    for item in source:
        if isinstance(item, chess.pgn.Game):
            board = item.board()
            boards.append(board.copy())
            for move in item.mainline_moves():
                board.push(move)
                boards.append(board.copy())
        else:
            boards.append(item)
    # The same distinct positions as `analyse` searches (it searches a shared position once).
    boards = list({board.fen(): board for board in boards}.values())

    async def run() -> Measure:
        began = time.perf_counter()
        transport, engine = await chess.engine.popen_uci(path)
        pid = transport.get_pid()
        try:
            await engine.configure({"Threads": 1, "Hash": 16})
            ready = time.perf_counter()
            cpu = time.process_time()
            engine_cpu = cpu_seconds([pid])
            for board in boards:
                # A new game for every position, as `analyse` clears its table for each.
                await engine.analyse(board, chess.engine.Limit(nodes=nodes), game=object())
            ended = time.perf_counter()
            spent = time.process_time() - cpu
            engine_cpu = cpu_seconds([pid]) - engine_cpu
        finally:
            await engine.quit()
        return Measure(len(boards) / (ended - ready), spent * 1000 / len(boards), engine_cpu * 1000 / len(boards),
                       ready - began)

    return asyncio.run(run())


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--nodes", type=whole_number(1), default=5000, help="node budget per position (default 5000)")
    parser.add_argument("--job", choices=("positions", "games"), default="positions",
                        help="64 independent positions (a batch each), or the 64 opening lines as games "
                             "(a batch of 7 to 11 positions each)")
    parser.add_argument("--positions", type=whole_number(1, 64), default=64,
                        help="positions or games in the job (at most 64)")
    parser.add_argument("--rounds", type=whole_number(1), default=3, help="rounds; medians are printed (default 3)")
    parser.add_argument("--stockfish", default=shutil.which("stockfish") or "/usr/games/stockfish",
                        help="the Stockfish binary (scripts/install-debian-engines.sh stockfish installs Debian's)")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray runs")
    parser.add_argument("--engine", metavar="CMD",
                        help="drive this UCI engine in the local workers instead of cb-async (as analyse --engine)")
    parser.add_argument("--ray-once", action="store_true", help=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    if args.ray_once:
        ray_once(args.job, args.positions, args.nodes)
        return 0
    source = job_source(args.job, args.positions)
    runs: dict[str, list[Measure]] = {}
    engine = EngineSpec.parse(args.engine)
    which = "" if engine.command is None else f" ({engine.describe()})"
    kinds = [f"local 1 worker{which}", f"local 2 workers{which}"] + ([] if args.no_ray or which else ["Ray local, 2 CPUs"])
    kinds += ["python-chess + Stockfish"] if os.path.exists(args.stockfish) else []
    print(f"# {args.job} job: {len(source)} items, {size(source)} positions, {args.nodes} nodes each, "
          f"{args.rounds} rounds; load average at start "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for round_number in range(args.rounds):
        for nodes in dict.fromkeys((args.nodes, 1)):
            for kind in kinds:
                if kind.startswith("local 1 worker"):
                    measure = local(source, nodes, 1, engine)
                elif kind.startswith("local 2 workers"):
                    measure = local(source, nodes, 2, engine)
                elif kind.startswith("Ray"):
                    measure = ray_in_namespace(args.job, len(source), nodes)
                else:
                    measure = stockfish(source, nodes, args.stockfish)
                runs.setdefault(f"{kind} @ {nodes}", []).append(measure)
                print(f"round {round_number + 1}: {kind:<40} {nodes:>6} nodes: {measure.positions_per_second:8.1f} pos/s, "
                      f"driver {measure.driver_ms_per_position:.3f} ms CPU/pos, workers "
                      f"{measure.worker_ms_per_position:.2f} ms CPU/pos, start {measure.start_seconds:.2f} s", flush=True)
    print(f"# load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\n| run | nodes | positions/s (median of {args.rounds}) | wall ms/position | driver CPU ms/position "
          "| engines' CPU ms/position | start s |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, measures in runs.items():
        kind, nodes = name.rsplit(" @ ", 1)
        pps = statistics.median(m.positions_per_second for m in measures)
        print(f"| {kind} | {nodes} | {pps:.1f} | {1000 / pps:.2f} | "
              f"{statistics.median(m.driver_ms_per_position for m in measures):.3f} | "
              f"{statistics.median(m.worker_ms_per_position for m in measures):.2f} | "
              f"{statistics.median(m.start_seconds for m in measures):.2f} |")
    return 0


def main(argv: list[str] | None = None) -> int:
    return command_line("python3 dev.py analysis-bench", __doc__, add_arguments, run, argv)


if __name__ == "__main__":  # also the Ray run's child process (`--ray-once`)
    sys.exit(main())
