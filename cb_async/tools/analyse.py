"""`cb-async analyse INPUT`: annotate a PGN file, evaluate an EPD/FEN file, or score a test suite.

A thin shell over `cb_async.analysis`: it parses the command line, shows a progress bar, writes
the results in input order, and turns every failure the user can fix into one line on stderr
and exit status 2. The output goes to `--out.partial` and is renamed to `--out` when the job
is complete, so a file named `--out` is always whole; the journal beside it makes running the
same command again resume an interrupted job. `--engine` chooses the engine (any UCI engine;
given several times on a suite, they are scored side by side); `--report` writes an HTML page.
See docs/analysis.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import TextIO

from cb_async.analysis import (
    DEFAULT_NODES,
    GameAnalysis,
    InputError,
    Job,
    JournalError,
    PoolError,
    PositionAnalysis,
    Problem,
    Progress,
)
from cb_async.analysis.engines import EngineSpec, EngineUnavailable
from cb_async.analysis.inputs import input_kind
from cb_async.analysis.suites import Scoreboard, budget_text, is_suite
from cb_async.analysis.writers import annotated_pgn, epd_line, header_lines, json_lines, problem_line
from cb_async.cli import UsageError, whole_number
from cb_async.limits import Limits, LimitsError

INTERRUPTED = 130


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("input", metavar="INPUT", help="a PGN file (games) or an EPD/FEN file (one position a line)")
    parser.add_argument("--out", metavar="FILE", help="write here (default: standard output)")
    parser.add_argument("--json", action="store_true", help="JSON Lines: one object per position")
    budget = parser.add_argument_group("budget per position (the first reached ends a search)")
    budget.add_argument("--nodes", type=whole_number(1), metavar="N",
                        help=f"nodes (default {DEFAULT_NODES} when neither --depth nor --movetime is given)")
    budget.add_argument("--depth", type=whole_number(1), metavar="N", help="plies")
    budget.add_argument("--movetime", type=whole_number(1), metavar="MS",
                        help="milliseconds (results then depend on the machine)")
    parser.add_argument("--multipv", type=whole_number(1, 256), default=1, metavar="N",
                        help="lines per position (default 1)")
    parser.add_argument("--workers", type=whole_number(1), metavar="N",
                        help="engines (default: one per core, or per cluster CPU)")
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run on Ray: 'auto' (the cluster of `ray start`), 'ray://HOST:PORT', "
                             "or 'local' (a private Ray on this machine); needs cb-async[ray]")
    parser.add_argument("--journal", metavar="FILE", help="where finished positions are recorded "
                                                          "(default: the output's name + .journal, or the input's)")
    parser.add_argument("--restart", action="store_true", help="discard the journal and start over")
    parser.add_argument("--engine", action="append", metavar="CMD",
                        help="a UCI engine's command (default: cb-async's own search); give it several "
                             "times to score a test suite with each, side by side")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="a UCI option for --engine (repeatable; Threads 1 and Hash 16 unless given)")
    parser.add_argument("--report", metavar="FILE.html",
                        help="also write a self-contained HTML report: eval graphs, accuracy, mistakes "
                             "with boards; a suite's score table and the missed positions")
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar on stderr (default: when stderr is a terminal)")


def _limits(args: argparse.Namespace) -> Limits:
    nodes = args.nodes
    if nodes is None and args.depth is None and args.movetime is None:
        nodes = DEFAULT_NODES
    return Limits(nodes=nodes, depth=args.depth, movetime=args.movetime, multipv=args.multipv)


def _engines(args: argparse.Namespace) -> list[EngineSpec]:
    """One spec per --engine (cb-async's own when none); --option goes to the UCI ones."""
    commands: list[str | None] = list(args.engine) if args.engine else [None]
    uci = [command for command in commands if EngineSpec.parse(command).command is not None]
    if args.option and not uci:
        raise EngineUnavailable("--option is for a UCI engine given with --engine")
    return [EngineSpec.parse(command, args.option if EngineSpec.parse(command).command is not None else ())
            for command in commands]


def _journal_for(base: str, index: int) -> str:
    """The first engine keeps the usual journal; the others get one each beside it."""
    return base if index == 0 else f"{base}.engine{index + 1}"


def run(args: argparse.Namespace) -> int:
    """The job; a mistake the user can fix (unreadable input, bad address, a journal of another
    job, an engine that does not start) is a `UsageError`: one line, exit status 2."""
    try:
        limits = _limits(args)
        kind = input_kind(args.input)
        if args.cluster is not None:
            from cb_async.analysis.ray_pool import check_address

            check_address(args.cluster)
        engines = _engines(args)
        suite = kind == "epd" and is_suite(args.input)
        if len(engines) > 1 and not suite:
            raise EngineUnavailable("several --engine compare engines on a test suite (an EPD with bm or am); "
                                    "give one engine for games or plain positions")
    except (LimitsError, InputError, PoolError, EngineUnavailable, OSError) as error:
        raise UsageError(str(error)) from None
    journal = args.journal or f"{args.out or args.input}.journal"
    bar = _Bar(args.progress if args.progress is not None else sys.stderr.isatty())
    jobs = [Job(args.input, limits, workers=args.workers, cluster=args.cluster, journal=_journal_for(journal, index),
                restart=args.restart, ordered=True, on_progress=bar.update, engine=engine)
            for index, engine in enumerate(engines)]
    try:
        return asyncio.run(_run(args, jobs, kind, suite, bar))
    except KeyboardInterrupt:
        searched = sum(job.progress.searched for job in jobs)
        print(f"cb-async analyse: interrupted; {searched} positions searched in this run are in "
              f"{journal}: run the same command again to resume", file=sys.stderr)
        return INTERRUPTED
    except (InputError, PoolError, JournalError, EngineUnavailable) as error:
        raise UsageError(str(error)) from None


async def _run(args: argparse.Namespace, jobs: list[Job], kind: str, suite: bool, bar: _Bar) -> int:
    partial = f"{args.out}.partial" if args.out else None
    out: TextIO | None = None
    games = positions = problems = 0
    collected: list[GameAnalysis | PositionAnalysis | Problem] = []
    board = Scoreboard([""] * len(jobs))
    try:
        for index, job in enumerate(jobs):
            async with job:  # the engine checked, the workers up: only now is there an output
                if out is None:
                    out = _open_output(partial)
                name = job.engine_name or job.engine.describe()
                board.engines[index] = name
                if index == 0 and not suite:
                    out.write(header_lines(job, as_json=args.json))
                async for result in job.results():
                    if args.report and not suite:
                        collected.append(result)
                    match result:
                        case Problem():
                            problems += 1
                            bar.write(f"cb-async analyse: {name}: {result}" if suite else f"cb-async analyse: {result}")
                            if not suite:
                                out.write(problem_line(result, as_json=args.json))
                        case GameAnalysis():
                            games += 1
                            out.write(json_lines(result) if args.json else annotated_pgn(result))
                        case PositionAnalysis() if suite:
                            positions += 1
                            board.add(index, result)
                        case PositionAnalysis():
                            positions += 1
                            out.write(json_lines(result) if args.json else epd_line(result))
                    out.flush()
                _summary(job, kind, games, positions, problems, f"{name}: " if len(jobs) > 1 else "")
                games = positions = problems = 0
        assert out is not None
        if suite:
            budget = budget_text(jobs[0].limits.nodes, jobs[0].limits.depth, jobs[0].limits.movetime)
            out.write(header_lines(jobs[0], as_json=args.json, engines=board.engines))
            out.write(board.json_lines() if args.json else board.table(budget))
        if args.report:
            from cb_async.analysis.report import write_report

            write_report(args.report, jobs, collected, board if suite else None)
    finally:
        bar.close()
        if out is not None and out is not sys.stdout:
            out.close()
    if args.out and partial:
        os.replace(partial, args.out)
    return 0


def _open_output(partial: str | None) -> TextIO:
    try:
        return open(partial, "w", encoding="utf-8") if partial else sys.stdout
    except OSError as error:
        raise InputError(f"{partial}: {error.strerror or error}") from None


def _summary(job: Job, kind: str, games: int, positions: int, problems: int, label: str) -> None:
    progress = job.progress
    done = f"{games} games" if kind == "pgn" else f"{positions} positions"
    failed = f", {progress.failed} positions failed" if progress.failed else ""
    print(f"cb-async analyse: {label}{done} analysed ({problems} skipped{failed}): {progress.done} positions, "
          f"{progress.searched} searched, {progress.from_journal} from the journal, {progress.shared} shared; "
          f"{progress.workers_lost} workers lost, {progress.workers_replaced} replaced", file=sys.stderr)


class _Bar:
    """A tqdm bar on stderr (positions done, positions/s, ETA), or nothing."""

    def __init__(self, show: bool) -> None:
        self._bar = None
        if show:
            from tqdm import tqdm

            self._bar = tqdm(total=None, unit="pos", file=sys.stderr, dynamic_ncols=True, smoothing=0.05)

    def update(self, progress: Progress) -> None:
        if self._bar is None:
            return
        total = progress.total
        if total != self._bar.total:
            self._bar.total = total
        self._bar.update(progress.done - self._bar.n)

    def write(self, line: str) -> None:
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


