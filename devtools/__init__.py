"""The project's own tools: they work only in a clone, or serve only cb-async's development, so
the wheel does not install them. Run them from a clone:

    python3 dev.py docs [--check]        rewrite the docs' generated blocks     (devtools.docs)
    python3 dev.py types                 mypy --strict, the package as installed (devtools.typecheck)
    python3 dev.py tune label|fit ...    fit the evaluation's weights (Texel)   (devtools.tune)
    python3 dev.py stress ...            random command interleavings, checked  (devtools.stress)
    python3 dev.py analysis-bench ...    what batch analysis costs here         (devtools.analysis_bench)

or `.venv/bin/python -m devtools.NAME ...` from the clone's root. Why each is here:

- docs rewrites README.md and docs/*.md, which only a clone has;
- types hands mypy the clone's files under their installed names (the test suite runs it);
- tune prints weights to paste into `cb_async/search/` and reads data that
  `scripts/make-tuning-data.sh` makes in a clone;
- stress is the engine of the race tests (`conformance/test_races.py`): it serves the suite;
- analysis-bench measures our own batch-analysis pipeline against a harness around Stockfish,
  for docs/analysis.md;
- browser (a module, no command) drives headless Chromium for the report's test and the docs'
  screenshot of it.

What users run (the engine, analyse, bench, perft, latency, match, conformance, cnp-schema) is
in `cb_async.tools`, behind `cb-async SUBCOMMAND`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from cb_async.cli import ArgumentParser, UsageError


def command_line(prog: str, doc: str | None, add_arguments: Callable[[argparse.ArgumentParser], None],
                 run: Callable[[argparse.Namespace], int], argv: Sequence[str] | None = None) -> int:
    """Parse `argv` with the tool's arguments and run it, ending a mistake as `cb-async`'s
    subcommands do: one line on stderr, status 2."""
    parser = ArgumentParser(prog=prog, description=(doc or "").split("\n\n")[0] or None)
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
        return int(run(args))
    except SystemExit as done:  # --help, or a mistake already reported
        return done.code if isinstance(done.code, int) else 2
    except UsageError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
