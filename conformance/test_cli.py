"""The command line: --version, --help, bad use, --log, and protocol selection."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from conformance.engine_process import EngineProcess, engine_command


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([*engine_command(), *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert re.fullmatch(r"cb-async \d+\.\d+\.\d+\n", result.stdout)


def test_help_names_the_protocols_and_subcommands() -> None:
    result = run("--help")
    assert result.returncode == 0
    for word in ("--protocol", "--log", "perft", "bench", "latency"):
        assert word in result.stdout


def test_bad_use_exits_2_with_a_message_on_stderr() -> None:
    for args in (["--protocol", "telnet"], ["--no-such-flag"], ["--max-time-ms", "0"]):
        result = run(*args)
        assert result.returncode == 2, args
        assert result.stdout == ""
        assert "cb-async" in result.stderr


def test_log_has_every_line_in_and_out(tmp_path: Path) -> None:
    log = tmp_path / "engine.log"
    with EngineProcess("--log", str(log)) as engine:
        engine.send("isready")
        engine.expect("readyok")
        engine.send("bogus")
        engine.expect("info string unknown command: bogus")
        engine.send("quit")
        assert engine.wait_exit() == 0
    entries = [line.split(None, 2)[2] for line in log.read_text().splitlines()]
    assert entries == ["<< isready", ">> readyok", "<< bogus", ">> info string unknown command: bogus", "<< quit"]


def test_end_of_input_before_any_command_exits_cleanly() -> None:
    result = run(stdin="")
    assert result.returncode == 0
    assert result.stdout == ""
