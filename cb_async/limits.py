"""What bounds one search: the neutral form every protocol adapter builds.

`Limits` is a frozen dataclass rather than a pydantic model on purpose: it is imported on the
UCI start-up path, where pydantic's import alone would cost most of the 150 ms budget for
`uciok`. It still validates on construction and names the offending field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import chess

MAX_DEPTH = 100
MAX_MULTIPV = 256


class LimitsError(ValueError):
    """Limits that make no sense (a negative depth, multipv 0, ...)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True, slots=True)
class Limits:
    """Every limit is optional; the first one reached ends the search.

    Times are in milliseconds. `infinite` means analysis: the search never ends by itself.
    With no limit at all the search runs to `MAX_DEPTH` (UCI: "go" alone searches on).
    """

    movetime: int | None = None
    white_clock: int | None = None
    black_clock: int | None = None
    white_inc: int = 0
    black_inc: int = 0
    moves_to_go: int | None = None
    depth: int | None = None
    nodes: int | None = None
    mate: int | None = None
    infinite: bool = False
    search_moves: tuple[chess.Move, ...] = field(default_factory=tuple)
    multipv: int = 1

    def __post_init__(self) -> None:
        for name in ("movetime", "white_clock", "black_clock"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise LimitsError(name, f"must be a whole number of milliseconds >= 0, not {value!r}")
        for name in ("white_inc", "black_inc"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise LimitsError(name, f"must be a whole number of milliseconds >= 0, not {value!r}")
        for name in ("moves_to_go", "depth", "nodes", "mate"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise LimitsError(name, f"must be a whole number >= 1, not {value!r}")
        if self.depth is not None and self.depth > MAX_DEPTH:
            object.__setattr__(self, "depth", MAX_DEPTH)
        if not isinstance(self.multipv, int) or isinstance(self.multipv, bool) or not 1 <= self.multipv <= MAX_MULTIPV:
            raise LimitsError("multipv", f"must be between 1 and {MAX_MULTIPV}, not {self.multipv!r}")
        if not isinstance(self.search_moves, tuple):
            object.__setattr__(self, "search_moves", tuple(self.search_moves))
        if not all(isinstance(move, chess.Move) for move in self.search_moves):
            raise LimitsError("search_moves", "must be chess.Move objects")

    # -- derived views -------------------------------------------------------------------------

    @property
    def has_clock(self) -> bool:
        return self.white_clock is not None or self.black_clock is not None

    @property
    def is_timed(self) -> bool:
        """True when the time manager has something to budget."""
        return self.movetime is not None or self.has_clock

    def clock(self, side: chess.Color) -> tuple[int | None, int]:
        """(remaining ms, increment ms) of one side."""
        if side == chess.WHITE:
            return self.white_clock, self.white_inc
        return self.black_clock, self.black_inc

    def pondering(self) -> Limits:
        """The limits of a ponder search: no clock, everything else kept.

        Drops movetime, both clocks, the increments and moves-to-go; keeps depth, nodes, mate,
        search_moves and multipv. It is not `infinite` (that means analysis): with none of
        depth, nodes or mate it searches to the maximum depth and then waits for its hit.
        """
        return dataclasses.replace(
            self,
            movetime=None,
            white_clock=None,
            black_clock=None,
            white_inc=0,
            black_inc=0,
            moves_to_go=None,
            infinite=False,
        )

    def replace(self, **changes: object) -> Limits:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]
