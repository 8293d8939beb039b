"""The clone's own tools (`devtools/`): each runs as `python3 dev.py NAME`, answers a mistake as
the `cb-async` subcommands do (one line on stderr, status 2), and is not a `cb-async`
subcommand any more (the wheel does not hold them)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from cb_async import cli

import dev

ROOT = Path(__file__).resolve().parent.parent

BAD = [
    ["stress", "--commands", "0"],
    ["stress", "--protocol", "telnet"],
    ["stress", "--engine", "/no/such/engine"],
    ["tune", "fit", "/no/such/positions.txt"],
    ["tune", "label", "--pgn", "/no/such.pgn", "--out", "x.txt"],
    ["tune"],
    ["analysis-bench", "--positions", "65"],
    ["docs", "--no-such-flag"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a) for a in BAD])
def test_a_mistake_is_one_line_and_status_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    module = importlib.import_module(dev.DEVTOOLS[argv[0]])
    assert module.main(argv[1:]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"python3 dev.py {argv[0]}"), err


@pytest.mark.parametrize("name", sorted(dev.DEVTOOLS))
def test_each_runs_through_dev_py_from_anywhere(name: str, tmp_path: Path) -> None:
    """From another folder too: dev.py puts the clone on the tool's path."""
    run = subprocess.run([sys.executable, str(ROOT / "dev.py"), name, "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(f"usage: python3 dev.py {name}")


@pytest.mark.parametrize("name", sorted(dev.DEVTOOLS))
def test_none_is_a_cb_async_subcommand(name: str) -> None:
    assert name not in cli.SUBCOMMANDS
    assert not any(sub.module.startswith("devtools") for sub in cli.SUBCOMMANDS.values())


def test_the_type_check_runs_from_another_folder(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(ROOT / "dev.py"), "types", "--cache-dir", str(ROOT / ".mypy_cache")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("Success: no issues found")
