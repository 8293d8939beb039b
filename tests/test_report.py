"""`--report FILE.html`: the page holds what it promises, loads nothing from the network, and
draws its graphs and boards in a real browser (headless Chromium) at a phone's width."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from cb_async.analysis import GameAnalysis, Job, PositionAnalysis, Problem, Result, read_text
from cb_async.analysis.report import render
from cb_async.analysis.suites import Scoreboard
from cb_async.analysis.writers import judgements
from cb_async.limits import Limits
from devtools.browser import chromium, screenshot

DATA = Path(__file__).parent / "data"
GAMES = DATA / "analysis-games.pgn"
SUITE = ('6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - bm Ra8#; id "mate";\n'
         'r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#; id "scholar";\n'
         '6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - am Ra8#; id "missed on purpose";\n')
NEEDS_CHROMIUM = pytest.mark.skipif(chromium() is None, reason="chromium is not installed (.ci/run installs it "
                                                               "as root with apt-get install chromium)")
#: Colours the page draws with: the graph's frame and line, chess.svg's light and dark squares.
GRAPH = [(0x3A, 0x3A, 0x3A), (0x2E, 0x86, 0xC1)]
SQUARES = [(0xFF, 0xCE, 0x9E), (0xD1, 0x8B, 0x47)]


async def _run(job: Job) -> list[Result]:
    async with job:
        return [result async for result in job.results()]


@pytest.fixture(scope="module")
def games_report() -> tuple[str, list[Result]]:
    job = Job(str(GAMES), Limits(nodes=400), workers=2, ordered=True)
    results = asyncio.run(_run(job))
    kept = [result for result in results if isinstance(result, (GameAnalysis, PositionAnalysis, Problem))]
    return render([job], kept, None), results


@pytest.fixture(scope="module")
def suite_report() -> str:
    job = Job(read_text(SUITE), Limits(depth=1), workers=1, ordered=True)
    results = asyncio.run(_run(job))
    board = Scoreboard([job.engine_name or "?"])
    for result in results:
        assert isinstance(result, PositionAnalysis)
        board.add(0, result)
    return render([job], [], board)


def test_the_report_has_each_games_figures_graph_and_a_board_for_every_mistake_and_blunder(
        games_report: tuple[str, list[Result]]) -> None:
    page, results = games_report
    games = [result for result in results if isinstance(result, GameAnalysis)]
    assert page.count("<section class=\"game\">") == len(games) == 3
    assert page.count("<svg class=\"graph\"") == 3
    listed = sum(1 for game in games for mark in judgements(game) if mark in ("mistake", "blunder"))
    assert listed > 0 and page.count("<article class=\"moment") == listed
    assert page.count("(red arrow)") == listed and page.count("Better: <strong>") == listed
    assert "?? Blunder" in page or "? Mistake" in page  # marks in symbols and words, not colour alone
    assert page.count("Accuracy</th>") == 3 and "ACPL" in page
    assert "Not analysed" in page and "variant &#x27;Atomic&#x27;" in page
    assert '<meta name="viewport"' in page


def test_the_report_refers_to_nothing_outside_itself(games_report: tuple[str, list[Result]]) -> None:
    page = games_report[0]
    assert not re.search(r"<(script|link|img|iframe|object)\b", page)
    assert not re.search(r"(src|href)=\"(?!#)", page)  # chess.svg's pieces refer to the page's own #ids
    assert set(re.findall(r"https?://[^\"' )]+", page)) <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}


def test_a_suite_report_has_the_score_table_and_the_missed_positions_boards(suite_report: str) -> None:
    assert "<h2>Test suite</h2>" in suite_report and "Solve rate" in suite_report
    assert "<td class=\"num\">2/3</td><td class=\"num\">66.7%</td>" in suite_report
    assert suite_report.count("<article class=\"moment") == 1 and "missed on purpose" in suite_report
    assert "Expected: <strong>am Ra8#</strong>" in suite_report and "✗ missed" in suite_report
    assert suite_report.count("<svg") == 1  # the missed position's board


def _pixels(png: Path) -> dict[tuple[int, int, int], int]:
    from PIL import Image

    with Image.open(png) as image:
        counts = image.convert("RGB").getcolors(maxcolors=1 << 20)
    assert counts is not None
    return {colour: count for count, colour in counts}


def _near(pixels: dict[tuple[int, int, int], int], colour: tuple[int, int, int]) -> int:
    return sum(count for found, count in pixels.items() if max(abs(a - b) for a, b in zip(found, colour)) <= 6)


@NEEDS_CHROMIUM
def test_chromium_draws_the_graph_and_the_boards_at_a_phone_width_and_the_page_loads_nothing(
        tmp_path: Path, games_report: tuple[str, list[Result]]) -> None:
    page = tmp_path / "report.html"
    page.write_text(games_report[0], encoding="utf-8")
    shot = screenshot(page, tmp_path / "report.png", width=412, height=1600)
    assert shot.requests == []
    pixels = _pixels(shot.png)
    assert len(pixels) > 50  # not a blank page
    assert _near(pixels, GRAPH[0]) > 2000 and _near(pixels, GRAPH[1]) > 50  # the graph's area and line
    assert _near(pixels, SQUARES[0]) > 5000 and _near(pixels, SQUARES[1]) > 5000  # a board


@NEEDS_CHROMIUM
def test_chromium_draws_a_suites_missed_boards(tmp_path: Path, suite_report: str) -> None:
    page = tmp_path / "suite.html"
    page.write_text(suite_report, encoding="utf-8")
    shot = screenshot(page, tmp_path / "suite.png", width=412, height=1200)
    assert shot.requests == []
    pixels = _pixels(shot.png)
    assert _near(pixels, SQUARES[0]) > 5000 and _near(pixels, SQUARES[1]) > 5000


@NEEDS_CHROMIUM
def test_the_network_check_sees_a_page_that_does_load_something(tmp_path: Path) -> None:
    """The check above can fail: a page with an image and a style sheet from elsewhere is caught."""
    page = tmp_path / "leaky.html"
    page.write_text('<!DOCTYPE html><p>x</p><img src="http://example.invalid/a.png">'
                    '<link rel="stylesheet" href="https://cdn.example.invalid/b.css">')
    shot = screenshot(page, tmp_path / "leaky.png", width=412, height=300)
    assert sorted(shot.requests) == ["http://example.invalid/a.png", "https://cdn.example.invalid/b.css"]


def test_the_command_writes_the_report_beside_its_usual_output(tmp_path: Path) -> None:
    import subprocess
    import sys

    report = tmp_path / "r.html"
    done = subprocess.run([sys.executable, "-m", "cb_async", "analyse", str(GAMES), "--nodes", "400",
                           "--out", str(tmp_path / "out.pgn"), "--report", str(report)],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<section class=\"game\">") == 3
    assert "Analysis by cb-async" in page and "Reproducible: " in page
    assert (tmp_path / "out.pgn").read_text().count("[Event ") == 3
    suite = tmp_path / "suite.epd"
    suite.write_text(SUITE)
    scored = subprocess.run([sys.executable, "-m", "cb_async", "analyse", str(suite), "--depth", "1",
                             "--journal", str(tmp_path / "j"), "--report", str(tmp_path / "s.html")],
                            capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert scored.returncode == 0, scored.stderr
    from cb_async.version import __version__

    assert f"| cb-async {__version__} | 2/3 | 66.7% |" in scored.stdout
    assert "<h2>Test suite</h2>" in (tmp_path / "s.html").read_text(encoding="utf-8")
