"""What a search reports: scores, one info per iteration and MultiPV line, the result.

Plain frozen dataclasses: they cross the process boundary between the search worker and the
session (pickled), so they stay small and free of behaviour that needs the board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import chess

Bound = Literal["lower", "upper"]
Source = Literal["search", "book", "tablebase"]


@dataclass(frozen=True, slots=True)
class Score:
    """From the side to move: centipawns, or mate in N moves (negative when being mated).

    `mate == 0` is the score of a checkmated root (the side to move is mated).
    """

    cp: int | None = None
    mate: int | None = None

    def __post_init__(self) -> None:
        if (self.cp is None) == (self.mate is None):
            raise ValueError("a Score is either cp or mate")

    @classmethod
    def centipawns(cls, cp: int) -> Score:
        return cls(cp=cp)

    @classmethod
    def mate_in(cls, moves: int) -> Score:
        return cls(mate=moves)

    @property
    def is_mate(self) -> bool:
        return self.mate is not None

    def __str__(self) -> str:
        return f"mate {self.mate}" if self.mate is not None else f"cp {self.cp}"


@dataclass(frozen=True, slots=True)
class SearchInfo:
    """One completed iteration of one MultiPV line. Times in milliseconds."""

    depth: int
    seldepth: int
    multipv: int
    score: Score
    nodes: int
    nps: int
    time: int
    pv: tuple[chess.Move, ...]
    hashfull: int = 0
    tbhits: int = 0
    bound: Bound | None = None
    #: Win/draw/loss per mille from the side to move, when the evaluation can say.
    wdl: tuple[int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The answer of one search. `best_move` is None only when the root has no legal move."""

    best_move: chess.Move | None
    ponder_move: chess.Move | None
    score: Score
    depth: int
    seldepth: int
    nodes: int
    time: int
    pv: tuple[chess.Move, ...] = ()
    #: The final info of every MultiPV line, best first.
    lines: tuple[SearchInfo, ...] = field(default_factory=tuple)
    hashfull: int = 0
    tbhits: int = 0
    #: Who chose the move: the search, the opening book, or the tablebases at the root.
    source: Source = "search"


def wdl_of(score: Score) -> tuple[int, int, int]:
    """Win/draw/loss per mille from a score: a plain logistic model of engine self-play.

    A mate is certain; a centipawn score wins more often as it grows, and the draw share is
    what is left between the win and loss curves.
    """
    if score.mate is not None:
        return (1000, 0, 0) if score.mate > 0 else (0, 0, 1000)
    import math

    cp = max(-2000, min(2000, score.cp or 0))
    win = 1.0 / (1.0 + math.exp(-(cp - 150) / 70))
    loss = 1.0 / (1.0 + math.exp((cp + 150) / 70))
    w, l = round(win * 1000), round(loss * 1000)
    return w, 1000 - w - l, l
