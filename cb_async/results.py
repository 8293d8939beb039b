"""What a search reports: scores, one info per iteration and MultiPV line, the result.

Plain frozen dataclasses: they cross the process boundary between the search worker and the
session (pickled), so they stay small and free of behaviour that needs the board.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import chess

Bound = Literal["lower", "upper"]


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
