"""A job from Lichess's broker, checked: the position to analyse, the limit and the settings.

The broker (lila-engine) already checks the work it hands out (`Work::sanitize`: the variant
among the registered ones, a legal position, at most 600 legal moves, threads and hash capped).
The provider checks it again because it runs the search: a job it cannot serve is refused with
one clear reason (`WorkError`) instead of failing half-way. The checks follow the broker's
rules and the API's schema (`ExternalEngineWork`): exactly one of `movetime`, `depth` and
`nodes`, `multiPv` 1 to 5, positions and moves in Chess960 notation (king takes rook).

This module does no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import chess
import chess.engine
import chess.variant

#: lila-engine refuses work with more moves than this (`InvalidWorkError::TooManyMoves`).
MAX_MOVES = 600

#: The broker's MultiPv range ("supported range is 1 to 5").
MAX_MULTIPV = 5

#: The variants the API names (`UciVariant`), with the names lila-engine also accepts for chess.
LICHESS_VARIANTS = ("chess", "antichess", "atomic", "crazyhouse", "horde", "kingofthehill", "racingkings", "3check")
_CHESS_ALIASES = frozenset({"chess", "standard", "chess960", "fromPosition"})

LimitKind = Literal["movetime", "depth", "nodes"]
_LIMIT_KINDS: tuple[LimitKind, ...] = ("movetime", "depth", "nodes")


class WorkError(ValueError):
    """Work the provider cannot serve; the message says why, in a few words."""


@dataclass(frozen=True, slots=True)
class Work:
    """One job: `board` is the position after `moves`, with the moves on its stack."""

    job_id: str
    session_id: str
    threads: int
    hash_mb: int
    multipv: int
    variant: str
    board: chess.Board
    limit_kind: LimitKind
    limit_value: int

    @property
    def limit(self) -> chess.engine.Limit:
        match self.limit_kind:
            case "movetime":
                return chess.engine.Limit(time=self.limit_value / 1000)
            case "depth":
                return chess.engine.Limit(depth=self.limit_value)
        return chess.engine.Limit(nodes=self.limit_value)

    def describe(self) -> str:
        """The job in a few words for the progress line (no secret is in a job)."""
        moves = len(self.board.move_stack)
        where = f"{self.board.root().fen()}" + (f" +{moves} moves" if moves else "")
        unit = " ms" if self.limit_kind == "movetime" else ""
        return f"{where}, {self.limit_kind} {self.limit_value}{unit}, multipv {self.multipv}"


def parse_job(job: Any, *, variants: tuple[str, ...], max_threads: int, max_hash: int) -> Work:
    """The broker's `{id, work}` as `Work`, or `WorkError`. `threads` and `hash` are capped at
    the registered maxima, as the broker caps them."""
    if not isinstance(job, dict) or not isinstance(job.get("id"), str) or not isinstance(job.get("work"), dict):
        raise WorkError("not a job: it needs an `id` and a `work` object")
    work: dict[str, Any] = job["work"]
    session_id = work.get("sessionId")
    if not isinstance(session_id, str):
        raise WorkError("sessionId missing")
    threads = _whole(work, "threads", 1)
    hash_mb = _whole(work, "hash", 1)
    multipv = _whole(work, "multiPv", 1)
    if multipv > MAX_MULTIPV:
        raise WorkError(f"multiPv {multipv} is out of range (1 to {MAX_MULTIPV})")
    kinds: list[LimitKind] = [kind for kind in _LIMIT_KINDS if kind in work]
    if len(kinds) != 1:
        raise WorkError("exactly one of movetime, depth and nodes is needed")
    kind = kinds[0]
    value = _whole(work, kind, 1)
    variant = work.get("variant")
    if not isinstance(variant, str):
        raise WorkError("variant missing")
    variant = "chess" if variant in _CHESS_ALIASES else variant
    if variant not in variants:
        raise WorkError(f"unsupported variant {variant!r} (this engine serves {', '.join(variants)})")
    board = _board(variant, work.get("initialFen"))
    moves = work.get("moves")
    if not isinstance(moves, list) or not all(isinstance(move, str) for move in moves):
        raise WorkError("moves must be a list of moves")
    if len(moves) > MAX_MOVES:
        raise WorkError(f"too many moves ({len(moves)}, at most {MAX_MOVES})")
    for index, text in enumerate(moves):
        try:
            board.push(board.parse_uci(text))
        except ValueError:
            raise WorkError(f"illegal move {text[:12]!r} at ply {index + 1}") from None
    return Work(job["id"], session_id, min(threads, max_threads), min(hash_mb, max_hash), multipv, variant,
                board, kind, value)


def _whole(work: dict[str, Any], key: str, minimum: int) -> int:
    value = work.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise WorkError(f"{key} must be a whole number")
    if value < minimum:
        raise WorkError(f"{key} must be at least {minimum}, not {value}")
    return value


def _board(variant: str, fen: Any) -> chess.Board:
    """The initial position in Chess960 mode (castling is king takes rook), or WorkError."""
    if not isinstance(fen, str):
        raise WorkError("initialFen missing")
    board_class: type[chess.Board] = chess.Board
    if variant != "chess":
        board_class = chess.variant.find_variant(variant)
    try:
        board = board_class(fen, chess960=True)
    except ValueError:
        raise WorkError(f"bad initialFen {fen[:100]!r}") from None
    if board.status() & ~chess.STATUS_BAD_CASTLING_RIGHTS != chess.STATUS_VALID:
        raise WorkError(f"illegal initialFen {fen[:100]!r}")
    board.clean_castling_rights()
    return board


def pv_uci(board: chess.Board, moves: list[chess.Move]) -> list[str]:
    """A PV in Chess960 notation (the broker's), cut where a move is not legal."""
    position = board.copy(stack=False)
    words: list[str] = []
    for move in moves:
        if not position.is_legal(move):
            break
        words.append(position.uci(move, chess960=True))
        position.push(move)
    return words


def info_line(info: chess.engine.InfoDict, board: chess.Board) -> str | None:
    """One UCI `info` line for the broker from python-chess's InfoDict, or None for a line the
    broker would drop: one without depth, score or PV, or a bound-only line of the first PV."""
    depth, score, pv = info.get("depth"), info.get("score"), info.get("pv")
    if depth is None or score is None or not pv:
        return None
    multipv = info.get("multipv", 1)
    bound = "lowerbound" if info.get("lowerbound") else "upperbound" if info.get("upperbound") else ""
    if bound and multipv == 1:
        return None
    moves = pv_uci(board, pv)
    if not moves:
        return None
    relative = score.relative
    mate = relative.mate()
    value = f"mate {mate}" if mate is not None else f"cp {relative.score()}"
    words = [f"info depth {depth}"]
    if "seldepth" in info:
        words.append(f"seldepth {info['seldepth']}")
    words.append(f"multipv {multipv} score {value}" + (f" {bound}" if bound else ""))
    words.append(f"nodes {info.get('nodes', 0)}")
    if "nps" in info:
        words.append(f"nps {info['nps']}")
    words.append(f"time {round(info.get('time', 0.0) * 1000)}")
    if "hashfull" in info:
        words.append(f"hashfull {info['hashfull']}")
    words.append("pv " + " ".join(moves))
    return " ".join(words)
