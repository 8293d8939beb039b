"""`cb-async conformance --engine CMD [--protocol uci|xboard]`: the GUI-habit checks, for any engine.

    cb-async conformance --engine stockfish
    cb-async conformance --engine "fairy-stockfish" --protocol xboard --junit report.xml
    cb-async conformance --list
    cb-async conformance --engine ./myengine --only 'uci.ponder.*' --only crlf

Prints one line per check (PASS, FAIL or SKIP) under the habit it stands in for, with the lines
sent and received around each failure; exits 1 if any check failed, 0 otherwise, 2 on bad use.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.registry import PROTOCOLS, Protocol, load, select
from cb_async.tools.gui_habits.report import TextReport, list_checks, write_junit
from cb_async.tools.gui_habits.runner import run_checks


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", metavar="CMD",
                        help="the engine's command line, one string split as a shell would (quote it)")
    parser.add_argument("--protocol", choices=PROTOCOLS, default=None,
                        help="the protocol to test (default: uci)")
    parser.add_argument("--only", metavar="PATTERN", action="append",
                        help="run only checks whose id matches (a glob such as 'uci.ponder.*', a group "
                             "'uci.stop', or a check's last part 'crlf'); may be repeated")
    parser.add_argument("--list", action="store_true", help="list the checks (of --protocol, or all) and exit")
    parser.add_argument("--junit", metavar="FILE", type=Path, help="also write a JUnit XML report to FILE")
    parser.add_argument("--jobs", metavar="N", type=int, default=1,
                        help="run N checks at once (default 1: timings are fairest one at a time)")
    parser.add_argument("--timeout-scale", metavar="X", type=float, default=1.0,
                        help="multiply every waiting bound by X (like cutechess's timeoutscale; default 1)")
    parser.add_argument("--verbose", action="store_true", help="show the transcript of every check")


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except BrokenPipeError:  # `... | head`: the reader has gone, and so do we, quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _run(args: argparse.Namespace) -> int:
    checks = load()
    if args.list:
        for listed in PROTOCOLS:
            if args.protocol in (None, listed):
                list_checks(select(checks, listed, args.only), sys.stdout)
        return 0
    if not args.engine:
        print("cb-async conformance: --engine CMD is needed (or --list)", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("cb-async conformance: --jobs must be at least 1", file=sys.stderr)
        return 2
    try:
        command = shlex.split(args.engine)
    except ValueError as error:
        print(f"cb-async conformance: cannot split --engine {args.engine!r}: {error}", file=sys.stderr)
        return 2
    if not command:
        print("cb-async conformance: --engine is empty", file=sys.stderr)
        return 2
    if args.timeout_scale <= 0:
        print("cb-async conformance: --timeout-scale must be above 0", file=sys.stderr)
        return 2
    bounds.scale(args.timeout_scale)
    protocol: Protocol = "xboard" if args.protocol == "xboard" else "uci"
    chosen = select(checks, protocol, args.only)
    if not chosen:
        print(f"cb-async conformance: no {protocol} check matches {args.only}", file=sys.stderr)
        return 2
    report = TextReport(sys.stdout, args.verbose)
    report.header(args.engine, protocol, len(chosen))
    results = run_checks(chosen, command, args.jobs, report.result)
    report.summary(results)
    if args.junit is not None:
        try:
            write_junit(args.junit, args.engine, protocol, results)
        except OSError as error:
            print(f"cb-async conformance: cannot write {args.junit}: {error.strerror}", file=sys.stderr)
            return 2
    return 1 if any(result.status == "FAIL" for result in results) else 0
