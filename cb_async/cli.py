"""`cb-async`: the stdio engine by default; `perft`, `bench` and friends as subcommands.

A GUI starts the engine and waits for `uciok`, so the engine's path through here stays cheap:
this module imports no tool. The subcommand table names modules; a subcommand's module is
imported, and its arguments added to its parser, only when that subcommand is on the command
line (its `--help` included). The engine's own flags may come before a subcommand
(`cb-async --log x perft startpos 2`): the subcommand runs and a note says it ignores them.

A subcommand is a module with `add_arguments(parser)` and `run(args) -> int`. Every mistake on the command line ends the same way: one
line on stderr saying what is wrong, exit status 2, never a traceback. A tool reports what
it finds only after parsing (an unreadable file, values that do not fit together) by raising
`UsageError`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn, Protocol, cast

from cb_async.version import __version__

PROG = "cb-async"


class Subcommand:
    """A subcommand's module and its line in `cb-async --help` (a plain class: a NamedTuple
    costs the engine's start-up a fifth of a millisecond)."""

    __slots__ = ("module", "summary")

    def __init__(self, module: str, summary: str) -> None:
        self.module = module
        self.summary = summary


#: Every subcommand: its module and the line `cb-async --help` shows for it.
SUBCOMMANDS: dict[str, Subcommand] = {
    "perft": Subcommand("cb_async.tools.perft", "count leaf nodes of the move tree (checks move generation)"),
    "bench": Subcommand("cb_async.tools.bench", "search built-in positions to a fixed depth: the Bench node signature and speed"),
    "latency": Subcommand("cb_async.tools.latency", "measure start-up, isready and stop latency of the engine"),
    "match": Subcommand("cb_async.tools.match", "play engines against each other (UCI or XBoard), with SPRT"),
    "analyse": Subcommand("cb_async.tools.analyse", "annotate PGN games or evaluate EPD/FEN positions with many engines"),
    "conformance": Subcommand("cb_async.tools.gui_habits.command",
                              "check any UCI or XBoard engine against the GUI habits that break engines"),
    "lichess-engine": Subcommand("cb_async.lichess.command",
                                 "serve cb-async (or any UCI engine) to Lichess's analysis board"),
    "eval-data": Subcommand("cb_async.training.data", "make the learned evaluation's training set: games labelled by Stockfish"),
    "eval-train": Subcommand("cb_async.training.train", "train the learned evaluation on eval-data files (needs the train extra)"),
    "eval-score": Subcommand("cb_async.training.score",
                             "score nets on eval-data files: the training loss against none's, without PyTorch"),
    "cnp-schema": Subcommand("cb_async.tools.cnp_schema", "print the JSON Schema of CNP, the Chess Node Protocol"),
}

#: The engine's own flags (their `dest`s, apart from any tool's) and their defaults: given with
#: a subcommand, they earn a note.
ENGINE_FLAGS = {"engine_protocol": ("--protocol", "auto"), "engine_log": ("--log", None),
                "engine_max_time_ms": ("--max-time-ms", None)}


class UsageError(Exception):
    """A mistake on the command line found after parsing: printed as one line, exit status 2."""


class SubcommandModule(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports a mistake as one line (usage goes to `--help`)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


# -- argument types shared by the engine and the tools ------------------------------------------


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [minimum, maximum]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number is wanted, not {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            bounds = f"between {minimum} and {maximum}" if maximum is not None else f"at least {minimum}"
            raise argparse.ArgumentTypeError(f"must be {bounds}, not {value}")
        return value

    return parse


def number(minimum: float = 0.0) -> Callable[[str], float]:
    """An argparse type: a number (fractions allowed) of at least `minimum`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a number is wanted, not {text!r}") from None
        if not value >= minimum:  # also refuses nan
            raise argparse.ArgumentTypeError(f"must be at least {minimum:g}, not {text}")
        return value

    return parse


def appendable_file(text: str) -> str:
    """An argparse type: a file that can be appended to, or created. Checked now, so that a wrong
    path is a clear message rather than a failure later; nothing is created here."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"{text} is a folder; give a file in it, e.g. {os.path.join(text, 'cb-async.log')}")
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.exists(text):
        if not os.access(text, os.W_OK):
            raise argparse.ArgumentTypeError(f"cannot write to {text}: permission denied")
    elif not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"cannot write to {text}: no such folder {folder}")
    elif not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot create {text}: folder {folder} is not writable")
    return text


def readable_file(text: str) -> str:
    """An argparse type: a file that exists and can be read."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    try:
        with open(text, "rb"):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot read {text}: {error.strerror}") from None
    return text


def existing_folder(text: str) -> str:
    """An argparse type: a folder that exists."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"no such folder: {text}")
    return text


# -- the parser ----------------------------------------------------------------------------------


class _Subcommands(argparse._SubParsersAction):  # type: ignore[type-arg]
    """Subparsers whose arguments are added when their subcommand is chosen, not before."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: str | Sequence[object] | None, option_string: str | None = None) -> None:
        assert isinstance(values, list) and values
        name = str(values[0])
        if name in SUBCOMMANDS:
            module = importlib.import_module(SUBCOMMANDS[name].module)
            subparser = self._name_parser_map[name]
            if not getattr(subparser, "_arguments_added", False):
                if module.__doc__:  # its first paragraph; add_arguments may say more
                    subparser.description = module.__doc__.split("\n\n")[0]
                cast(SubcommandModule, module).add_arguments(subparser)
                setattr(subparser, "_arguments_added", True)
        super().__call__(parser, namespace, values, option_string)


def build_parser(subcommands: bool = True) -> ArgumentParser:
    """The whole command line; without `subcommands`, only the engine's flags (and a `--help`
    that only notes that it was asked for): what a GUI's start of the engine needs."""
    parser = ArgumentParser(
        prog=PROG,
        description="A chess engine: UCI, XBoard/CECP v2 or CNP on stdin/stdout; "
                    "with a subcommand, one of the tools below.",
        epilog=f"Run '{PROG} SUBCOMMAND --help' for a subcommand's arguments.",
        add_help=subcommands,
    )
    if not subcommands:
        parser.add_argument("-h", "--help", action="store_true", dest="wants_help")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    engine = parser.add_argument_group("the engine")
    engine.add_argument("--protocol", dest="engine_protocol", choices=("auto", "uci", "xboard", "cnp"), default="auto",
                        help="the protocol to speak; auto decides by the first line (default: auto)")
    engine.add_argument("--log", dest="engine_log", metavar="FILE", type=appendable_file,
                        help="append every line in and out, timestamped, to FILE")
    engine.add_argument("--max-time-ms", dest="engine_max_time_ms", type=whole_number(1), metavar="MS",
                        help="CNP: bound every search to MS milliseconds (the maxTimeMs option)")
    if subcommands:
        choices = parser.add_subparsers(dest="subcommand", title="subcommands", action=_Subcommands,
                                        parser_class=ArgumentParser)
        for name, subcommand in SUBCOMMANDS.items():
            choices.add_parser(name, help=subcommand.summary, description=subcommand.summary)
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The parsed command line; SystemExit(0) after --help or --version, SystemExit(2) on a
    mistake (its one line already printed).

    The engine's flags alone are parsed first: that is the whole command line when a GUI starts
    the engine. Only when words are left over (a subcommand, or a mistake to explain) or help is
    asked for is the whole parser built."""
    words = list(argv)
    engine_only, rest = build_parser(subcommands=False).parse_known_args(words)
    if not rest and not engine_only.wants_help:
        engine_only.subcommand = None
        return engine_only
    return build_parser().parse_args(words)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse(sys.argv[1:] if argv is None else argv)
    except SystemExit as done:  # --help, --version, or a mistake already reported
        return done.code if isinstance(done.code, int) else 2
    if args.subcommand is None:
        if args.engine_log is not None and not _opens_for_append(args.engine_log):
            return 2
        from cb_async import daemon

        return daemon.run(args.engine_protocol, args.engine_log, args.engine_max_time_ms)
    return run_subcommand(args)


def _opens_for_append(path: str) -> bool:
    """The engine's log really opens (what `appendable_file` cannot foresee: a device, a
    full disk); if not, one line says why."""
    try:
        with open(path, "a", encoding="utf-8"):
            return True
    except OSError as error:
        print(f"{PROG}: argument --log: cannot write to {path}: {error.strerror}", file=sys.stderr)
        return False


def run_subcommand(args: argparse.Namespace) -> int:
    name: str = args.subcommand
    ignored = [flag for dest, (flag, default) in ENGINE_FLAGS.items() if getattr(args, dest) != default]
    if ignored:
        print(f"{PROG}: note: {' and '.join(ignored)} {'is' if len(ignored) == 1 else 'are'} for the engine; "
              f"'{name}' ignores {'it' if len(ignored) == 1 else 'them'}", file=sys.stderr)
    module = importlib.import_module(SUBCOMMANDS[name].module)
    try:
        return int(cast(SubcommandModule, module).run(args))
    except UsageError as error:
        print(f"{PROG} {name}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
