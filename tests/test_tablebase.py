"""Syzygy tablebases: root choice by DTZ within the fifty-move rule, WDL cuts in the tree,
scores in their own band below the mates.

The 3-4 piece tables are the shared test set beside the repository; without it these tests
skip (and say so).
"""

from __future__ import annotations

from pathlib import Path

import chess
import pytest

from cb_async.timeman import stop_token
from cb_async.search import tablebase
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.scores import MATE, TB_WIN, to_score
from cb_async.search.sources import MoveSources
from cb_async.search.settings import SearchSettings

TABLES = Path(__file__).resolve().parents[2] / "shared" / "syzygy"
needs_tables = pytest.mark.skipif(not (TABLES / "KRvK.rtbw").exists(),
                                  reason=f"the shared Syzygy test tables are not at {TABLES}")


def _answer(board: chess.Board, limits: Limits, path: str = str(TABLES)):
    sources = MoveSources(Searcher(hash_mb=1))
    return sources.search(board, (), limits, SearchSettings(syzygy_path=path), stop_token(limits, board.turn))


def test_tablebase_scores_are_centipawns_in_a_band_below_the_mates() -> None:
    assert to_score(TB_WIN - 7).cp == 19993 and to_score(-(TB_WIN - 7)).cp == -19993
    assert to_score(MATE - 3).mate == 2
    assert to_score(500).cp == 500


def test_a_missing_directory_or_one_without_tables_is_named(tmp_path: Path) -> None:
    assert "no such directory" in tablebase.check_path(str(tmp_path / "nowhere"))[0]  # type: ignore[operator]
    assert "no Syzygy tables" in tablebase.check_path(str(tmp_path))[0]  # type: ignore[operator]


@needs_tables
def test_check_path_counts_the_tables() -> None:
    problem, summary = tablebase.check_path(str(TABLES))
    assert problem is None and "up to 4 pieces" in summary


@needs_tables
def test_a_won_root_plays_the_dtz_move_at_once() -> None:
    board = chess.Board("8/8/8/4k3/8/8/3r4/4K2R w - - 0 1")  # KRvKR: Kxd2 wins
    result = _answer(board, Limits(movetime=10_000))
    assert result.source == "tablebase" and result.best_move == chess.Move.from_uci("e1d2")
    assert result.score.mate is None and 19_000 < result.score.cp <= 20_000  # type: ignore[operator]
    assert result.tbhits > 0


@needs_tables
def test_a_lost_root_resists_longest_and_scores_a_tb_loss() -> None:
    board = chess.Board("8/8/8/4k3/8/8/8/R3K3 b - - 0 1")
    result = _answer(board, Limits(movetime=10_000))
    assert result.source == "tablebase" and result.score.cp < -19_000  # type: ignore[operator]


@needs_tables
def test_a_drawn_root_searches_among_the_drawing_moves() -> None:
    # KRvKR, Black to move: Rxh1?? is not possible, but a rook move leaving the rook en prise
    # loses; every move the search may play keeps the draw.
    board = chess.Board("8/8/8/3k4/8/8/3r4/4K2R b - - 0 1")
    ranked = tablebase.rank_root_moves(tablebase.open_tables(str(TABLES)), board)  # type: ignore[arg-type]
    assert ranked is not None and ranked[0].outcome == tablebase.DRAW
    drawing = {entry.move for entry in ranked if entry.outcome == tablebase.DRAW}
    result = _answer(board, Limits(depth=3))
    assert result.source == "tablebase" and result.best_move in drawing


@needs_tables
def test_the_fifty_move_rule_turns_a_slow_win_into_a_draw() -> None:
    tables = tablebase.open_tables(str(TABLES))
    assert tables is not None
    fresh = chess.Board("8/8/8/8/3k4/8/8/R3K3 w - - 0 1")
    late = chess.Board("8/8/8/8/3k4/8/8/R3K3 w - - 95 80")
    assert tablebase.rank_root_moves(tables, fresh)[0].outcome == tablebase.WIN  # type: ignore[index]
    assert tablebase.rank_root_moves(tables, late)[0].outcome == tablebase.DRAW  # type: ignore[index]


@needs_tables
def test_wdl_probes_in_the_tree_count_tbhits_and_find_the_win() -> None:
    board = chess.Board("8/p7/8/4k3/8/8/3r4/4K2R w - - 0 1")  # 5 pieces: Kxd2 reaches KRvKP
    result = _answer(board, Limits(depth=3))
    assert result.source == "search" and result.tbhits > 0
    assert result.best_move == chess.Move.from_uci("e1d2")
    assert result.score.mate is None and result.score.cp > 19_000  # type: ignore[operator]
    assert result.lines[-1].tbhits == result.tbhits


@needs_tables
def test_castling_rights_or_no_tables_mean_a_plain_search() -> None:
    board = chess.Board("8/8/8/4k3/8/8/8/4K2R w K - 0 1")
    assert _answer(board, Limits(depth=2)).source == "search"
    assert _answer(chess.Board("8/8/8/4k3/8/8/3r4/4K2R w - - 0 1"), Limits(depth=2), path="").source == "search"
