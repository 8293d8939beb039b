"""`cb-async`: the stdio engine by default; `perft`, `bench` and friends as subcommands."""

from __future__ import annotations

import argparse
import importlib
import sys

from cb_async.version import __version__

#: Subcommands and the module whose `main(argv) -> int` runs each one.
SUBCOMMANDS = {
    "perft": ("cb_async.tools.perft", "count leaf nodes of the move tree (checks move generation)"),
    "bench": ("cb_async.tools.bench", "search a fixed set of positions; prints nodes and speed"),
    "latency": ("cb_async.tools.latency", "measure start-up, isready and stop latency of the engine"),
    "match": ("cb_async.tools.match", "play engines against each other (UCI or XBoard), with SPRT"),
    "stress": ("cb_async.tools.stress", "random interleavings of commands into the engine; checks every answer"),
    "cnp-schema": ("cb_async.adapters.cnp", "print the JSON Schema of CNP, the Chess Node Protocol"),
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cb-async",
        description="A chess engine daemon: UCI, XBoard/CECP v2 or CNP on stdin/stdout.",
        epilog="subcommands:\n" + "\n".join(f"  {name:<10} {help}" for name, (_, help) in SUBCOMMANDS.items())
        + "\n\nRun 'cb-async SUBCOMMAND --help' for their arguments.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"cb-async {__version__}")
    parser.add_argument("--protocol", choices=("auto", "uci", "xboard", "cnp"), default="auto",
                        help="the protocol to speak; auto decides by the first line (default: auto)")
    parser.add_argument("--log", metavar="FILE", help="append every line in and out, timestamped, to FILE")
    parser.add_argument("--max-time-ms", type=int, metavar="MS",
                        help="CNP: bound every search to MS milliseconds (the maxTimeMs option)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in SUBCOMMANDS:
        module = importlib.import_module(SUBCOMMANDS[args[0]][0])
        return int(module.main(args[1:]) or 0)
    options = _parser().parse_args(args)
    if options.max_time_ms is not None and options.max_time_ms < 1:
        _parser().error("--max-time-ms must be at least 1")
    from cb_async import daemon

    return daemon.run(options.protocol, options.log, options.max_time_ms)


if __name__ == "__main__":
    sys.exit(main())
