#!/usr/bin/env python3
"""Set up and run cb-async with nothing but python3: `python3 dev.py engine|test|bench|...`.

The first run makes a virtual environment in `.venv` and installs cb-async into it, editable:
`engine` and the other cb-async commands need only its runtime dependencies; `test` adds the
test extras (pytest and friends) and, where it installs, the `ray` extra. Later runs reuse the environment and install again only when
`pyproject.toml` (or this file) changed, or when `test` needs extras that are not there yet.
The install is editable in setuptools' default mode: a small import hook maps `cb_async` to this
folder and `cb_async.adapters` to `adapters/` (pyproject's package-dir), and makes nothing else
importable, so a checkout imports what the wheel installs (tests/test_checkout_imports.py). Its
price is at start-up: the hook imports pathlib in every interpreter, and a checkout's engine
reaches `uciok` some 7 ms later than with the path entry it replaced (an installed wheel
has no hook; docs/architecture.md, "The package and the clone"). Set-up chatter goes to
stderr, so `python3 dev.py engine` is a clean stdio engine that a GUI can start.

`test` runs the whole suite under every CPython from 3.11 on that the machine has (the one
running dev.py in `.venv`, each other one in `.venvs/3.N`), found on the PATH as `python3.N` or
among pyenv's versions; a supported version that is not there is skipped with a line saying
so. `test-here` runs it under this interpreter alone, for a quick loop while you work.

`docs`, `types`, `tune`, `stress` and `analysis-bench` run the project's own tools (the `devtools/`
folder, which is not installed: see its `__init__`) with this clone on the path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent
#: The versions the project supports and tests (pyproject's classifiers name the same).
SUPPORTED = ("3.11", "3.12", "3.13")
#: Newer versions are tested too when the machine has them.
LOOK_FOR = tuple(f"3.{minor}" for minor in range(11, 16))
#: The tools that work only in a clone: `python3 dev.py NAME` runs `python -m MODULE`.
DEVTOOLS = {"docs": "devtools.docs", "tune": "devtools.tune", "stress": "devtools.stress",
            "analysis-bench": "devtools.analysis_bench", "types": "devtools.typecheck"}


@dataclass(frozen=True)
class Environment:
    """A virtual environment made from one interpreter, with cb-async installed in it."""

    folder: Path
    #: The command of the interpreter that makes it.
    base: tuple[str, ...]

    @property
    def bin(self) -> Path:
        return self.folder / ("Scripts" if os.name == "nt" else "bin")

    @property
    def python(self) -> Path:
        return self.bin / ("python.exe" if os.name == "nt" else "python")

    @property
    def stamp(self) -> Path:
        """What the last install was: the fingerprint of the files it came from, then its extras."""
        return self.folder / ".cb-async-installed"


HERE = Environment(ROOT / ".venv", (sys.executable,))


def fingerprint() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + Path(__file__).read_bytes()).hexdigest()


def installed(env: Environment) -> tuple[str, frozenset[str]]:
    """(fingerprint, extras) of the last install; ("", {}) when there was none."""
    if not env.stamp.exists() or not env.python.exists():
        return "", frozenset()
    words = env.stamp.read_text().split()
    return (words[0], frozenset(words[1:])) if words else ("", frozenset())


def ensure_environment(extras: frozenset[str] = frozenset(), env: Environment | None = None) -> None:
    """Make `env` (`.venv` by default) hold cb-async with at least `extras` ("test"),
    installing only if needed."""
    env = env or HERE
    wanted = fingerprint()
    last, had = installed(env)
    if last == wanted and extras <= had:
        return
    if last != wanted:
        had = frozenset()  # a changed pyproject: what was there may be stale
    # Keep extras that are there already: switching back and forth installs nothing new.
    extras = extras | had
    where = env.folder.relative_to(ROOT) if env.folder.is_relative_to(ROOT) else env.folder.name
    if not env.python.exists():
        print(f"dev.py: creating {where}", file=sys.stderr)
        subprocess.run([*env.base, "-m", "venv", str(env.folder)], check=True, stdout=sys.stderr)
    what = "cb-async and its test dependencies" if "test" in extras else "cb-async"
    print(f"dev.py: installing {what} into {where}", file=sys.stderr)
    target = f"{ROOT}[{','.join(sorted(extras))}]" if extras else str(ROOT)
    subprocess.run(
        [str(env.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-e", target],
        check=True, stdout=sys.stderr,
    )
    if "test" in extras and "ray" not in extras:
        extras = extras | _ray_extra(extras, env)
    env.stamp.write_text(" ".join([wanted, *sorted(extras)]))


def _ray_extra(extras: frozenset[str], env: Environment) -> frozenset[str]:
    """The `ray` extra too, for the tests of `cb-async analyse --cluster`: {"ray"} when it
    installed. Ray is large and has no wheel for every Python; without it those tests are
    skipped with the reason, and nothing fails."""
    target = f"{ROOT}[{','.join(sorted(extras | {'ray'}))}]"
    done = subprocess.run(
        [str(env.python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-e", target],
        stdout=sys.stderr,
    )
    if done.returncode != 0:
        print("dev.py: the ray extra has no install for this Python; the Ray tests will be skipped", file=sys.stderr)
        return frozenset()
    return frozenset({"ray"})


# -- every supported Python -------------------------------------------------------------------


def version_of(command: tuple[str, ...]) -> str | None:
    """"3.N" if `command` runs a CPython, else None (a pyenv shim of a version that is not
    selected fails here, and so does anything that is not there)."""
    try:
        run = subprocess.run([*command, "-c", "import sys; print(sys.implementation.name, '%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    words = run.stdout.split()
    return words[1] if run.returncode == 0 and len(words) == 2 and words[0] == "cpython" else None


def candidates(version: str) -> list[tuple[str, ...]]:
    """Where an interpreter of `version` may be: `python3.N` on the PATH, the Windows launcher,
    and pyenv's versions (newest patch release first)."""
    found: list[tuple[str, ...]] = []
    on_path = shutil.which(f"python{version}")
    if on_path:
        found.append((on_path,))
    if os.name == "nt" and shutil.which("py"):
        found.append(("py", f"-{version}"))
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    if pyenv.is_dir():
        releases = [path for path in pyenv.iterdir() if path.name.startswith(version + ".")
                    and path.name[len(version) + 1:].isdigit()]
        for release in sorted(releases, key=lambda path: int(path.name.rsplit(".", 1)[1]), reverse=True):
            found.append((str(release / "bin" / f"python{version}"),))
    return found


def other_pythons(this_version: str) -> dict[str, tuple[str, ...]]:
    """Every other CPython version from 3.11 on that runs here, with its command."""
    pythons: dict[str, tuple[str, ...]] = {}
    for version in LOOK_FOR:
        if version == this_version:
            continue
        for command in candidates(version):
            if version_of(command) == version:
                pythons[version] = command
                break
    return pythons


def ensure_stockfish() -> None:
    """Debian's Stockfish, for the tests that serve it (`cb-async lichess-engine --engine`):
    installed when running as root on a machine with apt-get (CI); elsewhere those tests are
    skipped with the reason, and this says how to run them."""
    if os.path.exists("/usr/games/stockfish") or shutil.which("stockfish"):
        return
    if os.name != "posix" or os.geteuid() != 0 or not shutil.which("apt-get"):
        print("dev.py: Stockfish is not installed: its tests will be skipped "
              "(sh scripts/install-debian-engines.sh stockfish installs it)", file=sys.stderr)
        return
    print("dev.py: installing Debian's stockfish for its tests", file=sys.stderr, flush=True)
    status = subprocess.call(["sh", str(ROOT / "scripts" / "install-debian-engines.sh"), "stockfish"],
                             stdout=sys.stderr)
    if status != 0:
        print("dev.py: stockfish did not install: its tests will be skipped", file=sys.stderr)


def test_everywhere(pytest_args: list[str]) -> int:
    """The suite under each Python found; non-zero if any run failed."""
    ensure_stockfish()
    this_version = "%d.%d" % sys.version_info[:2]
    runs = {this_version: HERE}
    for version, command in other_pythons(this_version).items():
        runs[version] = Environment(ROOT / ".venvs" / version, command)
    for version in SUPPORTED:
        if version not in runs:
            print(f"dev.py: Python {version} is not on this machine: its run is skipped", file=sys.stderr)
    results: list[tuple[str, int, float]] = []
    for version, env in sorted(runs.items(), key=lambda item: tuple(int(n) for n in item[0].split("."))):
        print(f"dev.py: the test suite under Python {version}", file=sys.stderr, flush=True)
        ensure_environment(frozenset({"test"}), env)
        started = time.monotonic()
        status = subprocess.call([str(env.python), "-m", "pytest", "-q", *pytest_args], cwd=ROOT)
        results.append((version, status, time.monotonic() - started))
    for version, status, seconds in results:
        verdict = "passed" if status == 0 else f"FAILED (pytest status {status})"
        print(f"dev.py: Python {version}: {verdict} in {seconds:.0f} s", file=sys.stderr)
    return next((status for _, status, _ in results if status != 0), 0)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        out = sys.stdout if argv else sys.stderr
        print(__doc__.strip(), file=out)
        print("\ncommands: engine [ARGS...] (the stdio engine), test [PYTEST ARGS...] (the whole suite,"
              "\n          under every Python), test-here [PYTEST ARGS...] (under this Python only),"
              "\n          the clone's own tools (docs, types, tune, stress, analysis-bench),"
              "\n          or any cb-async subcommand (bench, perft, latency ...)", file=out)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command == "test":
        return test_everywhere(rest)
    ensure_environment(frozenset({"test"}) if command == "test-here" else frozenset())
    env = None
    if command in DEVTOOLS:
        # `devtools` is a folder of this clone, not an installed package.
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
        args = [str(HERE.python), "-m", DEVTOOLS[command], *rest]
    elif command == "test-here":
        args = [str(HERE.python), "-m", "pytest", "-q", *rest]
    elif command == "engine":
        args = [str(HERE.bin / "cb-async"), *rest]
    else:
        args = [str(HERE.bin / "cb-async"), command, *rest]
    if os.name == "nt":
        return subprocess.call(args, env=env)
    os.execve(args[0], args, env if env is not None else os.environ)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
