"""The vocabulary of an analysis job: what a worker is asked, what it answers, what the job yields.

Small frozen dataclasses, because they cross process boundaries (pickled to a local worker, or
to a Ray actor) and are written to the journal. A position is named by its `key`, a string that
is the same in every process and every run for the same search input (the position, its
repetition history and the rules), so a result found once serves every game that reaches the
position, and a journal written by one run serves the next.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import chess
import chess.pgn

from cb_async.results import Score


@dataclass(frozen=True, slots=True)
class PositionTask:
    """One search to run: everything a worker needs and nothing else."""

    key: str
    fen: str
    chess960: bool
    #: Repetition keys of the positions before this one since the last irreversible move.
    history: tuple[Hashable, ...] = ()
    #: The same stretch of the game as another engine needs it (UCI `position fen START moves
    #: ...`): the FEN where it begins and its moves. Empty when `history` is.
    start: str | None = None
    moves: tuple[str, ...] = ()

    def board(self) -> chess.Board:
        """The position with the moves that lead to it since the last irreversible move."""
        if self.start is None:
            return chess.Board(self.fen, chess960=self.chess960)
        board = chess.Board(self.start, chess960=self.chess960)
        for uci in self.moves:
            board.push_uci(uci)
        return board


@dataclass(frozen=True, slots=True)
class Line:
    """One MultiPV line: its score (from the side to move) and its moves in UCI."""

    score: Score
    pv: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A finished search of one position. Scores are from the side to move; moves are UCI.

    `best` is None only when the position has no legal move (mate or stalemate): then the
    score says which (`mate=0` or `cp=0`) and nothing was searched. `time_ms` is the only
    field that depends on the machine; everything else is a function of the position and the
    node or depth budget.
    """

    key: str
    best: str | None
    score: Score
    pv: tuple[str, ...]
    depth: int
    seldepth: int
    nodes: int
    time_ms: int
    lines: tuple[Line, ...] = ()


@dataclass(frozen=True, slots=True)
class Failure:
    """A position the engine could not answer (it died on it more than once): never journaled,
    so a later run tries it again; the items that need it are reported as problems."""

    key: str
    reason: str


Answer = Evaluation | Failure


@dataclass(frozen=True, slots=True)
class Problem:
    """An input item that cannot be analysed: reported, skipped, and the job goes on."""

    file: str
    number: int
    #: "game" for PGN input, "line" for EPD/FEN input.
    kind: Literal["game", "line"]
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.kind} {self.number}: {self.reason} (skipped)"


@dataclass(frozen=True, slots=True)
class GameInput:
    """A game read from a PGN file, with the positions to analyse: before each move and after
    the last one (`len(moves) + 1` positions)."""

    number: int
    game: chess.pgn.Game
    moves: tuple[chess.Move, ...]
    positions: tuple[PositionTask, ...]


@dataclass(frozen=True, slots=True)
class PositionInput:
    """One EPD or FEN line: the position and the line's own EPD operations (kept in the output)."""

    number: int
    board: chess.Board
    position: PositionTask
    operations: dict[str, object] = field(default_factory=dict, hash=False, compare=False)
    #: True when the line was a full FEN (its move counters are kept as hmvc/fmvn).
    full_fen: bool = False


Item = GameInput | PositionInput


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """A game with the evaluation of each of its positions (before each move, after the last)."""

    item: GameInput
    evaluations: tuple[Evaluation, ...]


@dataclass(frozen=True, slots=True)
class PositionAnalysis:
    item: PositionInput
    evaluation: Evaluation


Result = GameAnalysis | PositionAnalysis | Problem


def result_number(result: Result) -> int:
    """The input number of a result (game number or line number): the output's order."""
    match result:
        case Problem(number=number):
            return number
        case GameAnalysis(item=item) | PositionAnalysis(item=item):
            return item.number


def task_for(board: chess.Board, history: Sequence[Hashable]) -> PositionTask:
    """The search task of `board` with its repetition history, and the key that names it.

    The key holds the FEN without the move number (which no search reads), the rules (a
    Chess960 board castles differently) and a digest of the repetition history (the same
    position can be a draw by repetition in one game and not in another). Equal keys mean equal
    search inputs, hence equal results under a node or depth budget.
    """
    fen = board.fen()
    start: str | None = None
    moves: tuple[str, ...] = ()
    if history:
        line = board.move_stack[len(board.move_stack) - len(history):]
        before = board.copy()
        for _ in line:
            before.pop()
        start, moves = before.fen(), tuple(move.uci() for move in line)
    without_move_number = fen.rsplit(" ", 1)[0]
    digest = hashlib.blake2b(repr(tuple(history)).encode(), digest_size=8).hexdigest() if history else "-"
    rules = "960" if board.chess960 else "std"
    return PositionTask(f"{without_move_number}|{rules}|{digest}", fen, board.chess960, tuple(history), start, moves)
