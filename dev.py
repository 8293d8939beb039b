#!/usr/bin/env python3
"""Set up and run cb-async with nothing but python3: `python3 dev.py engine|test|bench|...`.

The first run makes a virtual environment in `.venv` and installs cb-async into it, editable:
`engine` and the other cb-async commands need only its runtime dependencies; `test` adds the
test extras (pytest and friends). Later runs reuse the environment and install again only when
`pyproject.toml` (or this file) changed, or when `test` needs extras that are not there yet.
The install is editable in `compat` mode (a plain path entry, no import hook), which keeps the
engine's start-up fast. Set-up chatter goes to stderr, so `python3 dev.py engine` is a clean
stdio engine that a GUI can start.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
#: What the last install was: the fingerprint of the files it came from, then its extras.
STAMP = VENV / ".cb-async-installed"


def fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + Path(__file__).read_bytes()).hexdigest()


def installed() -> tuple[str, frozenset[str]]:
    """(fingerprint, extras) of the last install; ("", {}) when there was none."""
    if not STAMP.exists() or not PYTHON.exists():
        return "", frozenset()
    words = STAMP.read_text().split()
    return (words[0], frozenset(words[1:])) if words else ("", frozenset())


def ensure_environment(extras: frozenset[str] = frozenset()) -> None:
    """Make `.venv` hold cb-async with at least `extras` ("test"), installing only if needed."""
    wanted = fingerprint()
    last, had = installed()
    if last == wanted and extras <= had:
        return
    if last != wanted:
        had = frozenset()  # a changed pyproject: what was there may be stale
    # Keep extras that are there already: switching back and forth installs nothing new.
    extras = extras | had
    if not PYTHON.exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    what = "cb-async and its test dependencies" if "test" in extras else "cb-async"
    print(f"dev.py: installing {what} into .venv", file=sys.stderr)
    target = f"{ROOT}[{','.join(sorted(extras))}]" if extras else str(ROOT)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "--config-settings", "editable_mode=compat", "-e", target],
        check=True, stdout=sys.stderr,
    )
    STAMP.write_text(" ".join([wanted, *sorted(extras)]))


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        out = sys.stdout if argv else sys.stderr
        print(__doc__.strip(), file=out)
        print("\ncommands: engine [ARGS...] (the stdio engine), test [PYTEST ARGS...] (the whole suite),"
              "\n          or any cb-async subcommand (bench, perft, latency ...)", file=out)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    ensure_environment(frozenset({"test"}) if command == "test" else frozenset())
    if command == "test":
        args = [str(PYTHON), "-m", "pytest", "-q", *rest]
    elif command == "engine":
        args = [str(BIN / "cb-async"), *rest]
    else:
        args = [str(BIN / "cb-async"), command, *rest]
    if os.name == "nt":
        return subprocess.call(args)
    os.execv(args[0], args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
