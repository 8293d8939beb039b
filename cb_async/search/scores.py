"""Internal score scale: centipawns, with mates as distances from a large constant.

A mate found `n` plies from the root scores `MATE - n` (or `-(MATE - n)` when the side to move
is the one mated), so a shorter mate always scores higher and the number of moves can be read
back from the score alone.
"""

from __future__ import annotations

from cb_async.results import Score

MATE = 32000
#: Plies the search can ever reach; everything beyond `MATE - MAX_PLY` is a mate score.
MAX_PLY = 256
MATE_BOUND = MATE - MAX_PLY
INFINITY = MATE + 1
#: Tablebase wins: a band just below the mates, `TB_WIN - n` for a win proven `n` plies from
#: the root, so that a real mate always outranks them and they outrank any evaluation.
TB_WIN = MATE_BOUND - 1
TB_BOUND = TB_WIN - MAX_PLY
#: What a tablebase win shows in the protocols: centipawns `TB_CP - n` (Stockfish's convention),
#: never a mate, since the tables prove a win, not a mate distance.
TB_CP = 20000


def is_mate_score(value: int) -> bool:
    return value >= MATE_BOUND or value <= -MATE_BOUND


def to_score(value: int) -> Score:
    """The public Score of an internal value (mate in moves for the side to move)."""
    if value >= MATE_BOUND:
        return Score(mate=(MATE - value + 1) // 2)
    if value <= -MATE_BOUND:
        return Score(mate=-((MATE + value) // 2))
    if value >= TB_BOUND:
        return Score(cp=TB_CP - (TB_WIN - value))
    if value <= -TB_BOUND:
        return Score(cp=-TB_CP + (TB_WIN + value))
    return Score(cp=value)


def mate_moves(value: int) -> int | None:
    """Moves to the mate the side to move delivers (positive), or None."""
    if value >= MATE_BOUND:
        return (MATE - value + 1) // 2
    return None


def score_to_tt(value: int, ply: int) -> int:
    """Mate and tablebase scores are stored as distance from the node, not from the root."""
    if value >= TB_BOUND:
        return value + ply
    if value <= -TB_BOUND:
        return value - ply
    return value


def score_from_tt(value: int, ply: int) -> int:
    if value >= TB_BOUND:
        return value - ply
    if value <= -TB_BOUND:
        return value + ply
    return value
