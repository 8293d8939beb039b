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


# -- generated blocks ----------------------------------------------------------------------------

from devtools import docs as generated_docs  # noqa: E402

GENERATED = generated_docs.blocks()
#: Blocks that must stay generated: removing one would let its doc go stale unseen.
REQUIRED = {
    ("README.md", "uci-session 5"), ("README.md", "cnp-search 3"),
    ("protocols.md", "uci-handshake"), ("protocols.md", "options uci"), ("protocols.md", "xboard-handshake"),
    ("cnp.md", "cnp-hello"), ("cnp.md", "options cnp"), ("cnp.md", "cnp-session"), ("embedding.md", "options embedded"),
    ("gui-compat.md", "options uci"), ("lichess.md", "options uci"),
    ("levels.md", "levels"), ("levels.md", "level-budgets 800 1500 1850"),
}


@pytest.fixture(scope="module")
def engine_says() -> generated_docs.Generated:
    return generated_docs.Generated()


def test_the_docs_keep_their_generated_blocks() -> None:
    present = {(block.path.name, block.spec) for block in GENERATED}
    assert REQUIRED <= present, f"generated blocks missing: {sorted(REQUIRED - present)}"


@pytest.mark.parametrize("block", GENERATED, ids=[block.name for block in GENERATED])
def test_generated_block_is_what_the_engine_says(block: generated_docs.Block,
                                                engine_says: generated_docs.Generated) -> None:
    assert engine_says.agrees(block), (
        f"{block.name} is stale: run `python3 dev.py docs` to rewrite it\n"
        f"--- now ---\n{engine_says(block.spec)}")


def test_volatile_figures_are_all_that_is_forgiven() -> None:
    line = "info depth 5 seldepth 8 multipv 1 score cp -10 nodes 2290 nps 25634 hashfull 5 tbhits 0 time 89 pv g8f6"
    assert generated_docs.comparable(line) == generated_docs.comparable(line.replace("nps 25634", "nps 1"))
    assert generated_docs.comparable(line) != generated_docs.comparable(line.replace("nodes 2290", "nodes 2291"))
    assert generated_docs.comparable('{"timeMs":13,"nodes":615}') == generated_docs.comparable('{"timeMs":7,"nodes":615}')


def test_rewriting_a_doc_fixes_a_stale_block(tmp_path: Path, engine_says: generated_docs.Generated) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("Intro\n\n<!-- generated: options cnp -->\n| stale |\n<!-- end generated -->\n\nOutro\n")
    assert generated_docs.rewrite(doc, engine_says)
    text = doc.read_text()
    assert text.startswith("Intro\n\n<!-- generated: options cnp -->\n| option |") and text.endswith("Outro\n")
    assert "`maxTimeMs`" in text and "`UCI_Chess960`" not in text
    assert not generated_docs.rewrite(doc, engine_says)


# -- commands shown but not run ---------------------------------------------------------------------


def console_commands() -> list[tuple[str, str]]:
    """`cb-async ...` commands of the `console` blocks (long runs: the tests do not run them),
    with the shell lines that define what they use (variables, functions)."""
    found = []
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        for block in re.findall(r"```console\n(.*?)```", path.read_text(), re.S):
            setup: list[str] = []
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0].strip()
                if re.match(r"^\w+=|^\w+\(\) \{", line):
                    setup.append(line)
                elif line.startswith("cb-async "):
                    found.append((path.name, "\n".join([*setup, line])))
    return found


CONSOLE = console_commands()


@pytest.mark.parametrize("doc,script", CONSOLE, ids=[f"{d}:{s.splitlines()[-1][:50]}" for d, s in CONSOLE])
def test_documented_long_command_is_accepted(doc: str, script: str, tmp_path: Path) -> None:
    """Parsed by the real command line (a renamed or removed flag fails), not run."""
    check = f"{shlex.quote(sys.executable)} -c 'import sys; from cb_async import cli; cli.parse(sys.argv[1:])'"
    shell = f"cb_async_parses() {{ {check} \"$@\"; }}\n" + re.sub(r"^cb-async ", "cb_async_parses ", script, flags=re.M)
    run = subprocess.run(["bash", "-c", shell], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{doc}: {script}\n{run.stderr}"


def test_the_console_blocks_are_found() -> None:
    assert {doc for doc, _ in CONSOLE} >= {"strength.md", "levels.md"}


def test_the_licence_file_is_the_mit_licence_pyproject_names() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    licence = (ROOT / "LICENSE").read_text()
    assert project["license"] == {"text": "MIT"}
    assert licence.startswith("MIT License\n")
    holders = ", ".join(author["name"] for author in project["authors"])
    assert f"Copyright (c) 2026 {holders}\n" in licence
    assert "THE SOFTWARE IS PROVIDED \"AS IS\", WITHOUT WARRANTY OF ANY KIND" in licence


def test_the_level_range_in_the_prose_is_the_engines() -> None:
    """What the generated tables cannot cover: the range of `UCI_Elo` written in sentences."""
    from cb_async.search.levels import DEFAULT_ELO, MAX_ELO, MIN_ELO

    patterns = {
        r"`UCI_Elo` \((\d+)\.\.(\d+), default (\d+)\)": (MIN_ELO, MAX_ELO, DEFAULT_ELO),
        r"(\d+) to (\d+) on the scale of": (MIN_ELO, MAX_ELO),
        r'\{"minElo": (\d+), "maxElo": (\d+)\}': (MIN_ELO, MAX_ELO),
    }
    found = 0
    for path in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        text = " ".join(path.read_text().split())
        for pattern, wanted in patterns.items():
            for match in re.finditer(pattern, text):
                found += 1
                assert tuple(map(int, match.groups())) == wanted, f"{path.name}: {match.group()}"
    assert found >= 4
