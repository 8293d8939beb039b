"""The docs say what is true: options in the example config exist, tables match the code, and
every `cb-async` command shown runs."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import chess.engine
import pytest
import yaml

from cb_async.session import transition_table_markdown
from conformance.engine_process import engine_command

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def declared_uci_options() -> set[str]:
    with chess.engine.SimpleEngine.popen_uci(engine_command(), timeout=30) as engine:
        return set(engine.options)


def test_every_option_in_the_lichess_bot_config_is_declared() -> None:
    config = yaml.safe_load((DOCS / "lichess-bot.yml").read_text())
    wanted = set(config["engine"]["uci_options"])
    assert wanted, "the example config sets no options"
    missing = wanted - declared_uci_options()
    assert not missing, f"lichess-bot would refuse to start: {sorted(missing)}"
    assert config["engine"]["protocol"] == "uci" and config["engine"]["ponder"] is True
    assert config["challenge"]["concurrency"] == 1


def test_options_table_in_lichess_docs_is_declared() -> None:
    table = re.findall(r"^\| `([^`]+)` \|", (DOCS / "lichess.md").read_text(), re.M)
    assert table and set(table) <= declared_uci_options()


def test_architecture_shows_the_session_table() -> None:
    assert transition_table_markdown() in (DOCS / "architecture.md").read_text()


def shell_commands() -> list[tuple[str, str]]:
    """`cb-async ...` lines in the `sh` blocks of the README and docs: the tests run them all.
    Long benchmark runs (matches, calibration) are written in `console` blocks instead."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for block in re.findall(r"```sh\n(.*?)```", path.read_text(), re.S):
            for line in block.splitlines():
                command = line.split("#", 1)[0].strip()
                if re.match(r"^(printf .*\| )?(\.venv/bin/)?cb-async\b", command):
                    found.append((path.name, command))
    return found


COMMANDS = shell_commands()


@pytest.mark.parametrize("doc,command", COMMANDS, ids=[f"{d}:{c[:40]}" for d, c in COMMANDS])
def test_documented_command_runs(doc: str, command: str, tmp_path: Path) -> None:
    binary = " ".join(shlex.quote(part) for part in engine_command())
    command = re.sub(r"(\.venv/bin/)?cb-async\b", binary, command, count=1)
    run = subprocess.run(command, shell=True, cwd=tmp_path, input="isready\nquit\n",
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, f"{doc}: {command}\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"
