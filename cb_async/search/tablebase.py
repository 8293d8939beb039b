"""Syzygy endgame tablebases: opening the directories, and the root decision.

python-chess probes the tables (`chess.syzygy`); the search worker opens them once per
`SyzygyPath` and keeps them open. Two uses:

- at the root, with at most the tables' piece count and no castling rights, `rank_root_moves`
  sorts the legal moves by what they keep: a win reachable within the fifty-move rule, then a
  draw (including wins the fifty-move rule spoils and losses it saves), then a loss. Among wins
  the smallest DTZ (the quickest zeroing move: progress), among losses the largest;
- inside the search, WDL probes cut the tree (see `cb_async.search.searcher`).

`check_path` runs when the option is set, so a wrong directory is a clear message at once.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

import chess

_TABLE = re.compile(r"^[KQRBNP]+v[KQRBNP]+\.rtbw$")

WIN, DRAW, LOSS = 1, 0, -1


def directories(value: str) -> list[str]:
    """The directories of a `SyzygyPath` value (the OS path separator between them)."""
    return [part for part in value.split(os.pathsep) if part.strip()]


def table_pieces(directory: str) -> int:
    """The largest piece count among the WDL tables in `directory` (0 if none)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    return max((len(name) - len(".rtbw") - 1 for name in names if _TABLE.match(name)), default=0)


def check_path(value: str) -> tuple[str | None, str]:
    """(what is wrong or None, a summary such as "35 tables, up to 4 pieces")."""
    count = 0
    pieces = 0
    for directory in directories(value):
        if not os.path.isdir(directory):
            return f"SyzygyPath: no such directory: {directory}", ""
        names = [name for name in os.listdir(directory) if _TABLE.match(name)]
        count += len(names)
        pieces = max(pieces, table_pieces(directory))
    if value.strip() and count == 0:
        return f"SyzygyPath: no Syzygy tables (*.rtbw) in {value}", ""
    return None, f"{count} Syzygy tables, up to {pieces} pieces"


@dataclass
class Tables:
    """Open tables and their largest piece count."""

    tablebase: object  # chess.syzygy.Tablebase
    max_pieces: int

    def usable(self, board: chess.Board) -> bool:
        return not board.castling_rights and chess.popcount(board.occupied) <= self.max_pieces

    def wdl(self, board: chess.Board) -> int | None:
        return self.tablebase.get_wdl(board)  # type: ignore[attr-defined, no-any-return]

    def dtz(self, board: chess.Board) -> int | None:
        return self.tablebase.get_dtz(board)  # type: ignore[attr-defined, no-any-return]

    def close(self) -> None:
        self.tablebase.close()  # type: ignore[attr-defined]


def open_tables(value: str) -> Tables | None:
    """Open every directory of `value` (None when there are no tables)."""
    import chess.syzygy

    tablebase = chess.syzygy.Tablebase()
    pieces = 0
    for directory in directories(value):
        try:
            if tablebase.add_directory(directory):
                pieces = max(pieces, table_pieces(directory))
        except OSError:
            continue
    if not pieces:
        tablebase.close()
        return None
    return Tables(tablebase, pieces)


@dataclass(frozen=True, slots=True)
class RankedMove:
    move: chess.Move
    #: WIN, DRAW or LOSS for the side to move at the root, under the fifty-move rule.
    outcome: int
    #: Plies to the next zeroing move (capture or pawn move) counted from the root, positive
    #: when winning, negative when losing, 0 for a draw; 1 for a mate or a zeroing win.
    dtz: int


def rank_root_moves(tables: Tables, board: chess.Board) -> list[RankedMove] | None:
    """Every legal move ranked best first, or None when a table is missing.

    DTZ from the root, as Stockfish's `root_probe` counts it: a zeroing move's value comes from
    the WDL of the position after it, any other move's from the DTZ after it plus one ply. Then
    the fifty-move rule: a win whose DTZ plus the halfmove clock passes 100 plies is a draw, and
    so is a loss that the rule saves.
    """
    clock = board.halfmove_clock
    ranked: list[RankedMove] = []
    for move in board.legal_moves:
        zeroing = board.is_zeroing(move)
        board.push(move)
        try:
            if board.is_checkmate():
                dtz = 1
            elif zeroing:
                wdl = tables.wdl(board)
                if wdl is None:
                    return None
                dtz = {-2: 1, -1: 101, 0: 0, 1: -101, 2: -1}[wdl]
            else:
                after = tables.dtz(board)
                if after is None:
                    return None
                dtz = -after
                dtz = dtz + 1 if dtz > 0 else dtz - 1 if dtz < 0 else 0
            if board.is_repetition(2) and not zeroing:
                dtz = 0 if dtz > 0 else dtz  # a win must not walk into a repetition
        finally:
            board.pop()
        start = 0 if zeroing else clock
        if dtz > 0:
            outcome = WIN if dtz + start <= 99 else DRAW
        elif dtz < 0:
            outcome = LOSS if -dtz + start <= 100 else DRAW
        else:
            outcome = DRAW
        ranked.append(RankedMove(move, outcome, dtz))
    ranked.sort(key=_rank_key)
    return ranked


def _rank_key(entry: RankedMove) -> tuple[int, int]:
    if entry.outcome == WIN:
        return (0, entry.dtz)
    if entry.outcome == DRAW:
        return (1, 0)
    return (2, entry.dtz)  # the most negative, the longest resistance, first
