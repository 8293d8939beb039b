"""Batch analysis: games and positions evaluated by many engines, locally or on a Ray cluster.

    async for result in cb_async.analysis.analyse("games.pgn", Limits(nodes=20_000)):
        ...

`analyse` yields a `GameAnalysis`, `PositionAnalysis` or `Problem` for each input item as it
completes; `cb-async analyse` is a thin shell over it (docs/analysis.md). The modules:
`inputs` (readers), `job` (the driver), `pool`/`local`/`ray_pool` (where searches run),
`analyst` (the engine in a worker), `journal` (nothing lost), `annotate` (lichess's rules),
`writers` (PGN, EPD, JSON Lines).
"""

from __future__ import annotations

from cb_async.analysis.inputs import InputError, read_items, read_text
from cb_async.analysis.job import DEFAULT_NODES, Job, Progress, analyse
from cb_async.analysis.journal import JournalError, JournalMismatch
from cb_async.analysis.model import Evaluation, GameAnalysis, Line, PositionAnalysis, Problem, Result
from cb_async.analysis.pool import PoolError

__all__ = [
    "DEFAULT_NODES", "Evaluation", "GameAnalysis", "InputError", "Job", "JournalError", "JournalMismatch",
    "Line", "PoolError", "PositionAnalysis", "Problem", "Progress", "Result", "analyse", "read_items",
    "read_text",
]
