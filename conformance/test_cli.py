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


def test_a_bad_log_path_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    for path, says in ((str(tmp_path / "no" / "such" / "x.log"), "no such folder"),
                       (str(tmp_path), "is a folder")):
        result = run("--log", path, stdin="uci\nquit\n")
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1 and says in result.stderr, result.stderr
        assert result.stderr.startswith("cb-async: argument --log: ")


def test_help_of_each_subcommand_from_the_real_binary() -> None:
    for name in ("bench", "perft", "latency", "match", "analyse", "conformance", "cnp-schema"):
        result = run(name, "--help")
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith(f"usage: cb-async {name}")
        assert result.stderr == ""


def test_engine_flags_before_a_subcommand(tmp_path: Path) -> None:
    result = run("--log", str(tmp_path / "x.log"), "perft", "startpos", "2")
    assert result.returncode == 0
    assert result.stdout.splitlines()[-1] == "Nodes searched: 400"
    assert result.stderr == "cb-async: note: --log is for the engine; 'perft' ignores it\n"
