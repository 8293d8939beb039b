"""Lichess's rules for judging moves: win percentages, ?!/?/?? marks, accuracy and ACPL.

Followed from lichess's own code (lila and scalachess), so that our marks and figures read the
way lichess users know them:

- Winning chances from centipawns (White's view, in [-1, 1]): `2 / (1 + exp(-0.00368208 cp)) - 1`
  (scalachess `WinPercent.winningChances`); win percent is `50 + 50 x` that, on centipawns
  clamped to +-1000 (`Cp.ceiled`); a mate counts as +-1000.
- Marks (lila `Advice`): a move is judged only when it is not the engine's best move. With
  centipawn scores before and after, the mover's loss of winning chances of at least 0.3 is a
  blunder (??), 0.2 a mistake (?), 0.1 an inaccuracy (?!). When a mate appears or disappears:
  walking into a forced mate is a blunder, a mistake when the mover was already below -700
  before, an inaccuracy below -999; losing a forced mate of one's own is a blunder, a mistake
  when still above +700 after, an inaccuracy above +999.
- Accuracy of a move (lila `AccuracyPercent.fromWinPercents`): 100 when the mover's win
  percent does not drop, else `103.1668100711649 exp(-0.04354415386753951 drop) -
  3.166924740191411 + 1`, clamped to [0, 100]. A side's game accuracy (`gameAccuracy`) is the
  mean of a volatility-weighted mean and a harmonic mean of its moves' accuracies; the weights
  are the standard deviations of the win percents in sliding windows of `clamp(moves / 10, 2,
  8)` positions, clamped to [0.5, 12].
- ACPL (lila `AccuracyCP`): the mean over a side's moves of `max(0, before - after)` in
  centipawns from the mover's view, both clamped to +-1000, rounded.

Where we differ, on purpose: lichess starts a game's sequence from a fixed +0.15 for the
initial position; we use our own evaluation of the game's first position (a game may start
from a FEN). A checkmate on the board counts as a mate for the side that gave it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import chess
import chess.pgn

from cb_async.results import Score

#: lila's Cp.CEILING: centipawns beyond this are all the same to the win percent.
CEILING = 1000
#: scalachess's WinPercent multiplier (lila pull request 11148).
MULTIPLIER = -0.00368208
INACCURACY, MISTAKE, BLUNDER = "inaccuracy", "mistake", "blunder"
#: The NAG of each mark: ?! is 6, ? is 2, ?? is 4.
NAGS = {INACCURACY: chess.pgn.NAG_DUBIOUS_MOVE, MISTAKE: chess.pgn.NAG_MISTAKE, BLUNDER: chess.pgn.NAG_BLUNDER}
TITLES = {INACCURACY: "Inaccuracy", MISTAKE: "Mistake", BLUNDER: "Blunder"}


@dataclass(frozen=True, slots=True)
class WhiteEval:
    """An evaluation from White's point of view: centipawns, or mate in N (N > 0: White mates).

    A position that is already checkmate counts as a mate in 1 for the side that gave it: what
    the marks, accuracy and ACPL need (the mating move lost nothing).
    """

    cp: int | None = None
    mate: int | None = None

    @property
    def forced_cp(self) -> int:
        """Centipawns, a mate counting as the ceiling (lila `forceAsCp`), clamped to it."""
        if self.mate is not None:
            return CEILING if self.mate > 0 else -CEILING
        return max(-CEILING, min(CEILING, self.cp or 0))


def white_eval(score: Score, turn: chess.Color) -> WhiteEval:
    """A side-to-move score as White's view; a checkmated side to move becomes a mate for the other."""
    if score.mate is not None:
        mate = score.mate
        if mate == 0:  # the side to move is checkmated
            mate = -1
        return WhiteEval(mate=mate if turn == chess.WHITE else -mate)
    cp = score.cp or 0
    return WhiteEval(cp=cp if turn == chess.WHITE else -cp)


def winning_chances(cp: int) -> float:
    """In [-1, 1], from the view of the side the centipawns favour when positive."""
    return max(-1.0, min(1.0, 2 / (1 + math.exp(MULTIPLIER * cp)) - 1))


def win_percent(evaluation: WhiteEval) -> float:
    """White's win percent, 0 to 100."""
    return 50 + 50 * winning_chances(evaluation.forced_cp)


def judge(before: WhiteEval, after: WhiteEval, mover: chess.Color) -> str | None:
    """The mark of a move from the evaluations before and after it, or None (lila `Advice`)."""
    if before.cp is not None and after.cp is not None:
        delta = winning_chances(after.cp) - winning_chances(before.cp)
        loss = -delta if mover == chess.WHITE else delta
        for threshold, mark in ((0.3, BLUNDER), (0.2, MISTAKE), (0.1, INACCURACY)):
            if loss >= threshold:
                return mark
        return None
    sign = 1 if mover == chess.WHITE else -1
    mate_before = before.mate * sign if before.mate is not None else None
    mate_after = after.mate * sign if after.mate is not None else None
    cp_before = (before.cp or 0) * sign
    cp_after = (after.cp or 0) * sign
    if mate_before is None and mate_after is not None and mate_after < 0:  # walked into a mate
        return INACCURACY if cp_before < -999 else MISTAKE if cp_before < -700 else BLUNDER
    if mate_before is not None and mate_before > 0 and (mate_after is None or mate_after < 0):  # lost a mate
        return INACCURACY if cp_after > 999 else MISTAKE if cp_after > 700 else BLUNDER
    return None


def move_accuracy(before: float, after: float) -> float:
    """Accuracy of one move from the mover's win percents before and after it (lila)."""
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (before - after)) - 3.166924740191411
    return max(0.0, min(100.0, raw + 1))


def game_accuracy(evals: list[WhiteEval], first_mover: chess.Color) -> dict[chess.Color, float | None]:
    """Each side's accuracy from the evaluations of every position of a game, first to last."""
    percents = [win_percent(evaluation) for evaluation in evals]
    moves = len(percents) - 1
    result: dict[chess.Color, float | None] = {chess.WHITE: None, chess.BLACK: None}
    if moves < 1:
        return result
    size = max(2, min(8, moves // 10))
    windows = [percents[:size]] * (min(size, len(percents)) - 2)
    windows += [percents[i:i + size] for i in range(0, len(percents) - size + 1)]
    weights = [max(0.5, min(12.0, _deviation(window))) for window in windows]
    per_side: dict[chess.Color, list[tuple[float, float]]] = {chess.WHITE: [], chess.BLACK: []}
    for index in range(moves):
        mover = first_mover if index % 2 == 0 else not first_mover
        before, after = percents[index], percents[index + 1]
        if mover == chess.BLACK:
            before, after = 100 - before, 100 - after
        per_side[mover].append((move_accuracy(before, after), weights[index]))
    for side, values in per_side.items():
        if not values:
            continue
        total_weight = sum(weight for _, weight in values)
        weighted = sum(value * weight for value, weight in values) / total_weight
        harmonic = len(values) / sum(1 / max(1.0, value) for value, _ in values)
        result[side] = (weighted + harmonic) / 2
    return result


def average_centipawn_loss(evals: list[WhiteEval], first_mover: chess.Color) -> dict[chess.Color, int | None]:
    """Each side's average centipawn loss (lila `AccuracyCP`), rounded; None without a move."""
    losses: dict[chess.Color, list[int]] = {chess.WHITE: [], chess.BLACK: []}
    for index in range(len(evals) - 1):
        mover = first_mover if index % 2 == 0 else not first_mover
        before, after = evals[index].forced_cp, evals[index + 1].forced_cp
        change = (after - before) if mover == chess.BLACK else (before - after)
        losses[mover].append(max(0, change))
    # Rounded half up, as lila's Math.round does (Python's round() goes to even).
    return {side: (math.floor(sum(values) / len(values) + 0.5) if values else None) for side, values in losses.items()}


def _deviation(values: list[float]) -> float:
    """Population standard deviation (lila `Maths.standardDeviation`)."""
    if not values:
        return 0.0
    mean = sum(values) / len(values)
    return math.sqrt(sum((value - mean) ** 2 for value in values) / len(values))
