"""`cb-async analyse INPUT`: annotate a PGN file, or evaluate an EPD/FEN file, with many engines.

A thin shell over `cb_async.analysis`: it parses the command line, shows a progress bar, writes
the results in input order, and turns every failure the user can fix into one line on stderr
and exit status 2. The output goes to `--out.partial` and is renamed to `--out` when the job
is complete, so a file named `--out` is always whole; the journal beside it makes running the
same command again resume an interrupted job. See docs/analysis.md.
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
from cb_async.analysis.inputs import input_kind
from cb_async.analysis.writers import annotated_pgn, epd_line, json_lines
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
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a progress bar on stderr (default: when stderr is a terminal)")


def _limits(args: argparse.Namespace) -> Limits:
    nodes = args.nodes
    if nodes is None and args.depth is None and args.movetime is None:
        nodes = DEFAULT_NODES
    return Limits(nodes=nodes, depth=args.depth, movetime=args.movetime, multipv=args.multipv)


def run(args: argparse.Namespace) -> int:
    """The job; a mistake the user can fix (unreadable input, bad address, a journal of another
    job) is a `UsageError`: one line, exit status 2."""
    try:
        limits = _limits(args)
        kind = input_kind(args.input)
        if args.cluster is not None:
            from cb_async.analysis.ray_pool import check_address

            check_address(args.cluster)
    except (LimitsError, InputError, PoolError) as error:
        raise UsageError(str(error)) from None
    journal = args.journal or f"{args.out or args.input}.journal"
    bar = _Bar(args.progress if args.progress is not None else sys.stderr.isatty())
    job = Job(args.input, limits, workers=args.workers, cluster=args.cluster, journal=journal,
              restart=args.restart, ordered=True, on_progress=bar.update)
    try:
        return asyncio.run(_run(args, job, kind, bar))
    except KeyboardInterrupt:
        print(f"cb-async analyse: interrupted; {job.progress.searched} positions searched in this run are in "
              f"{journal}: run the same command again to resume", file=sys.stderr)
        return INTERRUPTED
    except (InputError, PoolError, JournalError) as error:
        raise UsageError(str(error)) from None


async def _run(args: argparse.Namespace, job: Job, kind: str, bar: _Bar) -> int:
    partial = f"{args.out}.partial" if args.out else None
    out: TextIO
    try:
        out = open(partial, "w", encoding="utf-8") if partial else sys.stdout
    except OSError as error:
        raise InputError(f"{partial}: {error.strerror or error}") from None
    games = positions = problems = 0
    try:
        async for result in job.results():
            match result:
                case Problem():
                    problems += 1
                    bar.write(f"cb-async analyse: {result}")
                case GameAnalysis():
                    games += 1
                    out.write(json_lines(result) if args.json else annotated_pgn(result))
                case PositionAnalysis():
                    positions += 1
                    out.write(json_lines(result) if args.json else epd_line(result))
            out.flush()
    finally:
        bar.close()
        if out is not sys.stdout:
            out.close()
    if args.out and partial:
        os.replace(partial, args.out)
    progress = job.progress
    done = f"{games} games" if kind == "pgn" else f"{positions} positions"
    print(f"cb-async analyse: {done} analysed ({problems} skipped): {progress.done} positions, "
          f"{progress.searched} searched, {progress.from_journal} from the journal, {progress.shared} shared; "
          f"{progress.workers_lost} workers lost, {progress.workers_replaced} replaced", file=sys.stderr)
    return 0


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


