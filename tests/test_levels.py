"""Strength levels: a horizon and seeded noise for game and ponder searches, none in analysis."""

from __future__ import annotations

import chess
import pytest

from cb_async.timeman import stop_token
from cb_async.search.levels import CALIBRATION, MAX_ELO, MIN_ELO, level_for, settings_at, strength_of
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.sources import MoveSources
from cb_async.search.settings import SearchSettings

MIDDLEGAME = chess.Board("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4")


def _answer(elo: int, limits: Limits, board: chess.Board = MIDDLEGAME, on_info=None):
    sources = MoveSources(Searcher(hash_mb=1))
    settings = SearchSettings(limit_strength=True, elo=elo)
    return sources.search(board, (), limits, settings, stop_token(limits, board.turn), on_info)


def test_levels_grow_with_elo_and_clamp() -> None:
    levels = [level_for(elo) for elo in range(MIN_ELO, MAX_ELO + 1, 50)]
    for weaker, stronger in zip(levels, levels[1:]):
        assert weaker.depth <= stronger.depth and weaker.nodes <= stronger.nodes
        assert weaker.sigma >= stronger.sigma
    assert level_for(100).elo == MIN_ELO and level_for(99_999).elo == MAX_ELO


def test_the_calibration_is_monotonic_and_every_knob_follows_the_raw_strength() -> None:
    labels = [label for label, _ in CALIBRATION]
    strengths = [strength for _, strength in CALIBRATION]
    assert labels == sorted(set(labels)) and strengths == sorted(set(strengths))
    assert all(0.0 <= strength <= 1.0 for strength in strengths)
    for label, strength in CALIBRATION:
        assert strength_of(label) == strength
    knobs = [settings_at(step / 100) for step in range(101)]
    for (d1, n1, s1, c1), (d2, n2, s2, c2) in zip(knobs, knobs[1:]):
        assert d1 <= d2 and n1 < n2 and s1 >= s2 and c1 >= c2
    assert knobs[-1][2] == 0 and knobs[-1][3] == 1  # the top plays its best move, no noise


def test_a_game_search_keeps_the_horizon_and_is_reproducible() -> None:
    level = level_for(1000)
    first = _answer(1000, Limits(movetime=20_000))
    again = _answer(1000, Limits(movetime=20_000))
    assert first.depth <= level.depth and first.nodes <= level.nodes + 64
    assert first.best_move == again.best_move and first.best_move in MIDDLEGAME.legal_moves


def test_a_ponder_search_keeps_the_horizon_analysis_leaves_it_out() -> None:
    level = level_for(800)
    ponder = _answer(800, Limits(depth=10).pondering())
    assert ponder.depth <= level.depth
    # A node limit well past the level's budget: analysis searches all of it.
    analysis = _answer(800, Limits(infinite=True, nodes=4 * level.nodes))
    assert analysis.nodes > 2 * level.nodes and analysis.depth > ponder.depth


def test_infos_show_only_the_lines_asked_for_and_the_answer_is_one_of_the_candidates() -> None:
    infos = []
    result = _answer(1200, Limits(depth=2), on_info=infos.append)
    assert infos and all(info.multipv == 1 for info in infos)
    assert result.lines[0].multipv == 1 and result.lines[0].pv[0] == result.best_move
    assert len(result.lines) == 1


def test_low_levels_vary_their_moves_over_positions_high_levels_play_the_best() -> None:
    boards = []
    board = chess.Board()
    for text in ("e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6"):
        board.push_uci(text)
        boards.append(board.copy())
    full = [MoveSources(Searcher(hash_mb=1)).search(b, (), Limits(depth=2), SearchSettings(), StopToken()).best_move
            for b in boards]
    weak = [_answer(800, Limits(depth=2), b).best_move for b in boards]
    assert weak != full


@pytest.mark.parametrize("options,elo", [
    ({"UCI_Elo": 1200}, 1200),
    ({"UCI_Elo": 1200, "UCI_Opponent": "none 1700 human someone"}, 1200),  # off by default
    ({"UCI_Elo": 1200, "Level Follows Opponent": True, "UCI_Opponent": "none 1700 human someone"}, 1700),
    ({"UCI_Elo": 1200, "Level Follows Opponent": True, "UCI_Opponent": "GM 2850 human Magnus"}, MAX_ELO),
    ({"UCI_Elo": 1200, "Level Follows Opponent": True, "UCI_Opponent": "none 400 human beginner"}, MIN_ELO),
    ({"UCI_Elo": 1200, "Level Follows Opponent": True, "UCI_Opponent": "none none computer bot"}, 1200),
    ({"UCI_Elo": 1200, "Level Follows Opponent": True, "UCI_Opponent": ""}, 1200),
])
def test_the_level_follows_the_opponents_rating_only_when_asked_and_within_the_calibrated_range(
        options: dict[str, object], elo: int) -> None:
    settings = SearchSettings.from_options({"UCI_LimitStrength": True, **options})
    assert settings.elo == elo


def test_a_level_plays_with_the_hand_written_evaluation_its_calibration_was_measured_with() -> None:
    limits = Limits(movetime=20_000)
    sources = MoveSources(Searcher(hash_mb=1))
    settings = SearchSettings(limit_strength=True, elo=1700, eval_file="")  # the built-in net
    with_net = sources.search(MIDDLEGAME, (), limits, settings, stop_token(limits, MIDDLEGAME.turn))
    sources = MoveSources(Searcher(hash_mb=1))
    settings = SearchSettings(limit_strength=True, elo=1700, eval_file="none")
    without = sources.search(MIDDLEGAME, (), limits, settings, stop_token(limits, MIDDLEGAME.turn))
    assert (with_net.best_move, with_net.nodes, with_net.score) == (without.best_move, without.nodes, without.score)
    # ...while a full-strength search of the same position uses the net.
    full = MoveSources(Searcher(hash_mb=1)).search(MIDDLEGAME, (), Limits(depth=5), SearchSettings(eval_file=""),
                                                   StopToken())
    plain = MoveSources(Searcher(hash_mb=1)).search(MIDDLEGAME, (), Limits(depth=5), SearchSettings(eval_file="none"),
                                                    StopToken())
    assert full.nodes != plain.nodes
