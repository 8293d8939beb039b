#!/usr/bin/env python3
"""Set up and run cb-async with nothing but python3: `python3 dev.py engine|test|bench|...`.

The first run makes a virtual environment in `.venv` and installs cb-async into it (editable,
with its test dependencies); later runs reuse it and reinstall only when `pyproject.toml`
(or this file) changed. The install is editable in `compat` mode (a plain path entry, no
import hook), which keeps the engine's start-up fast. Set-up chatter goes to stderr, so `python3 dev.py engine` is a clean stdio engine
that a GUI can start.
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
STAMP = VENV / ".cb-async-installed"


def ensure_environment() -> None:
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + Path(__file__).read_bytes()).hexdigest()
    if STAMP.exists() and STAMP.read_text() == wanted and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("dev.py: creating .venv", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    print("dev.py: installing cb-async and its test dependencies into .venv", file=sys.stderr)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--config-settings", "editable_mode=compat", "-e", f"{ROOT}[test]"],
        check=True, stdout=sys.stderr,
    )
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print("\ncommands: engine [ARGS...] (the stdio engine), test [PYTEST ARGS...] (the whole suite),"
              "\n          or any cb-async subcommand (bench, perft, latency ...)")
        return 0 if argv else 2
    ensure_environment()
    command, rest = argv[0], argv[1:]
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
