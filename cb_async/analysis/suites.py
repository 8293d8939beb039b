"""Test suites scored: an EPD whose positions say which moves are right (`bm`) or wrong (`am`).

A position is solved when the engine's move is one of its `bm` moves (if it has any) and none
of its `am` moves (if it has any), as WAC, Bratko-Kopec and every EPD suite since count them.
Suites that give points per move (the Strategic Test Suite) are scored in points as well, from
any of their forms: `c8 "10 3 ..."` with `c9 "d4d5 f3f4 ..."` (UCI) or with `c7 "d5 f4 ..."`
(SAN), or `c0 "Nxd4=10, Bxf3=3, ..."` (SAN); a move not listed scores 0 and the position's maximum is its best move's
points. Several engines run the same suite at the same budget and are scored side by side.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import chess

from cb_async.analysis.model import PositionAnalysis, PositionInput

_SCORED = re.compile(r"(?:^|[\s;])(bm|am)\s")
_POINTS = re.compile(r"^\s*([^=,\s]+)\s*=\s*(\d+)\s*$")


def is_suite_line(line: str) -> bool:
    """A cheap test: does this EPD line carry `bm` or `am` (the file is then a suite)?"""
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith(("%", "#")) and bool(_SCORED.search(stripped))


def is_suite(path: str) -> bool:
    """Whether an EPD file is a test suite (any line with `bm` or `am`)."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        return any(is_suite_line(line) for line in handle)


@dataclass(frozen=True, slots=True)
class Expected:
    """What a position's opcodes say: the right moves, the wrong ones, the points per move."""

    best: frozenset[chess.Move] = frozenset()
    avoid: frozenset[chess.Move] = frozenset()
    points: dict[chess.Move, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def scored(self) -> bool:
        return bool(self.best or self.avoid or self.points)

    @property
    def max_points(self) -> int:
        return max(self.points.values(), default=0)

    def describe(self, board: chess.Board) -> str:
        """`bm Qg6` / `am Rxf2` in SAN, as the suite writes it."""
        parts = []
        if self.best:
            parts.append("bm " + " ".join(sorted(board.san(move) for move in self.best)))
        if self.avoid:
            parts.append("am " + " ".join(sorted(board.san(move) for move in self.avoid)))
        return "; ".join(parts)


def expected(item: PositionInput) -> Expected:
    ops = item.operations
    board = item.board
    best = frozenset(move for move in _moves(ops.get("bm")) if board.is_legal(move))
    avoid = frozenset(move for move in _moves(ops.get("am")) if board.is_legal(move))
    return Expected(best, avoid, _points(board, ops))


def _moves(value: object) -> list[chess.Move]:
    return [move for move in value if isinstance(move, chess.Move)] if isinstance(value, list) else []


def _points(board: chess.Board, ops: dict[str, object]) -> dict[chess.Move, int]:
    points: dict[chess.Move, int] = {}
    c8, c9 = ops.get("c8"), ops.get("c9")
    if isinstance(c8, str) and isinstance(c9, str):
        for value, uci in zip(c8.split(), c9.split()):
            try:
                move = chess.Move.from_uci(uci)
            except ValueError:
                continue
            if value.isdigit() and board.is_legal(move):
                points[move] = int(value)
        if points:
            return points
    c7 = ops.get("c7")
    if isinstance(c8, str) and isinstance(c7, str):  # STS also lists the moves in SAN
        for value, san in zip(c8.split(), c7.split()):
            try:
                move = board.parse_san(san)
            except ValueError:
                continue
            if value.isdigit():
                points[move] = int(value)
        if points:
            return points
    c0 = ops.get("c0")
    if isinstance(c0, str) and "=" in c0:
        for part in c0.split(","):
            found = _POINTS.match(part)
            if found is None:
                return {}  # not a points list: an ordinary comment
            try:
                points[board.parse_san(found.group(1))] = int(found.group(2))
            except ValueError:
                continue
    return points


@dataclass(frozen=True, slots=True)
class Verdict:
    """One engine's answer to one position, scored."""

    move: chess.Move | None
    solved: bool
    points: int


def verdict(item: PositionInput, best: str | None) -> Verdict:
    want = expected(item)
    move = chess.Move.from_uci(best) if best else None
    solved = move is not None and (not want.best or move in want.best) and move not in want.avoid
    points = want.points.get(move, 0) if move is not None else 0
    return Verdict(move, solved, points)


@dataclass(slots=True)
class Tally:
    """One engine's score over a suite."""

    engine: str
    positions: int = 0
    solved: int = 0
    points: int = 0
    max_points: int = 0
    failed: int = 0

    @property
    def rate(self) -> float:
        return self.solved / self.positions if self.positions else 0.0

    def as_json(self) -> dict[str, Any]:
        return {"engine": self.engine, "positions": self.positions, "solved": self.solved,
                "rate": round(self.rate, 4), "points": self.points, "max_points": self.max_points,
                "failed": self.failed}


@dataclass(slots=True)
class SuiteRow:
    """A position of the suite with each engine's analysis (None where it failed)."""

    item: PositionInput
    answers: list[PositionAnalysis | None]


@dataclass(slots=True)
class Scoreboard:
    """Engines side by side over one suite, filled as results come in."""

    engines: list[str]
    rows: dict[int, SuiteRow] = field(default_factory=dict)
    #: Lines that were not positions (with their reason), kept for the report.
    problems: list[str] = field(default_factory=list)

    def add(self, engine: int, analysis: PositionAnalysis) -> None:
        row = self.rows.setdefault(analysis.item.number, SuiteRow(analysis.item, [None] * len(self.engines)))
        row.answers[engine] = analysis

    def add_failed(self, engine: int, item: PositionInput) -> None:
        self.rows.setdefault(item.number, SuiteRow(item, [None] * len(self.engines)))

    def ordered(self) -> list[SuiteRow]:
        return [self.rows[number] for number in sorted(self.rows)]

    def tallies(self) -> list[Tally]:
        tallies = [Tally(name) for name in self.engines]
        for row in self.ordered():
            want = expected(row.item)
            for index, answer in enumerate(row.answers):
                tally = tallies[index]
                tally.positions += 1
                tally.max_points += want.max_points
                if answer is None:
                    tally.failed += 1
                    continue
                scored = verdict(row.item, answer.evaluation.best)
                tally.solved += scored.solved
                tally.points += scored.points
        return tallies

    @property
    def has_points(self) -> bool:
        return any(expected(row.item).points for row in self.rows.values())

    def table(self, budget: str) -> str:
        """The score table and every position's answers, as Markdown text."""
        tallies = self.tallies()
        points = self.has_points
        out = [f"Scored at {budget} per position.", "",
               "| engine | solved | solve rate |" + (" points |" if points else ""),
               "|---|---:|---:|" + ("---:|" if points else "")]
        for tally in tallies:
            cells = f"| {tally.engine} | {tally.solved}/{tally.positions} | {100 * tally.rate:.1f}% |"
            if points:
                cells += f" {tally.points}/{tally.max_points} |"
            out.append(cells)
        out += ["", "| line | id | expected | " + " | ".join(self.engines) + " |",
                "|---:|---|---|" + "---|" * len(self.engines)]
        for row in self.ordered():
            board = row.item.board
            answers = [_cell(row.item, answer) for answer in row.answers]
            ident = str(row.item.operations.get("id", ""))
            out.append(f"| {row.item.number} | {ident} | {expected(row.item).describe(board)} | " + " | ".join(answers) + " |")
        return "\n".join(out) + "\n"

    def json_lines(self) -> str:
        """One object per position with every engine's answer and verdict, then the summary."""
        out = []
        for row in self.ordered():
            board = row.item.board
            want = expected(row.item)
            record: dict[str, Any] = {"line": row.item.number, "fen": board.fen()}
            if "id" in row.item.operations:
                record["id"] = row.item.operations["id"]
            record["bm"] = sorted(move.uci() for move in want.best)
            record["am"] = sorted(move.uci() for move in want.avoid)
            if want.points:
                record["points"] = {move.uci(): value for move, value in want.points.items()}
            engines: dict[str, Any] = {}
            for name, answer in zip(self.engines, row.answers):
                if answer is None:
                    engines[name] = {"failed": True}
                    continue
                evaluation = answer.evaluation
                scored = verdict(row.item, evaluation.best)
                score = ({"mate": evaluation.score.mate} if evaluation.score.mate is not None
                         else {"cp": evaluation.score.cp or 0})
                engines[name] = {"best": evaluation.best, "solved": scored.solved, "points": scored.points,
                                 "score": score, "pv": list(evaluation.pv), "depth": evaluation.depth,
                                 "nodes": evaluation.nodes, "time": evaluation.time_ms}
            record["engines"] = engines
            out.append(json.dumps(record) + "\n")
        out.append(json.dumps({"summary": [tally.as_json() for tally in self.tallies()]}) + "\n")
        return "".join(out)


def _cell(item: PositionInput, answer: PositionAnalysis | None) -> str:
    if answer is None:
        return "failed"
    scored = verdict(item, answer.evaluation.best)
    san = item.board.san(scored.move) if scored.move is not None and item.board.is_legal(scored.move) else "-"
    mark = "ok" if scored.solved else "miss"
    return f"{san} {mark}" + (f" ({scored.points})" if expected(item).points else "")


def budget_text(nodes: int | None, depth: int | None, movetime: int | None) -> str:
    parts: Sequence[str] = [text for text in (
        f"{nodes:,} nodes" if nodes is not None else "",
        f"depth {depth}" if depth is not None else "",
        f"{movetime} ms" if movetime is not None else "") if text]
    return ", ".join(parts) or "the default budget"
