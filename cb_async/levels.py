"""Strength levels: what `UCI_LimitStrength` + `UCI_Elo` do to a search.

A level plays like a person of that rating in two ways. It has a horizon: a depth and a node
budget, so it misses what lies deeper (it is the budget, not the clock, that makes a weak level
weak, so it stays weak with any time control and after a ponder hit). And it does not always
play the best move it found: it searches a few candidate moves (MultiPV) and adds a noise to
their scores, wider at lower levels, then plays the best noisy one among those near the best.
The noise is drawn from a generator seeded by the position and the level, so the same level
plays the same move in the same position (reproducible games and tests).

The horizon and the noise apply to game and ponder searches; analysis (`infinite`) ignores the
level, so that analysis stays full strength. The figures are calibrated in docs/levels.md.
Light on purpose: the option table and the CNP `hello` read `MIN_ELO`/`MAX_ELO` at start-up.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

MIN_ELO = 800
MAX_ELO = 2400
DEFAULT_ELO = 1500


@dataclass(frozen=True, slots=True)
class Level:
    elo: int
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


#: (Elo, depth, nodes, sigma cp, candidates) anchors; levels between them interpolate.
#: Calibrated by matches (docs/levels.md): the node budget is the main knob.
_ANCHORS: tuple[tuple[int, int, int, int, int], ...] = (
    (800, 1, 400, 220, 5),
    (1000, 1, 600, 160, 5),
    (1200, 2, 1_000, 110, 4),
    (1400, 3, 2_000, 70, 4),
    (1600, 4, 4_000, 45, 3),
    (1800, 5, 10_000, 28, 3),
    (2000, 7, 25_000, 16, 3),
    (2200, 9, 70_000, 8, 2),
    (2400, 12, 200_000, 0, 1),
)
_ELOS = [anchor[0] for anchor in _ANCHORS]


def level_for(elo: int) -> Level:
    """The level of `elo` (clamped to the range), interpolated between the anchors; the
    node budget geometrically, the rest linearly."""
    elo = max(MIN_ELO, min(MAX_ELO, elo))
    i = bisect.bisect_left(_ELOS, elo)
    if _ELOS[i] == elo:
        _, depth, nodes, sigma, candidates = _ANCHORS[i]
        return Level(elo, depth, nodes, sigma, candidates)
    lo, hi = _ANCHORS[i - 1], _ANCHORS[i]
    t = (elo - lo[0]) / (hi[0] - lo[0])
    return Level(
        elo,
        depth=round(lo[1] + t * (hi[1] - lo[1])),
        nodes=round(lo[2] * (hi[2] / lo[2]) ** t),
        sigma=round(lo[3] + t * (hi[3] - lo[3])),
        candidates=round(lo[4] + t * (hi[4] - lo[4])),
    )
