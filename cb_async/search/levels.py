"""Strength levels: what `UCI_LimitStrength` + `UCI_Elo` do to a search.

A level plays like a person of that rating in two ways. It has a horizon: a node budget (and a
depth that follows it), so it misses what lies deeper. It is the budget, not the clock, that
makes a weak level weak, so it stays weak with any time control and after a ponder hit. And it
does not always play the best move it found: it searches a few candidate moves (MultiPV) and
adds a noise to their scores, wider at lower levels, then plays the best noisy one among those
near the best. The noise is drawn from a generator seeded by the position and the level, so the
same level plays the same move in the same position (reproducible games and tests).

Two layers, so that measuring and labelling stay apart: `settings_at(strength)` turns a raw
strength between 0 and 1 into a horizon and a noise, the node budget and the noise moving
steadily with it (hand-set anchors with whole-ply depth steps were 400-Elo cliffs in the first
calibration) and the candidate count stepping at fixed points; `CALIBRATION` maps
Elo labels to raw strengths as measured by matches (docs/levels.md). Recalibrating changes only
that table.

The horizon and the noise apply to game and ponder searches; analysis (`infinite`) ignores the
level, so that analysis stays full strength. Light on purpose: the option table and the CNP
`hello` read `MIN_ELO`/`MAX_ELO` at start-up.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

#: Elo labels measured against Stockfish's own levels and chained by self-play
#: (docs/levels.md): (label, raw strength). Labels in between interpolate linearly.
#: The top label is the strongest level measured, not full strength: it is as far as the
#: matches reach (a stronger label would be a guess).
CALIBRATION: tuple[tuple[int, float], ...] = (
    (800, 0.324),
    (900, 0.359),
    (1000, 0.395),
    (1100, 0.430),
    (1200, 0.466),
    (1300, 0.502),
    (1400, 0.537),
    (1500, 0.572),
    (1600, 0.607),
    (1700, 0.655),
    (1800, 0.717),
    (1850, 0.748),
)
_LABELS = [label for label, _ in CALIBRATION]
MIN_ELO = _LABELS[0]
MAX_ELO = _LABELS[-1]
DEFAULT_ELO = 1500

#: Node budget at raw strength 0 and 1 (geometric in between).
_NODES_LOW, _NODES_HIGH = 100, 150_000
#: Noise (standard deviation, centipawns) at raw strength 0; it falls as (1 - strength)².
_SIGMA_LOW = 300
#: Candidate moves weighed: (below this raw strength, this many); one above the last. A
#: whole candidate fewer is a jump in strength (from 4 to 3 was about 200 Elo), so the steps
#: lie outside the calibrated labels but one, at 0.625, which has matches on both sides.
_CANDIDATES: tuple[tuple[float, int], ...] = ((0.125, 5), (0.28, 4), (0.625, 3), (0.875, 2))


@dataclass(frozen=True, slots=True)
class Level:
    elo: int
    #: The raw strength behind the label, 0 (weakest) to 1.
    strength: float
    #: The deepest iteration it completes.
    depth: int
    #: The nodes it may search per move.
    nodes: int
    #: Standard deviation of the noise added to each candidate's score, in centipawns.
    sigma: int
    #: How many root moves it weighs (MultiPV lines searched).
    candidates: int

    def choose(self, scored: list[tuple[int, int]], seed: int) -> int:
        """The index into `scored` ((centipawns, index) of each candidate, best first) that
        this level plays, for a position identified by `seed`."""
        if self.sigma <= 0 or len(scored) < 2:
            return scored[0][1]
        import random  # here: the option table imports this module at start-up

        rng = random.Random(seed * 7919 + self.elo)
        best = scored[0][0]
        window = 3 * self.sigma
        choice, choice_value = scored[0][1], None
        for cp, index in scored:
            if cp < best - window:
                continue
            noisy = cp + rng.gauss(0.0, self.sigma)
            if choice_value is None or noisy > choice_value:
                choice, choice_value = index, noisy
        return choice


def settings_at(strength: float) -> tuple[int, int, int, int]:
    """(depth, nodes, sigma, candidates) at a raw strength in [0, 1].

    The node budget is the horizon; the depth cap (one ply at the bottom, sixteen at the top)
    only keeps the weakest levels from seeing deep in tiny endgames where nodes go far."""
    strength = max(0.0, min(1.0, strength))
    nodes = round(_NODES_LOW * (_NODES_HIGH / _NODES_LOW) ** strength)
    depth = 1 + round(15 * strength)
    sigma = round(_SIGMA_LOW * (1.0 - strength) ** 2)
    candidates = next((count for below, count in _CANDIDATES if strength < below), 1)
    return depth, nodes, sigma, candidates


def strength_of(elo: int) -> float:
    """The raw strength of an Elo label (clamped to the range), from `CALIBRATION`."""
    elo = max(MIN_ELO, min(MAX_ELO, elo))
    i = bisect.bisect_left(_LABELS, elo)
    if _LABELS[i] == elo:
        return CALIBRATION[i][1]
    (lo_elo, lo), (hi_elo, hi) = CALIBRATION[i - 1], CALIBRATION[i]
    return lo + (elo - lo_elo) / (hi_elo - lo_elo) * (hi - lo)


def level_for(elo: int) -> Level:
    """The level of `elo` (clamped to the range)."""
    elo = max(MIN_ELO, min(MAX_ELO, elo))
    strength = strength_of(elo)
    return Level(elo, strength, *settings_at(strength))
