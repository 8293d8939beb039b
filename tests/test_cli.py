"""The command line, in process: every subcommand has --help, flags go in any sensible order,
and every mistake is one line on stderr with exit status 2, never a traceback."""

from __future__ import annotations

import argparse
import subprocess
import sys
import types
from pathlib import Path

import pytest

from cb_async import cli
from cb_async.cli import SUBCOMMANDS, Subcommand, UsageError, main

PYTHON = sys.executable


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_every_subcommand_has_help(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([name, "--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"usage: cb-async {name}")
    assert err == ""


def test_top_level_help_lists_every_subcommand_with_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    usage = out.split("\n\n")[0]
    for name, subcommand in SUBCOMMANDS.items():
        assert name in usage
        assert " ".join(subcommand.summary.split()[:3]) in " ".join(out.split())
    for flag in ("--protocol", "--log", "--max-time-ms", "--version"):
        assert flag in out


def test_engine_flags_may_come_before_a_subcommand(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log", str(tmp_path / "x.log"), "perft", "startpos", "2"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[-1] == "Nodes searched: 400"
    assert err == "cb-async: note: --log is for the engine; 'perft' ignores it\n"


def test_a_subcommand_alone_gets_no_note(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["perft", "startpos", "1"]) == 0
    assert capsys.readouterr().err == ""


def test_a_tools_own_flag_does_not_clash_with_the_engines(monkeypatch: pytest.MonkeyPatch) -> None:
    """`conformance --protocol` is the tool's; `--protocol` before the subcommand is the engine's."""
    args = cli.parse(["--protocol", "uci", "conformance", "--protocol", "xboard"])
    assert (args.engine_protocol, args.protocol) == ("uci", "xboard")
    args = cli.parse(["conformance"])
    assert (args.engine_protocol, args.protocol) == ("auto", None)


def engines(*extra: str) -> list[str]:
    """Two --engine that exist (this Python), then `extra`: reaches the checks after them."""
    return ["match", "--engine", f"cmd={PYTHON}", "--engine", f"cmd={PYTHON}", *extra]


BAD = [
    ["--log", "/no/such/dir/x.log"],
    ["--log", "{tmp}"],
    ["--max-time-ms", "abc"],
    ["--max-time-ms", "0"],
    ["--protocol", "telnet"],
    ["--no-such-flag"],
    ["bogus"],
    ["uci"],
    ["perft"],
    ["perft", "startpos"],
    ["perft", "startpos", "x"],
    ["perft", "startpos", "0"],
    ["perft", "startpos", "-3"],
    ["perft", "not a fen", "2"],
    ["perft", "8/8/8/8/8/8/8/8 w - - 0 1", "1"],
    ["perft", "startpos", "2", "--log", "x.log"],
    ["bench", "x"],
    ["bench", "0"],
    ["bench", "--positions-5s", "x"],
    ["bench", "--positions-5s", "0"],
    ["bench", "3", "--positions-5s"],
    ["bench", "2", "--eval-file", "/no/such.net"],
    ["bench", "--positions-5s", "0.01", "--eval-file", "{tmp}/empty.epd"],
    ["latency", "--starts", "-1"],
    ["latency", "--think", "soon"],
    ["latency", "--engine", "/no/such/engine"],
    ["latency", "--engine", "'unbalanced"],
    ["match"],
    ["match", "--engine", f"cmd={PYTHON}", "--depth", "1"],
    ["match", "--engine", "name=a", "--engine", f"cmd={PYTHON}", "--depth", "1"],
    ["match", "--engine", "cmd=/no/such/engine", "--engine", f"cmd={PYTHON}", "--depth", "1"],
    ["match", "--engine", "cmd=", "--engine", f"cmd={PYTHON}", "--depth", "1"],
    ["match", "--engine", f"cmd={PYTHON}", "proto=telnet", "--engine", f"cmd={PYTHON}", "--depth", "1"],
    engines(),
    engines("--tc", "abc"),
    engines("--tc", "0+1"),
    engines("--movetime", "0"),
    engines("--games", "0"),
    engines("--depth", "1", "--sprt", "elo0=x"),
    engines("--depth", "1", "--sprt", "bogus=1"),
    engines("--depth", "1", "--sprt", "elo0=5", "elo1=0"),
    engines("--depth", "1", "--resign", "score"),
    engines("--depth", "1", "--openings", "/no/such.epd"),
    engines("--depth", "1", "--openings", "{tmp}/empty.epd"),
    engines("--depth", "1", "--pgn", "/no/such/dir/games.pgn"),
    engines("--depth", "1", "--tb", "/no/such/folder"),
    ["match", "--engine", f"cmd={PYTHON} -c pass", "--engine", f"cmd={PYTHON} -c pass", "--depth", "1"],
    ["eval-score", "/no/such.jsonl", "--net", "none"],
    ["eval-score", "{tmp}/empty.epd", "--net", "none"],
    ["eval-score", "{tmp}/empty.epd"],
    ["eval-score", "{tmp}/empty.epd", "--net", "none", "--positions", "0"],
    ["cnp-schema", "extra"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a)[:60] for a in BAD])
def test_a_mistake_is_one_line_and_status_2(argv: list[str], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty.epd").write_text("")
    argv = [word.replace("{tmp}", str(tmp_path)) for word in argv]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith("cb-async"), err
    assert "Traceback" not in err


def test_the_engine_path_parses_without_building_the_subcommands(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[bool] = []
    original = cli.build_parser

    def spy(subcommands: bool = True) -> cli.ArgumentParser:
        built.append(subcommands)
        return original(subcommands)

    monkeypatch.setattr(cli, "build_parser", spy)
    args = cli.parse(["--protocol", "uci", "--max-time-ms", "500"])
    assert (args.subcommand, args.engine_protocol, args.engine_max_time_ms, args.engine_log) == (None, "uci", 500, None)
    assert built == [False]
    cli.parse(["perft", "startpos", "1"])
    assert built == [False, False, True]


def test_the_engine_imports_no_tool() -> None:
    """A GUI's start of the engine loads none of the tools (nor their parsers)."""
    code = ("import sys\nfrom cb_async import cli, daemon\ncli.parse(['--protocol', 'uci'])\n"
            "print(sorted(m for m in sys.modules if m.startswith('cb_async.tools')))")
    run = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_the_answer_to_uci_loads_no_python_chess() -> None:
    """What runs before the first `uciok` (the runner's fork, the option table) leaves
    python-chess to the worker: loading it there cost some 30 ms of every GUI's start."""
    code = ("import sys\nfrom cb_async import cli, daemon\ncli.parse(['--protocol', 'uci'])\n"
            "daemon._uci_identity()\nfrom cb_async.search.settings import SearchSettings\n"
            "print(sorted(m for m in sys.modules if m == 'chess' or m.startswith('chess.')))")
    run = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_subcommands_help_loads_only_that_tool() -> None:
    code = ("import sys\nfrom cb_async import cli\ntry:\n    cli.parse(['perft', '--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('cb_async.tools')), file=sys.stderr)")
    run = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stderr.strip() == "['cb_async.tools', 'cb_async.tools.perft']"


def fake_tool(monkeypatch: pytest.MonkeyPatch, name: str, **functions: object) -> None:
    module = types.ModuleType(f"fake_tools.{name}", f"`cb-async {name}`: a tool for this test.")
    for attribute, function in functions.items():
        setattr(module, attribute, function)
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setitem(SUBCOMMANDS, name, Subcommand(module.__name__, "a tool for this test"))


def test_a_new_subcommand_is_one_table_entry(monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--times", type=cli.whole_number(1), default=1)

    def run(args: argparse.Namespace) -> int:
        if args.times > 3:
            raise UsageError("at most 3 times")
        print("hello " * args.times)
        return 0

    fake_tool(monkeypatch, "greet", add_arguments=add_arguments, run=run)
    assert main(["greet", "--times", "2"]) == 0
    assert capsys.readouterr().out == "hello hello \n"
    assert main(["greet", "--times", "4"]) == 2
    assert capsys.readouterr().err == "cb-async greet: at most 3 times\n"
    assert main(["--help"]) == 0
    assert "greet" in capsys.readouterr().out
    assert main(["greet", "--help"]) == 0
    assert "--times" in capsys.readouterr().out


def test_interrupting_a_tool_is_not_a_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        pass

    def run(args: argparse.Namespace) -> int:
        raise KeyboardInterrupt

    fake_tool(monkeypatch, "slow", add_arguments=add_arguments, run=run)
    assert main(["slow"]) == 130


@pytest.mark.skipif(not Path("/proc/version").is_file(), reason="needs Linux's /proc")
def test_a_log_that_passes_the_checks_but_cannot_open_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """/proc/version looks writable to root, but opening it to append fails: no traceback."""
    assert main(["--log", "/proc/version"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("cb-async: argument --log: cannot write to /proc/version") and err.count("\n") == 1
