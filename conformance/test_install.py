"""cb-async installs as a package: a wheel built from this repository, installed into a fresh
virtual environment, holds one top-level package (`cb_async`, the adapters inside it as
`cb_async.adapters`), its data and type marker, and its `cb-async` command is the engine.

Offline and quick: the wheel is built with this environment's own setuptools and wheel (the
test extras) without build isolation, from a copy of the sources (so nothing is built inside
the repository). The fresh environment has no pip of its own: this environment's pip installs
the wheel into it (`pip --python`), and the runtime dependencies come from this environment's
site-packages through a `.pth` line. Lines in a `.pth` add a folder to the path without running
that folder's own `.pth` files, so this repository's editable install stays out of sight.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.engine
import pytest

from conformance.engine_process import engine_command

ROOT = Path(__file__).resolve().parent.parent
LEFT_OUT = shutil.ignore_patterns(".git", ".venv", ".venvs", "build", "dist", "*.egg-info", "__pycache__", ".*_cache",
                                  ".hypothesis", "*.log")


@dataclass
class Installed:
    wheel: Path
    prefix: Path
    python: Path
    script: Path
    site_packages: Path


#: The environment of every command here: without PYTHONPATH, which could put a source tree
#: ahead of the installed package.
CLEAN = {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def run(*args: str | Path, cwd: Path | None = None) -> str:
    result = subprocess.run([str(arg) for arg in args], capture_output=True, text=True, timeout=300, cwd=cwd,
                            env=CLEAN)
    assert result.returncode == 0, f"{args}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    work = tmp_path_factory.mktemp("install")
    source = work / "source"
    shutil.copytree(ROOT, source, ignore=LEFT_OUT)
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
        "--wheel-dir", work / "dist", source)
    (wheel,) = (work / "dist").glob("cb_async-*.whl")
    prefix = work / "venv"
    venv.EnvBuilder(with_pip=False).create(prefix)
    scripts = prefix / ("Scripts" if os.name == "nt" else "bin")
    python = scripts / ("python.exe" if os.name == "nt" else "python")
    run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", "--no-index", wheel)
    site_packages = Path(run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])").strip())
    # The runtime dependencies (chess, anyio, pydantic) from this environment, after the fresh one.
    (site_packages / "zz_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    yield Installed(wheel, prefix, python, scripts / ("cb-async.exe" if os.name == "nt" else "cb-async"),
                    site_packages)


def test_the_wheel_holds_one_top_level_package_with_its_data(installed: Installed) -> None:
    names = zipfile.ZipFile(installed.wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert {name for name in top_level if not name.endswith(".dist-info")} == {"cb_async"}
    for wanted in ("cb_async/adapters/__init__.py", "cb_async/adapters/uci.py", "cb_async/adapters/xboard.py",
                   "cb_async/adapters/cnp.py", "cb_async/adapters/cnp_models.py", "cb_async/data/openings.epd",
                   "cb_async/py.typed", "cb_async/search/searcher.py", "cb_async/tools/perft.py"):
        assert wanted in names
    # Older setuptools put it at the top of .dist-info, newer ones under .dist-info/licenses/.
    assert any(".dist-info/" in name and name.endswith("/LICENSE") for name in names)
    assert not any(name.startswith(("tests/", "conformance/", "adapters/", "docs/", "devtools/")) for name in names)
    # The clone's own tools stay in the clone.
    assert not any(name.startswith(("cb_async/tools/docs", "cb_async/tools/tune", "cb_async/tools/stress",
                                    "cb_async/tools/analysis_bench")) for name in names)


def test_site_packages_gets_cb_async_and_nothing_else(installed: Installed) -> None:
    entries = {entry.name for entry in installed.site_packages.iterdir()} - {"zz_dependencies.pth"}
    assert {name for name in entries if not name.endswith(".dist-info")} == {"cb_async"}
    code = ("import json, importlib.util, cb_async, cb_async.adapters.uci as uci\n"
            "print(json.dumps([cb_async.__file__, uci.__file__, importlib.util.find_spec('adapters') is None]))")
    package, adapter, no_top_level_adapters = json.loads(run(installed.python, "-c", code, cwd=installed.prefix))
    assert Path(package).is_relative_to(installed.site_packages)
    assert Path(adapter).is_relative_to(installed.site_packages / "cb_async" / "adapters")
    assert no_top_level_adapters
    openings = installed.site_packages / "cb_async" / "data" / "openings.epd"
    assert len(openings.read_text().splitlines()) >= 64
    assert (installed.site_packages / "cb_async" / "py.typed").is_file()


def test_the_installed_command_is_the_engine(installed: Installed) -> None:
    """Its `uci` answer is line for line the development engine's, and it plays a legal move."""
    def uci_answer(command: list[str]) -> list[str]:
        result = subprocess.run(command, input="uci\nquit\n", capture_output=True, text=True, timeout=60,
                                cwd=installed.prefix, env=CLEAN)
        assert result.returncode == 0, result.stderr
        return result.stdout.splitlines()

    answer = uci_answer([str(installed.script)])
    assert answer[0].startswith("id name cb-async ") and answer[-1] == "uciok"
    assert answer == uci_answer(engine_command())
    with chess.engine.SimpleEngine.popen_uci([str(installed.script)], timeout=60, cwd=installed.prefix,
                                             env=CLEAN) as engine:
        board = chess.Board()
        result = engine.play(board, chess.engine.Limit(depth=2))
        assert result.move is not None and result.move in board.legal_moves
    assert run(installed.script, "--version").strip() == answer[0].removeprefix("id name ")
    assert run(installed.script, "perft", "startpos", "2").splitlines()[-1] == "Nodes searched: 400"
