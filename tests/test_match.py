"""The match tool: its statistics, and a short real match between two engines."""

from __future__ import annotations

import asyncio
import io
import re
import signal
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from cb_async.cli import UsageError
from cb_async.tools.match import (
    DEFAULT_OPENINGS, Adjudication, EngineSpec, Fault, Injector, Sprt, TimeControl, _fault, elo_summary, load_openings,
    parse_engine, run_match,
)
from conformance.engine_process import engine_command


def test_shipped_openings_are_many_and_legal() -> None:
    boards = load_openings(DEFAULT_OPENINGS)
    assert len(boards) >= 50
    assert len({b.epd() for b in boards}) == len(boards)
    assert all(b.is_valid() and not b.is_game_over() for b in boards)


def test_parse_engine_words() -> None:
    spec = parse_engine(["cmd=python3 sunfish.py", "name=sunfish", "proto=uci", "option.Hash=64"])
    assert spec == EngineSpec("sunfish", ["python3", "sunfish.py"], "uci", {"Hash": "64"})
    with pytest.raises(ValueError):
        parse_engine(["name=x"])
    with pytest.raises(ValueError):
        parse_engine(["cmd=x", "proto=telnet"])


def test_parse_engine_takes_a_node_budget_for_one_engine() -> None:
    assert parse_engine(["cmd=/usr/games/stockfish", "nodes=1000"]).nodes == 1000
    assert parse_engine(["cmd=x"]).nodes is None
    for bad in ("nodes=0", "nodes=-5", "nodes=many"):
        with pytest.raises(ValueError, match="nodes"):
            parse_engine(["cmd=x", bad])
    with pytest.raises(ValueError, match="unknown engine key"):
        parse_engine(["cmd=x", "node=1000"])


def test_time_control() -> None:
    assert TimeControl.parse("10+0.1") == TimeControl(base=10.0, increment=0.1)
    assert TimeControl.parse("60") == TimeControl(base=60.0)


@pytest.mark.parametrize("w,d,l,elo,positive", [(50, 0, 50, 0.0, None), (75, 0, 25, 190.8, True), (25, 0, 75, -190.8, False)])
def test_elo(w: int, d: int, l: int, elo: float, positive: bool | None) -> None:
    value, margin, los = elo_summary(w, d, l)
    assert value == pytest.approx(elo, abs=0.5)
    assert margin > 0
    if positive is True:
        assert los > 0.99
    elif positive is False:
        assert los < 0.01
    else:
        assert los == pytest.approx(0.5)


def test_the_sprt_decision_is_kept_where_it_was_reached() -> None:
    # With two games at a time, the game in flight when the bound is crossed still counts and
    # may pull the LLR back inside: the verdict must stay the one the test stopped on.
    from cb_async.tools.match import Tally

    sprt = Sprt(0, 10)
    tally = Tally(wins=600, draws=200, losses=200)
    assert tally.decide(sprt)
    assert tally.decision is not None
    assert tally.decision.startswith("H1 accepted at game 1000, W/D/L 600/200/200, LLR ")
    tally = Tally(wins=10, draws=10, losses=10)
    assert not tally.decide(sprt) and tally.decision is None
    tally = Tally(wins=467, draws=150, losses=367)  # the bound was crossed here...
    assert tally.decide(sprt)
    tally.losses += 1  # ...and the game in flight, lost, moves the LLR back below it
    assert sprt.state(tally.wins, tally.draws, tally.losses).endswith("running")
    assert tally.decide(sprt)
    assert tally.decision is not None and "at game 984, W/D/L 467/150/367" in tally.decision


def test_sprt_accepts_and_rejects() -> None:
    sprt = Sprt(0, 10)
    lower, upper = sprt.bounds
    assert lower == pytest.approx(-2.944, abs=0.01) and upper == pytest.approx(2.944, abs=0.01)
    assert sprt.state(600, 200, 200).endswith("H1 accepted")
    assert sprt.state(200, 200, 600).endswith("H0 accepted")
    assert sprt.state(10, 10, 10).endswith("running")


def test_a_short_match_records_every_game(tmp_path: Path) -> None:
    engine = EngineSpec("cb", engine_command())
    other = EngineSpec("cb-2", engine_command())
    pgn = tmp_path / "games.pgn"
    openings = load_openings(DEFAULT_OPENINGS)[:1]
    out = io.StringIO()
    tally = asyncio.run(run_match((engine, other), 2, openings, TimeControl(depth=1), Adjudication(draw_score=1000, draw_moves=2, draw_after=0),
                                  1, pgn, None, 1, out))
    assert tally.games == 2 and not tally.forfeits
    with pgn.open() as handle:
        games = [chess.pgn.read_game(handle), chess.pgn.read_game(handle)]
    assert [g.headers["White"] for g in games] == ["cb", "cb-2"]  # colours alternate
    assert games[0].board().fen() == games[1].board().fen() == openings[0].fen()  # same opening both ways
    assert "2/2 games" in out.getvalue()
    # Each move's comment is its score from the mover's side and its time, as python-chess signs it.
    comments = [node.comment for game in games for node in game.mainline()]
    assert comments and all(re.fullmatch(r"(\+[1-9]\d*|-[1-9]\d*|0|#[+-]\d+)/\d+\.\d\ds", c) for c in comments), comments


def test_an_engine_with_a_node_budget_is_sent_nodes_and_the_other_its_clock(tmp_path: Path) -> None:
    fixed_log, clocked_log = tmp_path / "fixed.log", tmp_path / "clocked.log"
    fixed = EngineSpec("fixed", [*engine_command(), "--log", str(fixed_log)], nodes=50)
    clocked = EngineSpec("clocked", [*engine_command(), "--log", str(clocked_log)])
    openings = load_openings(DEFAULT_OPENINGS)[:1]
    # A clock far too short for anything but 50 nodes: the fixed engine has none to lose.
    tally = asyncio.run(run_match((fixed, clocked), 2, openings, TimeControl(base=20, increment=0.1),
                                  Adjudication(draw_score=10_000, draw_moves=2, draw_after=0), 1, None, None, 1,
                                  io.StringIO()))
    assert tally.games == 2 and not tally.forfeits
    fixed_gos = [line for line in fixed_log.read_text().splitlines() if "<< go" in line]
    clocked_gos = [line for line in clocked_log.read_text().splitlines() if "<< go" in line]
    assert fixed_gos and all(line.endswith("go nodes 50") for line in fixed_gos)
    assert clocked_gos and all("wtime" in line and "nodes" not in line for line in clocked_gos)


def test_a_repetition_ends_the_game_when_it_happens_not_when_it_could() -> None:
    from cb_async.tools.match import game_over

    board = chess.Board()
    for move in ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1"]:
        board.push_uci(move)
    assert board.can_claim_threefold_repetition()  # Black could repeat with f6g8...
    assert game_over(board) is None  # ...but the game goes on until it does
    board.push_uci("f6g8")
    assert game_over(board) == ("1/2-1/2", "threefold repetition")
    mate = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    assert game_over(mate) == ("1-0", "checkmate")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the worker is found through /proc: Linux")
def test_a_match_with_faults_injected_stops_the_first_engines_worker_and_loses_no_game(tmp_path: Path) -> None:
    faulty = EngineSpec("faulty", engine_command())
    clean = EngineSpec("clean", engine_command())
    injector = Injector(Fault(every=2, signal=signal.SIGSTOP, after=0.02), "faulty")
    out = io.StringIO()
    tally = asyncio.run(run_match((faulty, clean), 1, load_openings(DEFAULT_OPENINGS)[:1], TimeControl(movetime=0.15),
                                  Adjudication(draw_score=1000, draw_moves=2, draw_after=6), 1, None, None, 1, out,
                                  injector=injector))
    assert tally.games == 1 and tally.forfeits == []
    assert injector.sent + injector.missed >= 2 and injector.sent >= 1


@pytest.mark.parametrize("words,problem", [
    (["every=0"], "--fault: every must be at least 1 and after at least 0"),
    (["signal=HUP"], "--fault: signal must be STOP or KILL, not 'HUP'"),
    (["often=3"], "--fault: expected every=N, signal=STOP|KILL or after=MS, not 'often=3'"),
])
def test_a_bad_fault_is_a_usage_error(words: list[str], problem: str) -> None:
    with pytest.raises(UsageError, match=re.escape(problem)):
        _fault(words)


def test_game_pairs_are_counted_pentanomially_whatever_order_they_finish_in() -> None:
    from cb_async.tools.match import GameResult, Tally

    def game(result: str, white: str) -> GameResult:
        return GameResult(white=white, black="b" if white == "a" else "a", result=result, reason="", pgn="")

    tally = Tally()
    tally.add(game("1-0", "a"), "a", 0)  # pair 0: a wins with White...
    tally.add(game("1/2-1/2", "a"), "a", 1)  # pair 1 starts before pair 0 ends
    assert tally.penta == [0, 0, 0, 0, 0]
    tally.add(game("1-0", "b"), "a", 0)  # ...and loses with Black: 1 point of 2
    tally.add(game("0-1", "b"), "a", 1)  # a draws, then wins with Black: 1.5 points
    assert tally.penta == [0, 0, 1, 1, 0]
    assert (tally.wins, tally.draws, tally.losses) == (2, 1, 1)


def test_the_pentanomial_sprt_decides_sooner_when_pairs_split_the_openings_bias() -> None:
    # 400 games as 200 pairs where most pairs are 1-1 (each side wins with the colour the
    # opening favours): the same W/D/L as independent games would give, but pairs vary less,
    # so the pentanomial LLR is further from zero than the trinomial one.
    from cb_async.tools.match import penta_summary

    sprt = Sprt(0, 10)
    penta = [2, 10, 120, 58, 10]  # 0, 0.5, 1, 1.5, 2 points
    wins, losses = 2 * 10 + 58 + 120, 2 * 2 + 10 + 120
    draws = 400 - wins - losses
    assert sprt.llr_penta(penta) > sprt.llr(wins, draws, losses) > 0
    elo, margin = penta_summary(penta)
    assert 0 < elo < 100 and 0 < margin < elo
    assert sprt.llr_penta([0, 0, 0, 0, 0]) == 0.0
    assert sprt.state(wins, draws, losses, penta).startswith(f"LLR {sprt.llr_penta(penta):.2f}")
