"""`--report FILE.html`: one page a person looks at, self-contained, that opens from disk.

Everything is inline: the style sheet, the evaluation graphs (SVG drawn here: a polyline and a
few shapes need no library) and the boards (python-chess's `chess.svg`, the notation's owner).
Nothing is fetched: no script, no font, no image from anywhere, so the page works offline, in a
mail attachment, or years later.

Per game: each side's accuracy and average centipawn loss (lichess's rules, `annotate`), the
graph of White's winning chances across the moves with the mistakes and blunders marked, and
for each of those the board before the move, the move played, the engine's better move and its
line. For a test suite: the score table and each missed position's board. Marks are written
out in words and symbols (`?? Blunder`), shapes differ on the graph, and the arrows are named
in text, so that nothing is told by colour alone; the layout is one column on a phone.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

import chess
import chess.svg

from cb_async.analysis import annotate
from cb_async.analysis.model import GameAnalysis, PositionAnalysis, Problem
from cb_async.analysis.suites import Scoreboard, budget_text, expected, verdict
from cb_async.analysis.writers import VARIATION_PLIES, game_statistics, judgements, legal_line
from cb_async.version import __version__

if TYPE_CHECKING:
    from cb_async.analysis.job import Job

#: Marks listed with a board (inaccuracies are only counted: a page of them helps nobody).
LISTED = (annotate.BLUNDER, annotate.MISTAKE)
SYMBOLS = {annotate.INACCURACY: "?!", annotate.MISTAKE: "?", annotate.BLUNDER: "??"}
PLAYED_COLOUR = "#c0392bcc"  # red: the move played
BETTER_COLOUR = "#1e8449cc"  # green: the engine's move
BOARD_SIZE = 320
GRAPH_WIDTH, GRAPH_HEIGHT = 640, 200

STYLE = """
:root { color-scheme: light; --ink: #1b1b1b; --muted: #555; --line: #d0d0d0; --white: #f7f7f7; --black: #333; }
* { box-sizing: border-box; }
body { font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 0.75rem; max-width: 62rem; background: #fff; }
h1 { font-size: 1.4rem; margin: 0.5rem 0; } h2 { font-size: 1.2rem; margin: 1.5rem 0 0.5rem; }
h3 { font-size: 1rem; margin: 0.25rem 0; }
.meta { color: var(--muted); font-size: 0.9rem; }
section.game, section.suite { border-top: 2px solid var(--line); margin-top: 1.5rem; }
table { border-collapse: collapse; margin: 0.5rem 0; font-variant-numeric: tabular-nums; }
caption { text-align: left; }
th, td { border: 1px solid var(--line); padding: 0.25rem 0.5rem; text-align: left; }
td.num { text-align: right; }
.scroll { overflow-x: auto; }
svg.graph { width: 100%; height: auto; max-width: 40rem; display: block; }
.moments { display: grid; grid-template-columns: repeat(auto-fill, minmax(17rem, 1fr)); gap: 1rem; }
.moment { border: 1px solid var(--line); border-radius: 6px; padding: 0.5rem; }
.moment svg { width: 100%; height: auto; display: block; }
.blunder { border-left: 6px solid #c0392b; } .mistake { border-left: 6px solid #e67e22; }
.ok { color: #1e8449; } .miss { color: #c0392b; }
.legend { font-size: 0.9rem; color: var(--muted); }
code { font-size: 0.95em; }
"""


def write_report(path: str, jobs: Sequence[Job], results: Sequence[GameAnalysis | PositionAnalysis | Problem],
                 scoreboard: Scoreboard | None) -> None:
    """Write the report for a finished run (all its results, in input order)."""
    page = render(jobs, results, scoreboard)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(page)


def render(jobs: Sequence[Job], results: Sequence[GameAnalysis | PositionAnalysis | Problem],
           scoreboard: Scoreboard | None) -> str:
    first = jobs[0]
    limits = first.limits
    budget = budget_text(limits.nodes, limits.depth, limits.movetime)
    engines = ", ".join(job.engine_name or job.engine.describe() for job in jobs)
    verdict_text = ("Reproducible: the same report for any number of workers and after a resume"
                    if first.reproducible else "Not reproducible: another run may differ")
    parts = [f"<h1>Analysis by {_e(engines)}</h1>",
             f"<p class=\"meta\">{_e(budget)} per position. {_e(verdict_text)} ({_e(first.reproducible_why)}). "
             f"Written by cb-async {_e(__version__)}.</p>"]
    games = [result for result in results if isinstance(result, GameAnalysis)]
    if games:
        parts.append("<p class=\"legend\">On each board the <strong>red arrow</strong> is the move played and "
                     "the <strong>green arrow</strong> the engine's better move; both are also written out. "
                     "On the graphs, a <strong>triangle</strong> marks a blunder (??) and a <strong>circle</strong> "
                     "a mistake (?).</p>")
    for game in games:
        parts.append(_game(game))
    positions = [result for result in results if isinstance(result, PositionAnalysis)]
    if positions and scoreboard is None:
        parts.append(_positions(positions))
    if scoreboard is not None:
        parts.append(_suite(scoreboard, budget))
    problems = [result for result in results if isinstance(result, Problem)]
    if problems:
        parts.append("<h2>Not analysed</h2><ul>" + "".join(f"<li>{_e(str(p))}</li>" for p in problems) + "</ul>")
    title = "Analysis: " + (", ".join(_game_title(game) for game in games[:3]) if games else "positions")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{_e(title)}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


# -- games ---------------------------------------------------------------------------------------


def _game_title(analysis: GameAnalysis) -> str:
    headers = analysis.item.game.headers
    return f"{headers.get('White', '?')} - {headers.get('Black', '?')}"


def _game(analysis: GameAnalysis) -> str:
    headers = analysis.item.game.headers
    accuracy, acpl = game_statistics(analysis)
    marks = judgements(analysis)
    counts = {side: {mark: 0 for mark in SYMBOLS} for side in (chess.WHITE, chess.BLACK)}
    board = analysis.item.game.board()
    movers = []
    for move, mark in zip(analysis.item.moves, marks):
        movers.append(board.turn)
        if mark is not None:
            counts[board.turn][mark] += 1
        board.push(move)
    rows = []
    for side, name in ((chess.WHITE, "White"), (chess.BLACK, "Black")):
        player = headers.get(name, "?")
        side_accuracy = accuracy[side]
        side_acpl = acpl[side]
        rows.append(f"<tr><th scope=\"row\">{name}<br><span class=\"meta\">{_e(player)}</span></th>"
                    f"<td class=\"num\">{'-' if side_accuracy is None else f'{side_accuracy:.1f}%'}</td>"
                    f"<td class=\"num\">{'-' if side_acpl is None else side_acpl}</td>"
                    + "".join(f"<td class=\"num\">{counts[side][mark]}</td>" for mark in
                              (annotate.INACCURACY, annotate.MISTAKE, annotate.BLUNDER)) + "</tr>")
    meta = " · ".join(_e(headers[key]) for key in ("Event", "Site", "Date", "Result")
                      if headers.get(key) and headers[key] not in ("?", "????.??.??"))
    table = ("<div class=\"scroll\"><table><caption class=\"meta\">?! inaccuracies, ? mistakes, ?? blunders"
             "</caption><thead><tr><th>Side</th><th>Accuracy</th><th>ACPL</th>"
             "<th><abbr title=\"inaccuracies\">?!</abbr></th><th><abbr title=\"mistakes\">?</abbr></th>"
             "<th><abbr title=\"blunders\">??</abbr></th></tr></thead><tbody>"
             + "".join(rows) + "</tbody></table></div>")
    moments = _moments(analysis, marks)
    listed = ("<h3>Mistakes and blunders</h3><div class=\"moments\">" + "".join(moments) + "</div>") if moments \
        else "<p>No mistake or blunder.</p>"
    return (f"<section class=\"game\"><h2>Game {analysis.item.number}: {_e(_game_title(analysis))}</h2>"
            f"<p class=\"meta\">{meta}</p>{table}{graph(analysis, marks)}{listed}</section>")


def graph(analysis: GameAnalysis, marks: Sequence[str | None]) -> str:
    """White's winning chances after each ply as an SVG line, mistakes and blunders marked."""
    board = analysis.item.game.board()
    first = board.turn
    percents = [annotate.win_percent(annotate.white_eval(evaluation.score, first if index % 2 == 0 else not first))
                for index, evaluation in enumerate(analysis.evaluations)]
    plies = max(1, len(percents) - 1)
    left, right, top, bottom = 34, 8, 8, 22
    width, height = GRAPH_WIDTH - left - right, GRAPH_HEIGHT - top - bottom

    def x(ply: int) -> float:
        return left + width * ply / plies

    def y(percent: float) -> float:
        return top + height * (1 - percent / 100)

    points = " ".join(f"{x(ply):.1f},{y(percent):.1f}" for ply, percent in enumerate(percents))
    area = f"{x(0):.1f},{y(50):.1f} {points} {x(len(percents) - 1):.1f},{y(50):.1f}"
    shapes = []
    for index, mark in enumerate(marks):
        if mark not in LISTED:
            continue
        px, py = x(index + 1), y(percents[index + 1])
        move_text = _move_label(analysis, index)
        label = f"{move_text}{SYMBOLS[mark]} {annotate.TITLES[mark]}"
        if mark == annotate.BLUNDER:
            shape = (f"<polygon points=\"{px:.1f},{py - 7:.1f} {px - 6:.1f},{py + 5:.1f} {px + 6:.1f},{py + 5:.1f}\" "
                     "fill=\"#c0392b\" stroke=\"#000\" stroke-width=\"1\"/>")
        else:
            shape = f"<circle cx=\"{px:.1f}\" cy=\"{py:.1f}\" r=\"5\" fill=\"#e67e22\" stroke=\"#000\" stroke-width=\"1\"/>"
        shapes.append(f"<g><title>{_e(label)}</title>{shape}</g>")
    ticks = []
    step = max(1, round(plies / 2 / 8)) * 2
    for ply in range(0, len(percents), step):
        ticks.append(f"<text x=\"{x(ply):.1f}\" y=\"{GRAPH_HEIGHT - 6}\" text-anchor=\"middle\">{ply // 2 + 1}</text>")
    description = (f"Evaluation graph of game {analysis.item.number}: White's winning chances after each of "
                   f"{len(percents) - 1} plies, from {percents[0]:.0f}% to {percents[-1]:.0f}%.")
    return (f"<svg class=\"graph\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {GRAPH_WIDTH} {GRAPH_HEIGHT}\" "
            f"role=\"img\" aria-label=\"{_e(description)}\" font-size=\"11\" font-family=\"sans-serif\">"
            f"<rect x=\"{left}\" y=\"{top}\" width=\"{width}\" height=\"{height}\" fill=\"#3a3a3a\"/>"
            f"<polygon points=\"{area}\" fill=\"#f2f2f2\"/>"
            f"<rect x=\"{left}\" y=\"{top}\" width=\"{width}\" height=\"{height / 2:.1f}\" fill=\"none\"/>"
            f"<line x1=\"{left}\" y1=\"{y(50):.1f}\" x2=\"{left + width}\" y2=\"{y(50):.1f}\" stroke=\"#888\" "
            "stroke-dasharray=\"4 3\"/>"
            f"<polyline points=\"{points}\" fill=\"none\" stroke=\"#2e86c1\" stroke-width=\"2\"/>"
            + "".join(shapes)
            + f"<text x=\"2\" y=\"{top + 10}\">White</text><text x=\"2\" y=\"{top + height}\">Black</text>"
            + "".join(ticks) + "</svg>")


def _move_label(analysis: GameAnalysis, index: int) -> str:
    """`12.` or `12...` and the move in SAN, for the move at `index` of the game."""
    board = analysis.item.game.board()
    for move in analysis.item.moves[:index]:
        board.push(move)
    number = board.fullmove_number
    prefix = f"{number}." if board.turn == chess.WHITE else f"{number}..."
    return prefix + board.san(analysis.item.moves[index])


def _moments(analysis: GameAnalysis, marks: Sequence[str | None]) -> list[str]:
    out = []
    board = analysis.item.game.board()
    for index, (move, mark) in enumerate(zip(analysis.item.moves, marks)):
        if mark in LISTED:
            assert mark is not None
            out.append(_moment(analysis, index, board, move, mark))
        board.push(move)
    return out


def _moment(analysis: GameAnalysis, index: int, board: chess.Board, move: chess.Move, mark: str) -> str:
    before, after = analysis.evaluations[index], analysis.evaluations[index + 1]
    label = _move_label(analysis, index)
    best = chess.Move.from_uci(before.best) if before.best else None
    arrows = [chess.svg.Arrow(move.from_square, move.to_square, color=PLAYED_COLOUR)]
    better = line = ""
    if best is not None and board.is_legal(best):
        arrows.append(chess.svg.Arrow(best.from_square, best.to_square, color=BETTER_COLOUR))
        better = board.san(best)
        line = _san_line(board, before.pv[:VARIATION_PLIES])
    mover = board.turn
    shown_before = _pawns(annotate.white_eval(before.score, mover))
    shown_after = _pawns(annotate.white_eval(after.score, not mover))
    svg = chess.svg.board(board, arrows=arrows, flipped=mover == chess.BLACK, size=BOARD_SIZE,
                          lastmove=board.peek() if board.move_stack else None)
    return (f"<article class=\"moment {mark}\"><h3>{_e(label)}{SYMBOLS[mark]} {annotate.TITLES[mark]}</h3>"
            f"<p>Played <strong>{_e(label)}</strong> (red arrow); evaluation {shown_before} → {shown_after} "
            f"(White's view).</p>"
            + (f"<p>Better: <strong>{_e(better)}</strong> (green arrow). Line: <code>{_e(line)}</code></p>"
               if better else "")
            + f"{svg}</article>")


def _pawns(evaluation: annotate.WhiteEval) -> str:
    if evaluation.mate is not None:
        return f"#{evaluation.mate}" if evaluation.mate > 0 else f"#-{-evaluation.mate}"
    return f"{(evaluation.cp or 0) / 100:+.2f}"


def _san_line(board: chess.Board, pv: Sequence[str]) -> str:
    line = board.copy(stack=False)
    words: list[str] = []
    for move in legal_line(board, pv):
        if line.turn == chess.WHITE:
            words.append(f"{line.fullmove_number}.")
        elif not words:
            words.append(f"{line.fullmove_number}...")
        words.append(line.san(move))
        line.push(move)
    return " ".join(words)


# -- positions and suites ------------------------------------------------------------------------


def _positions(positions: Sequence[PositionAnalysis]) -> str:
    rows = []
    for analysis in positions:
        board = analysis.item.board
        evaluation = analysis.evaluation
        best = board.san(chess.Move.from_uci(evaluation.best)) if evaluation.best else "-"
        score = _pawns(annotate.white_eval(evaluation.score, board.turn))
        ident = analysis.item.operations.get("id", "")
        rows.append(f"<tr><td class=\"num\">{analysis.item.number}</td><td>{_e(str(ident))}</td>"
                    f"<td>{_e(best)}</td><td class=\"num\">{score}</td>"
                    f"<td><code>{_e(_san_line(board, evaluation.pv[:VARIATION_PLIES]))}</code></td></tr>")
    return ("<section class=\"suite\"><h2>Positions</h2><div class=\"scroll\"><table><thead><tr><th>Line</th>"
            "<th>id</th><th>Best</th><th>Eval (White)</th><th>Line</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table></div></section>")


def _suite(scoreboard: Scoreboard, budget: str) -> str:
    tallies = scoreboard.tallies()
    points = scoreboard.has_points
    head = "<tr><th>Engine</th><th>Solved</th><th>Solve rate</th>" + ("<th>Points</th>" if points else "") + "</tr>"
    rows = []
    for tally in tallies:
        rows.append(f"<tr><th scope=\"row\">{_e(tally.engine)}</th><td class=\"num\">{tally.solved}/{tally.positions}</td>"
                    f"<td class=\"num\">{100 * tally.rate:.1f}%</td>"
                    + (f"<td class=\"num\">{tally.points}/{tally.max_points}</td>" if points else "") + "</tr>")
    missed = []
    for row in scoreboard.ordered():
        answers = []
        solved_by_all = True
        for name, answer in zip(scoreboard.engines, row.answers):
            if answer is None:
                solved_by_all = False
                answers.append(f"<li>{_e(name)}: <span class=\"miss\">✗ failed</span></li>")
                continue
            scored = verdict(row.item, answer.evaluation.best)
            solved_by_all &= scored.solved
            san = row.item.board.san(scored.move) if scored.move is not None else "-"
            mark = "<span class=\"ok\">✓ solved</span>" if scored.solved else "<span class=\"miss\">✗ missed</span>"
            answers.append(f"<li>{_e(name)}: <strong>{_e(san)}</strong> {mark}</li>")
        if solved_by_all:
            continue
        board = row.item.board
        want = expected(row.item)
        arrows = [chess.svg.Arrow(move.from_square, move.to_square, color=BETTER_COLOUR) for move in want.best]
        svg = chess.svg.board(board, arrows=arrows, flipped=board.turn == chess.BLACK, size=BOARD_SIZE)
        ident = row.item.operations.get("id", "")
        missed.append(f"<article class=\"moment mistake\"><h3>Line {row.item.number} {_e(str(ident))}</h3>"
                      f"<p>Expected: <strong>{_e(want.describe(board))}</strong>"
                      + (" (green arrow)" if want.best else "") + f"; {'White' if board.turn else 'Black'} to move.</p>"
                      f"<ul>{''.join(answers)}</ul>{svg}</article>")
    return ("<section class=\"suite\"><h2>Test suite</h2>"
            f"<p class=\"meta\">{len(scoreboard.rows)} positions, {_e(budget)} per position.</p>"
            f"<div class=\"scroll\"><table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table></div>"
            + (f"<h3>Missed by at least one engine ({len(missed)})</h3><div class=\"moments\">{''.join(missed)}</div>"
               if missed else "<p>Every engine solved every position.</p>")
            + "</section>")


def _e(text: str) -> str:
    return html.escape(text, quote=True)
