"""Batch analysis in-process: lichess's rules, the journal, the readers, the job through its API."""

from __future__ import annotations

import asyncio
import io
import json
import math
import os
import signal
from pathlib import Path

import chess
import chess.pgn
import pytest

from cb_async.analysis import GameAnalysis, Job, PositionAnalysis, Problem, Progress, Result, analyse, read_text
from cb_async.analysis import annotate
from cb_async.analysis.annotate import WhiteEval
from cb_async.analysis.inputs import read_items
from cb_async.analysis.journal import Journal, JournalError, JournalMismatch
from cb_async.analysis.local import LocalPool
from cb_async.runner import library_context
from cb_async.analysis.model import Evaluation, Line
from cb_async.analysis.writers import annotated_pgn, epd_line, judgements, json_lines
from cb_async.limits import Limits
from cb_async.results import Score

DATA = Path(__file__).parent / "data"
GAMES = DATA / "analysis-games.pgn"
POSITIONS = DATA / "analysis-positions.epd"
#: 64 positions, one batch each.
OPENINGS = Path(__file__).parent.parent / "cb_async" / "data" / "openings.epd"
LIMITS = Limits(nodes=400)


async def collect(job: Job) -> list[Result]:
    async with job:
        return [result async for result in job.results()]


@pytest.fixture(scope="module")
def reference() -> list[Result]:
    """The games analysed once, in input order, by two workers: what every other run must equal."""
    return asyncio.run(collect(Job(str(GAMES), LIMITS, workers=2, ordered=True)))


def texts(results: list[Result]) -> list[str]:
    out = []
    for result in results:
        match result:
            case GameAnalysis():
                out.append(annotated_pgn(result))
            case PositionAnalysis():
                out.append(epd_line(result))
            case Problem():
                out.append(str(result))
    return out


# -- lichess's rules -----------------------------------------------------------------------------


def test_winning_chances_follow_lichess_logistic_and_clamp_the_win_percent_at_1000_cp() -> None:
    assert annotate.winning_chances(0) == 0
    assert annotate.winning_chances(100) == pytest.approx(2 / (1 + math.exp(-0.368208)) - 1)
    assert annotate.win_percent(WhiteEval(cp=5000)) == annotate.win_percent(WhiteEval(cp=1000))
    assert annotate.win_percent(WhiteEval(mate=3)) == annotate.win_percent(WhiteEval(cp=1000))
    assert annotate.win_percent(WhiteEval(mate=-1)) == annotate.win_percent(WhiteEval(cp=-1000))


@pytest.mark.parametrize(("before", "after", "mover", "mark"), [
    (0, -40, chess.WHITE, None),                      # loses 0.07 of winning chances
    (0, -60, chess.WHITE, annotate.INACCURACY),       # 0.11
    (0, -120, chess.WHITE, annotate.MISTAKE),         # 0.22
    (0, -170, chess.WHITE, annotate.BLUNDER),         # 0.31
    (0, 170, chess.BLACK, annotate.BLUNDER),          # the same, for Black
    (0, -170, chess.BLACK, None),                     # Black gained
    (800, 600, chess.WHITE, None),                    # far ahead: 200 cp cost only 0.10 - 0.002
])
def test_marks_follow_lichess_winning_chance_thresholds(before: int, after: int, mover: chess.Color,
                                                        mark: str | None) -> None:
    assert annotate.judge(WhiteEval(cp=before), WhiteEval(cp=after), mover) == mark


def test_walking_into_a_mate_or_losing_one_is_marked_by_lichess_mate_rules() -> None:
    assert annotate.judge(WhiteEval(cp=50), WhiteEval(mate=-3), chess.WHITE) == annotate.BLUNDER
    assert annotate.judge(WhiteEval(cp=-800), WhiteEval(mate=-3), chess.WHITE) == annotate.MISTAKE
    assert annotate.judge(WhiteEval(cp=-1200), WhiteEval(mate=-3), chess.WHITE) == annotate.INACCURACY
    assert annotate.judge(WhiteEval(mate=2), WhiteEval(cp=300), chess.WHITE) == annotate.BLUNDER
    assert annotate.judge(WhiteEval(mate=2), WhiteEval(cp=800), chess.WHITE) == annotate.MISTAKE
    assert annotate.judge(WhiteEval(mate=2), WhiteEval(cp=1500), chess.WHITE) == annotate.INACCURACY
    assert annotate.judge(WhiteEval(mate=-2), WhiteEval(cp=-300), chess.BLACK) == annotate.BLUNDER
    assert annotate.judge(WhiteEval(mate=3), WhiteEval(mate=2), chess.WHITE) is None  # still mating


def test_move_accuracy_is_lichess_curve_with_its_uncertainty_bonus() -> None:
    assert annotate.move_accuracy(60, 60) == 100
    assert annotate.move_accuracy(60, 70) == 100
    expected = 103.1668100711649 * math.exp(-0.04354415386753951 * 20) - 3.166924740191411 + 1
    assert annotate.move_accuracy(60, 40) == pytest.approx(expected)
    assert annotate.move_accuracy(100, 0) == 0


def test_a_side_that_never_loses_anything_has_full_accuracy_and_no_centipawn_loss() -> None:
    evals = [WhiteEval(cp=20)] * 9
    accuracy = annotate.game_accuracy(evals, chess.WHITE)
    assert accuracy[chess.WHITE] == pytest.approx(100) and accuracy[chess.BLACK] == pytest.approx(100)
    assert annotate.average_centipawn_loss(evals, chess.WHITE) == {chess.WHITE: 0, chess.BLACK: 0}


def test_centipawn_loss_is_counted_for_the_side_that_moved_and_clamped_at_1000() -> None:
    evals = [WhiteEval(cp=0), WhiteEval(cp=-300), WhiteEval(cp=-300), WhiteEval(mate=-2), WhiteEval(cp=200)]
    # White: 0 -> -300 (300), -300 -> -1000 (700); Black: -300 -> -300 (0), -1000 -> 200 (1200).
    assert annotate.average_centipawn_loss(evals, chess.WHITE) == {chess.WHITE: 500, chess.BLACK: 600}
    accuracy = annotate.game_accuracy(evals, chess.WHITE)
    assert accuracy[chess.WHITE] is not None and accuracy[chess.WHITE] < 50
    assert accuracy[chess.BLACK] is not None and accuracy[chess.BLACK] < 60


# -- the journal ---------------------------------------------------------------------------------


def _evaluation(key: str, cp: int = 12) -> Evaluation:
    return Evaluation(key, "e2e4", Score(cp=cp), ("e2e4", "e7e5"), 5, 7, 400, 3, (Line(Score(cp=cp), ("e2e4", "e7e5")),))


def test_the_journal_gives_back_what_it_recorded_and_drops_a_line_torn_by_a_kill(tmp_path: Path) -> None:
    path = str(tmp_path / "job.journal")
    journal = Journal(path, {"nodes": 400})
    assert journal.open() == {}
    journal.append(_evaluation("a"))
    journal.append(_evaluation("b", cp=-3))
    journal.close()
    with open(path, "ab") as handle:
        handle.write(b'{"key":"c","best":"e2')  # the process died inside this write
    again = Journal(path, {"nodes": 400})
    assert again.open() == {"a": _evaluation("a"), "b": _evaluation("b", cp=-3)}
    again.append(_evaluation("c"))
    again.close()
    lines = Path(path).read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[-1])["key"] == "c"


def test_a_journal_written_for_another_budget_is_refused_and_restart_discards_it(tmp_path: Path) -> None:
    path = str(tmp_path / "job.journal")
    journal = Journal(path, {"nodes": 400})
    journal.open()
    journal.append(_evaluation("a"))
    journal.close()
    with pytest.raises(JournalMismatch, match="nodes 400"):
        Journal(path, {"nodes": 800}).open()
    fresh = Journal(path, {"nodes": 800})
    assert fresh.open(restart=True) == {}
    fresh.close()
    assert len(Path(path).read_text().splitlines()) == 1


def test_a_damaged_journal_line_in_the_middle_is_an_error_not_a_silent_loss(tmp_path: Path) -> None:
    path = tmp_path / "job.journal"
    journal = Journal(str(path), {"nodes": 400})
    journal.open()
    journal.append(_evaluation("a"))
    journal.append(_evaluation("b"))
    journal.close()
    lines = path.read_text().splitlines()
    lines[1] = "garbage"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(JournalError, match="line 2"):
        Journal(str(path), {"nodes": 400}).open()


# -- the readers ---------------------------------------------------------------------------------


def test_bad_games_are_reported_with_their_number_and_reason_and_the_rest_are_read() -> None:
    items = list(read_items(str(GAMES)))
    problems = [item for item in items if isinstance(item, Problem)]
    assert [(p.number, p.kind) for p in problems] == [(2, "game"), (4, "game")]
    assert "Qxh7" in problems[0].reason and str(GAMES) in str(problems[0])
    assert "Atomic" in problems[1].reason
    games = [item for item in items if not isinstance(item, Problem)]
    assert [game.number for game in games] == [1, 3, 5]
    assert len(games[0].positions) == 34  # 33 moves and the final position


def test_text_that_is_no_game_at_all_is_reported_not_analysed() -> None:
    items = list(read_text("[Event \"x\"]\n\n1. e4 *\n\ngarbage\n", "junk.pgn"))
    assert type(items[0]).__name__ == "GameInput"
    assert isinstance(items[1], Problem) and items[1].number == 2 and "not a game" in items[1].reason


def test_epd_and_fen_lines_are_read_with_their_operations_and_a_bad_line_is_reported() -> None:
    items = list(read_items(str(POSITIONS)))
    assert [type(item).__name__ for item in items] == ["PositionInput", "PositionInput", "Problem",
                                                       "PositionInput", "PositionInput"]
    problem = items[2]
    assert isinstance(problem, Problem) and problem.number == 3 and problem.kind == "line"


def test_a_chess960_game_is_read_under_chess960_rules() -> None:
    game = [item for item in read_items(str(GAMES)) if not isinstance(item, Problem)][2]
    assert all(task.chess960 and "|960|" in task.key for task in game.positions)
    board = chess.Board(game.positions[0].fen, chess960=True)
    assert chess.Move.from_uci("f1g1") in board.legal_moves  # king takes own rook: castling


# -- the job -------------------------------------------------------------------------------------


def test_worker_processes_are_never_forked_from_the_driver() -> None:
    assert library_context().get_start_method() in ("forkserver", "spawn")


async def test_one_and_two_workers_give_identical_results_in_input_order(reference: list[Result]) -> None:
    one = await collect(Job(str(GAMES), LIMITS, workers=1, ordered=True))
    assert texts(one) == texts(reference)
    assert [type(r).__name__ for r in one] == ["GameAnalysis", "Problem", "GameAnalysis", "Problem", "GameAnalysis"]


async def test_identical_positions_across_games_are_searched_once() -> None:
    job = Job(str(GAMES), LIMITS, workers=2)
    results = await collect(job)
    games = [result for result in results if isinstance(result, GameAnalysis)]
    keys = [task.key for game in games for task in game.item.positions]
    assert job.progress.searched == len(set(keys)) < len(keys)
    assert job.progress.done == len(keys)
    assert job.progress.shared == len(keys) - len(set(keys))


async def test_a_worker_killed_mid_job_is_replaced_and_the_job_completes_with_the_same_results() -> None:
    # 2,000 nodes: the 63 positions left take one worker seconds, a replacement a fraction of one.
    limits = Limits(nodes=2000)
    reference = texts(await collect(Job(str(OPENINGS), limits, workers=2, ordered=True)))
    pool = LocalPool(2)
    killed: list[int] = []

    def kill_a_worker(progress: Progress) -> None:
        # After the first answer, with 63 positions still to go: the dead worker is found out
        # by the position it holds or by the next one it is given, whatever the timing.
        if not killed and progress.searched == 1:
            killed.append(pool.pids()[0])
            os.kill(killed[0], signal.SIGKILL)

    job = Job(str(OPENINGS), limits, ordered=True, pool=pool, on_progress=kill_a_worker)
    results = await collect(job)
    assert killed and killed[0] not in pool.pids()
    assert job.progress.workers_lost == 1 and job.progress.workers_replaced == 1
    assert texts(results) == reference and len(reference) == 64


async def test_a_second_run_with_the_journal_searches_nothing_and_gives_the_same_results(
        tmp_path: Path, reference: list[Result]) -> None:
    journal = str(tmp_path / "games.journal")
    first = Job(str(GAMES), LIMITS, workers=2, journal=journal, ordered=True)
    assert texts(await collect(first)) == texts(reference)
    second = Job(str(GAMES), LIMITS, workers=1, journal=journal, ordered=True)
    assert texts(await collect(second)) == texts(reference)
    assert second.progress.searched == 0 and second.progress.from_journal == first.progress.done
    assert len(Path(journal).read_text().splitlines()) == 1 + first.progress.searched


async def test_the_api_takes_parsed_games_and_boards_and_yields_as_results_complete() -> None:
    game = chess.pgn.read_game(io.StringIO("1. f3 e5 2. g4 Qh4# 0-1"))
    assert game is not None
    async with analyse([game, chess.Board()], LIMITS, workers=2) as found:
        results = [result async for result in found]
    kinds = sorted(type(result).__name__ for result in results)
    assert kinds == ["GameAnalysis", "PositionAnalysis"]
    fools = next(result for result in results if isinstance(result, GameAnalysis))
    assert fools.evaluations[-1].score == Score(mate=0) and fools.evaluations[-1].best is None
    assert fools.evaluations[-2].best == "d8h4" and fools.evaluations[-2].score == Score(mate=1)


async def test_read_text_feeds_the_api_with_pgn_text() -> None:
    async with analyse(read_text("1. e4 e5 *\n"), Limits(depth=2), workers=1) as found:
        results = [r async for r in found]
    assert len(results) == 1 and isinstance(results[0], GameAnalysis) and len(results[0].evaluations) == 3


# -- the output ----------------------------------------------------------------------------------


def test_the_annotated_pgn_parses_back_with_evals_and_marks_where_the_moves_are(reference: list[Result]) -> None:
    analysed = [result for result in reference if isinstance(result, GameAnalysis)]
    marked = 0
    for analysis in analysed:
        parsed = chess.pgn.read_game(io.StringIO(annotated_pgn(analysis)))
        assert parsed is not None and not parsed.errors
        assert parsed.headers.get("Variant") == analysis.item.game.headers.get("Variant")
        for side in ("White", "Black"):
            assert f"{side}ACPL" in parsed.headers and f"{side}Accuracy" in parsed.headers
        marks = judgements(analysis)
        records = [json.loads(line) for line in json_lines(analysis).splitlines()]
        nodes = list(parsed.mainline())
        assert [node.move for node in nodes] == list(analysis.item.moves)
        for ply, node in enumerate(nodes):
            after = records[ply + 1]["score"]
            score = node.eval()
            if "mate" in after and after["mate"] == 0:
                assert score is None  # checkmate on the board: lichess writes no eval
            else:
                assert score is not None
                mover_to_move = score.pov(node.turn())
                expected = after.get("cp")
                assert (mover_to_move.mate() == after["mate"]) if expected is None else (mover_to_move.score() == expected)
            nag = {chess.pgn.NAG_DUBIOUS_MOVE: annotate.INACCURACY, chess.pgn.NAG_MISTAKE: annotate.MISTAKE,
                   chess.pgn.NAG_BLUNDER: annotate.BLUNDER}
            found = [nag[n] for n in node.nags if n in nag]
            assert found == ([marks[ply]] if marks[ply] else [])
            assert records[ply]["judgement"] == marks[ply]
            if marks[ply]:
                marked += 1
                parent = node.parent
                assert parent is not None and len(parent.variations) == 2
                assert parent.variations[1].move.uci() == records[ply]["best"] != node.move.uci()
                assert "was best" in node.comment
    assert marked > 0


class _PoisonedPool:
    """In-process workers that die whenever they reach one position (a position that crashes
    the engine): the job must give that position up after MAX_CRASHES deaths, report the games
    that need it, and finish the rest."""

    def __init__(self, poison: str, workers: int = 2) -> None:
        from cb_async.analysis.analyst import Analyst

        self.poison = poison
        self.analyst = Analyst()
        self.workers = [self._worker(number) for number in range(workers)]
        self.deaths = 0

    def _worker(self, number: int) -> object:
        pool = self

        class Worker:
            name = f"fake {number}"
            engine = "cb-async"

            async def evaluate(self, batch, limits, emit):  # type: ignore[no-untyped-def]
                from cb_async.analysis.pool import WorkerLost

                for finished, task in enumerate(batch):
                    if task.key == pool.poison:
                        pool.deaths += 1
                        raise WorkerLost(finished, "died on the poison")
                    emit(pool.analyst.evaluate(task, limits))

        return Worker()

    async def start(self):  # type: ignore[no-untyped-def]
        return list(self.workers)

    async def replace(self, worker):  # type: ignore[no-untyped-def]
        return self._worker(99)

    async def close(self) -> None:
        pass

    def pids(self) -> list[int]:
        return []


async def test_a_position_that_kills_three_workers_is_given_up_and_only_its_games_are_skipped() -> None:
    from cb_async.analysis.job import MAX_CRASHES

    games = [item for item in read_items(str(GAMES)) if not isinstance(item, Problem)]
    poison = games[0].positions[20].key  # in the Opera game only
    pool = _PoisonedPool(poison)
    results = await collect(Job(str(GAMES), Limits(depth=2), pool=pool, ordered=True))  # type: ignore[arg-type]
    assert pool.deaths == MAX_CRASHES
    first = results[0]
    assert isinstance(first, Problem) and first.number == 1 and f"died {MAX_CRASHES} times" in first.reason
    assert [type(r).__name__ for r in results[1:]] == ["Problem", "GameAnalysis", "Problem", "GameAnalysis"]
