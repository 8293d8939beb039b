"""`cb-async conformance` tested on an engine that misbehaves on demand, and run on cb-async.

Each fault of `faulty_engine.py` reproduces one published engine bug; the whole suite of its
protocol runs against it and exactly the check named for the fault must fail. With no fault
every check passes, and so does cb-async. The bounds are the tool's own, except XBoard's 2 s
feature wait, which a test engine starting among many on a loaded machine may miss.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cb_async.tools.gui_habits import bounds
from cb_async.tools.gui_habits.registry import Protocol, load, select
from cb_async.tools.gui_habits.runner import Result, run_check, run_checks
from conformance.engine_process import engine_command
from conformance.faulty_engine import FAULTS

HERE = Path(__file__).parent
DOCS = HERE.parent / "docs" / "conformance.md"
JOBS = 4
#: Checks of the fault runs at once (the test engine is idle most of the time).
FAULT_JOBS = 6
TEST_FEATURES = 10.0

#: (protocol, fault) -> the one check that must catch it.
CAUGHT_BY: dict[tuple[Protocol, str], str] = {
    ("uci", "no-id-author"): "uci.startup.handshake",
    ("uci", "info-before-uciok"): "uci.startup.nothing-before-uciok",
    ("uci", "spin-default-out-of-range"): "uci.startup.option-lines",
    ("uci", "exits-on-xboard"): "uci.startup.arena-autodetect",
    ("uci", "crlf"): "uci.input.crlf",
    ("uci", "single-spaces"): "uci.input.whitespace",
    ("uci", "exits-on-unknown"): "uci.input.unknown-commands",
    ("uci", "empty-value-crash"): "uci.options.every-option-at-start",
    ("uci", "no-value-crash"): "uci.options.string-without-value",
    ("uci", "setoption-waits-for-search"): "uci.options.multipv-mid-search",
    ("uci", "move-list-limit"): "uci.game.clock-game",
    ("uci", "rejects-ep-square"): "uci.game.en-passant-square",
    ("uci", "ignores-searchmoves"): "uci.game.searchmoves",
    ("uci", "castles-king-takes-rook"): "uci.game.castles-e1g1",
    ("uci", "uppercase-promotion"): "uci.game.promotion",
    ("uci", "needs-ucinewgame"): "uci.stop.fritz-no-ucinewgame",
    ("uci", "idle-stop-leaks"): "uci.stop.fritz-no-ucinewgame",
    ("uci", "stop-before-search-lost"): "uci.stop.stop-right-after-go",
    ("uci", "isready-after-search"): "uci.stop.isready-while-searching",
    ("uci", "bestmove-twice"): "uci.stop.stop-after-bestmove",
    ("uci", "quit-ignored-while-searching"): "uci.stop.quit-while-searching",
    ("uci", "eof-silent"): "uci.stop.end-of-input",
    ("uci", "slow-tiny-clock"): "uci.time.tiny-clock",
    ("uci", "movetime-ignored"): "uci.time.movetime",
    ("uci", "bestmove-while-pondering"): "uci.ponder.holds-bestmove",
    ("uci", "ponder-stop-silent"): "uci.ponder.ponder-miss",
    ("uci", "ponderhit-keeps-pondering"): "uci.ponder.ponderhit-clock",
    ("uci", "multipv-unordered"): "uci.multipv.numbered-best-first",
    ("uci", "score-without-cp"): "uci.output.info-lines",
    ("uci", "no-bestmove-without-moves"): "uci.output.no-legal-move",
    ("uci", "chess960-king-destination"): "uci.chess960.king-takes-rook",
    ("xboard", "no-done"): "xboard.startup.features-done",
    ("xboard", "no-setboard-feature"): "xboard.startup.required-features",
    ("xboard", "unquoted-myname"): "xboard.startup.feature-syntax",
    ("xboard", "usermove-needs-accepted"): "xboard.startup.no-accepted-needed",
    ("xboard", "crlf"): "xboard.input.crlf",
    ("xboard", "exits-on-unknown"): "xboard.input.unknown-command",
    ("xboard", "error-on-random"): "xboard.housekeeping.xboard-game-init",
    ("xboard", "error-on-rating"): "xboard.housekeeping.python-chess-commands",
    ("xboard", "needs-go-after-move"): "xboard.play.engine-plays-black",
    ("xboard", "move-before-board-update"): "xboard.play.move-race",
    ("xboard", "rejects-own-moves-in-force"): "xboard.play.book-moves-in-force",
    ("xboard", "illegal-move-silent"): "xboard.play.illegal-move",
    ("xboard", "force-keeps-thinking"): "xboard.thinking.force-stops",
    ("xboard", "result-keeps-thinking"): "xboard.thinking.result-stops",
    ("xboard", "new-keeps-thinking"): "xboard.thinking.new-stops",
    ("xboard", "no-pong-while-pondering"): "xboard.ponder.pong-while-pondering",
    ("xboard", "easy-moves"): "xboard.ponder.easy-stops-pondering",
    ("xboard", "ponder-miss-stale-move"): "xboard.ponder.ponder-miss",
    ("xboard", "ponder-hit-no-move"): "xboard.ponder.ponder-hit",
    ("xboard", "moves-in-analyze"): "xboard.analyze.never-moves",
    ("xboard", "analyze-ignores-undo"): "xboard.analyze.follows-moves-and-undo",
    ("xboard", "st-integer-only"): "xboard.time.level-and-st-forms",
    ("xboard", "slow-tiny-clock"): "xboard.time.tiny-clock",
    ("xboard", "rejects-o-o"): "xboard.chess960.castling",
    ("xboard", "quit-ignored-while-thinking"): "xboard.end.quit-while-thinking",
    ("xboard", "eof-hangs"): "xboard.end.end-of-input",
    ("xboard", "thinking-bad-line"): "xboard.output.thinking-lines",
}

#: Checks no fault of the test engine targets (a fault there would break every other check).
UNTARGETED = {"xboard.play.engine-plays-on-go"}

#: cb-async's checks that fail today, each with the issue that changes it: the lead removes an
#: entry when that change lands (this test then fails until the entry is gone).
CB_ASYNC_KNOWN_FAILURES: dict[str, str] = {}


def faulty(protocol: str, fault: str | None = None) -> list[str]:
    return [sys.executable, str(HERE / "faulty_engine.py"), "--protocol", protocol,
            *(["--fault", fault] if fault else [])]


@pytest.fixture(autouse=True)
def patient_features(monkeypatch: pytest.MonkeyPatch) -> None:
    """XBoard's 2 s for the features is a rule for engines, but a test engine started among many
    on a loaded machine may take longer just to start Python."""
    monkeypatch.setattr(bounds, "FEATURES", TEST_FEATURES)


def run(protocol: Protocol, command: list[str], jobs: int = JOBS) -> list[Result]:
    return run_checks(select(load(), protocol, None), command, jobs)


@pytest.fixture(scope="module")
def fault_runs() -> Iterator[dict[tuple[Protocol, str], list[Result]]]:
    """Every fault's whole suite, run at once: (protocol, fault) -> its results.

    One pool serves all of them, so the engines' start-ups and the failing checks' waits overlap
    (the test engine idles while it "searches"); each result is still one fresh engine.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(bounds, "FEATURES", TEST_FEATURES)
        with ThreadPoolExecutor(max_workers=FAULT_JOBS) as pool:
            futures = {key: [pool.submit(run_check, check, faulty(*key)) for check in select(load(), key[0], None)]
                       for key in sorted(CAUGHT_BY)}
            results = {key: [future.result() for future in batch] for key, batch in futures.items()}
    yield results


def failed(results: list[Result]) -> dict[str, str]:
    return {result.check.id: result.message.splitlines()[0] for result in results if result.status == "FAIL"}


def test_every_fault_names_one_check_and_every_check_has_a_fault() -> None:
    ids = {check.id for check in load()}
    assert {fault for _, fault in CAUGHT_BY} == set(FAULTS)
    assert set(CAUGHT_BY.values()) <= ids
    assert ids - set(CAUGHT_BY.values()) == UNTARGETED


@pytest.mark.parametrize("protocol", ["uci", "xboard"])
def test_with_no_fault_every_check_passes(protocol: Protocol) -> None:
    results = run(protocol, faulty(protocol))
    assert failed(results) == {}
    assert [r.check.id for r in results if r.status == "SKIP"] == []


@pytest.mark.parametrize(("protocol", "fault"), sorted(CAUGHT_BY), ids=[f"{p}-{f}" for p, f in sorted(CAUGHT_BY)])
def test_each_fault_fails_exactly_its_check(fault_runs: dict[tuple[Protocol, str], list[Result]],
                                            protocol: Protocol, fault: str) -> None:
    results = fault_runs[protocol, fault]
    assert set(failed(results)) == {CAUGHT_BY[protocol, fault]}, failed(results)


@pytest.mark.parametrize("protocol", ["uci", "xboard"])
def test_cb_async_passes_every_check(protocol: Protocol) -> None:
    results = run(protocol, [*engine_command(), "--protocol", protocol], jobs=1)
    known = {check: why for check, why in CB_ASYNC_KNOWN_FAILURES.items() if check.startswith(protocol)}
    assert set(failed(results)) == set(known), failed(results)


# -- the command line and the docs ---------------------------------------------------------------

def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*engine_command(), "conformance", *args], capture_output=True, text=True, timeout=120)


def test_list_shows_every_check_and_the_docs_list_them_all() -> None:
    listed = cli("--list")
    assert listed.returncode == 0
    ids = re.findall(r"^  (\S+)\s", listed.stdout, re.M)
    assert ids == [check.id for check in load()]
    doc = DOCS.read_text()  # the docs generator keeps the block fresh; the ids must be --list's
    section = re.search(r"<!-- generated: conformance-checks -->\n(.*?)<!-- end generated -->", doc, re.S)
    assert section is not None
    assert re.findall(r"^- `(\S+)`:", section.group(1), re.M) == ids


def test_a_failure_exits_1_with_the_lines_around_it_and_a_junit_report(tmp_path: Path) -> None:
    report = tmp_path / "report.xml"
    engine = " ".join(faulty("uci", "bestmove-twice"))
    result = cli("--engine", engine, "--only", "uci.stop.*", "--junit", str(report), "--timeout-scale", "0.5")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(r"^  FAIL  uci\.stop\.stop-after-bestmove ", result.stdout, re.M)
    assert re.search(r"ms > stop\n(.*\n)*?.*ms < bestmove", result.stdout)
    assert "5 passed, 1 failed, 0 skipped" in result.stdout.replace("6 checks: ", "")
    root = ElementTree.parse(report).getroot()
    assert root.get("tests") == "6" and root.get("failures") == "1"
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert cases["stop-after-bestmove"].find("failure") is not None


def test_a_clean_run_exits_0_and_skips_what_the_engine_does_not_claim(tmp_path: Path) -> None:
    result = cli("--engine", " ".join(faulty("uci")), "--only", "handshake", "--only", "uci.ponder")
    assert result.returncode == 0, result.stdout
    assert "4 checks: 4 passed" in result.stdout


def test_bad_use_exits_2_with_one_line() -> None:
    for args in (["--only", "x"], ["--engine", "x", "--only", "no-such-check"], ["--engine", "'"],
                 ["--engine", "x", "--jobs", "0"], ["--engine", "x", "--protocol", "cnp"]):
        result = cli(*args)
        assert result.returncode == 2, args
        assert result.stdout == "" and "Traceback" not in result.stderr


def test_an_engine_that_cannot_start_fails_every_check_with_the_reason() -> None:
    result = cli("--engine", "/no/such/engine", "--only", "uci.startup")
    assert result.returncode == 1
    assert "cannot start the engine" in result.stdout
