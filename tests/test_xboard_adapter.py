"""The XBoard adapter both ways, in-process: lines to commands, events to lines.

The adapter keeps the XBoard game, so most tests play a short scene: lines in, the commands
they produce, then the session's events (built by hand here) and every line written.
"""

from __future__ import annotations

from typing import Any

import chess
import pytest

from cb_async.adapters.xboard import XBoardAdapter, XBoardLines, parse_move
from cb_async.commands import (
    Cancel, Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions, Stop,
)
from cb_async.events import (
    SearchKindChanged, BestMove, Identity, Info, Message, OptionError, Ready, SearchCancelled,
)
from cb_async.framing import TooLong
from cb_async.limits import Limits
from cb_async.options import OPTIONS
from cb_async.results import Score, SearchInfo, SearchResult
from fake_runner import FakeRunner

M = chess.Move.from_uci
AT = 10.0


def feed(adapter: XBoardAdapter, *lines: str) -> list[object]:
    out: list[object] = []
    for line in lines:
        out += adapter.receive(line, AT)
    return out


def said(commands: list[object]) -> list[str]:
    """The lines the adapter passes through the session with `Emit`."""
    return [line for c in commands if isinstance(c, Emit) and isinstance(c.event, XBoardLines)
            for line in c.event.lines]


def only_go(commands: list[object]) -> Go:
    gos = [c for c in commands if isinstance(c, Go)]
    assert len(gos) == 1, commands
    return gos[0]


def result(best: str | None, ponder: str | None = None, cp: int = 20) -> SearchResult:
    pv = tuple(M(m) for m in (best, ponder) if m)
    return SearchResult(M(best) if best else None, M(ponder) if ponder else None,
                        Score(cp=cp), 5, 7, 1234, 56, pv)


def answer(adapter: XBoardAdapter, go: Go, best: str | None, ponder: str | None = None,
           ) -> tuple[list[str], list[object]]:
    assert go.board is not None
    return adapter.on_event(BestMove(result(best, ponder), go.board, search_tag=go.tag))


def info(depth: int, multipv: int, cp: int, pv: str, time: int = 1230, nodes: int = 4567,
         mate: int | None = None, bound: str | None = None) -> SearchInfo:
    score = Score(mate=mate) if mate is not None else Score(cp=cp)
    return SearchInfo(depth, depth, multipv, score, nodes, 1000, time,
                      tuple(M(m) for m in pv.split()), bound=bound)  # type: ignore[arg-type]


def engine_to_move(*setup: str) -> tuple[XBoardAdapter, Go]:
    """A game where the engine (White) was just told `go`."""
    adapter = XBoardAdapter()
    commands = feed(adapter, "new", *setup, "go")
    return adapter, only_go(commands)


# -- handshake and housekeeping ----------------------------------------------------------------


def test_protover_sends_the_features_in_one_burst_ending_with_done() -> None:
    adapter = XBoardAdapter()
    assert feed(adapter, "xboard", "protover 2") == [Identify()]
    lines, followups = adapter.on_event(Identity("cb-async", "authors", "0.1.0", OPTIONS))
    assert followups == []
    assert lines == [
        "feature ping=1 setboard=1 playother=1 san=0 usermove=1 time=1 draw=0 sigint=0 sigterm=1"
        ' reuse=1 analyze=1 colors=0 memory=1 smp=1 nps=1 exclude=1 egt="syzygy" variants="normal,fischerandom"'
        ' myname="cb-async 0.1.0"',
        'feature option="MultiPV -spin 1 1 256"',
        'feature option="MoveOverhead -spin 30 0 5000"',
        'feature option="ClearHash -button"',
        'feature option="OwnBook -check 0"',
        'feature option="BookFile -string "',
        'feature option="BookBestMove -check 0"',
        'feature option="EvalFile -string "',
        'feature option="UCI_LimitStrength -check 0"',
        'feature option="UCI_Elo -spin 1500 800 1850"',
        'feature option="LevelFollowsOpponent -check 0"',
        "feature done=1",
    ]
    assert lines[0].count('egt="syzygy"') == 1  # claimed now that the tables work


@pytest.mark.parametrize("line", [
    "xboard", "accepted ping", "rejected sigterm", "random", "computer", "name BOT lichess",
    "rating 2000 1800", "ics -", "draw", "egtpath syzygy /tb", "hard", "easy", "post", "nopost",
    "result 1-0 {White mates}", "time 100", "otim 100", "level 0 2:57 2.0", "st 0.5", "sd 4",
    "nps 1", "force", "exit", ".", "", "   ", "protover 2", "undo", "remove",
    "exclude all", "include all", "variant normal", "variant fischerandom",
])
def test_housekeeping_is_never_answered_with_an_error(line: str) -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "e2e4", "e7e5")
    assert said(feed(adapter, line)) == []


@pytest.mark.parametrize("line,expected", [
    ("foo bar", ["Error (unknown command): foo"]),
    ("edit", ["Error (unknown command): edit"]),
    ("e2e5", ["Illegal move: e2e5"]),
    ("usermove e2e5", ["Illegal move: e2e5"]),
    ("usermove Nf3", ["Illegal move: Nf3"]),
    ("usermove O-O", ["Illegal move: O-O"]),
    ("setboard this is not a fen", ["tellusererror Illegal position: this is not a fen"]),
    ("setboard 8/8/8/8/8/8/8/8 w - - 0 1", ["tellusererror Illegal position: 8/8/8/8/8/8/8/8 w - - 0 1"]),
    ("variant crazyhouse", ["Error (unsupported variant): crazyhouse"]),
    ("level x y z", ["Error (bad parameters): level x y z"]),
    ("option NoSuchThing=3", ["Error (unknown option): NoSuchThing"]),
])
def test_bad_input(line: str, expected: list[str]) -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force")
    assert said(feed(adapter, line)) == expected
    assert adapter.game.board == chess.Board()  # nothing changed


def test_too_long_line() -> None:
    assert said(XBoardAdapter().receive(TooLong(2_000_000), AT)) == ["Error (line too long): 2000000 bytes"]


def test_quit() -> None:
    adapter = XBoardAdapter()
    assert feed(adapter, "quit") == [Quit()]


@pytest.mark.parametrize("line,expected", [
    ("memory 64", SetOptions((("Hash", 64),))),
    ("memory 100000", SetOptions((("Hash", 4096),))),
    ("memory 0", SetOptions((("Hash", 1),))),
    ("cores 4", SetOptions((("Threads", 4),))),
    ("option MultiPV=3", SetOptions((("MultiPV", "3"),))),
    ("option MoveOverhead=100", SetOptions((("Move Overhead", "100"),))),
    ("option ClearHash", SetOptions((("Clear Hash", None),))),
])
def test_options(line: str, expected: SetOptions) -> None:
    assert feed(XBoardAdapter(), line) == [expected]


def test_option_errors_are_told_to_the_user() -> None:
    lines, _ = XBoardAdapter().on_event(OptionError("MultiPV", "MultiPV must be between 1 and 256, not 0"))
    assert lines == ["tellusererror MultiPV must be between 1 and 256, not 0"]


# -- the game state machine ------------------------------------------------------------------


def test_new_makes_the_engine_black_and_a_white_move_starts_its_search() -> None:
    adapter = XBoardAdapter()
    assert feed(adapter, "new") == [NewGame()]
    go = only_go(feed(adapter, "usermove e2e4"))
    assert go.board == chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    assert go.board.move_stack == [M("e2e4")]  # the history goes along, for repetitions
    assert go.received_at == AT and not go.ponder


def test_force_mode_takes_moves_for_both_sides_without_searching() -> None:
    adapter = XBoardAdapter()
    commands = feed(adapter, "new", "force", "e2e4", "usermove e7e5", "g1f3")
    assert not any(isinstance(c, Go) for c in commands)
    assert said(commands) == []
    assert adapter.game.board.move_stack == [M("e2e4"), M("e7e5"), M("g1f3")]


def test_go_plays_the_side_to_move_and_the_move_goes_into_the_game_before_it_is_written() -> None:
    adapter, go = engine_to_move("force", "e2e4")
    assert go.board is not None and go.board.turn == chess.BLACK
    lines, followups = answer(adapter, go, "e7e5", "g1f3")
    assert lines == ["move e7e5"] and followups == []
    # The race after `move`: the GUI's instant answer meets the updated game.
    assert adapter.game.board.peek() == M("e7e5")
    go2 = only_go(feed(adapter, "usermove g1f3"))
    assert go2.board is not None and go2.board.move_stack == [M("e2e4"), M("e7e5"), M("g1f3")]


def test_playother_makes_the_engine_play_the_side_not_to_move() -> None:
    adapter = XBoardAdapter()
    assert not any(isinstance(c, Go) for c in feed(adapter, "new", "force", "playother"))
    assert adapter.game.engine == chess.BLACK
    only_go(feed(adapter, "e2e4"))


def test_undo_and_remove_take_back_one_and_two_plies() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "e2e4", "e7e5", "g1f3")
    feed(adapter, "undo")
    assert adapter.game.board.move_stack == [M("e2e4"), M("e7e5")]
    feed(adapter, "remove")
    assert adapter.game.board.move_stack == []
    assert said(feed(adapter, "undo")) == ["Error (command not legal now): undo"]


def test_setboard_fen_and_x_fen_and_shredder_fen() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "setboard 4k3/8/8/8/8/8/4P3/4K3 w - - 0 1")
    assert adapter.game.board.fen() == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"
    feed(adapter, "new", "variant fischerandom", "force",
         "setboard bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1")
    assert adapter.game.board.chess960
    assert adapter.game.board.castling_rights == chess.BB_G1 | chess.BB_E1 | chess.BB_G8 | chess.BB_E8
    feed(adapter, "setboard bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1")
    assert adapter.game.board.castling_rights == chess.BB_G1 | chess.BB_E1 | chess.BB_G8 | chess.BB_E8


def test_a_bad_setboard_keeps_the_old_position() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "e2e4")
    assert said(feed(adapter, "setboard 8/8/8 w")) == ["tellusererror Illegal position: 8/8/8 w"]
    assert adapter.game.board.move_stack == [M("e2e4")]


@pytest.mark.parametrize("command", ["force", "new", "undo", "remove", "result 1-0", "setboard 4k3/8/8/8/8/8/8/4K2R w K - 0 1"])
def test_commands_while_thinking_stop_the_search_without_a_move(command: str) -> None:
    adapter, go = engine_to_move("force", "e2e4", "e7e5")
    commands = feed(adapter, command)
    assert commands[0] == Cancel()
    assert not any(isinstance(c, Go) for c in commands)
    # A late answer of the cancelled search is not played.
    assert answer(adapter, go, "g1f3") == ([], [])


def test_question_mark_stops_and_the_move_is_played() -> None:
    adapter, go = engine_to_move()
    assert feed(adapter, "?") == [Stop()]
    assert answer(adapter, go, "e2e4")[0] == ["move e2e4"]
    assert feed(adapter, "?") == []  # not thinking: ignored


def test_a_move_while_the_engine_thinks_is_out_of_turn() -> None:
    adapter, _ = engine_to_move()
    assert said(feed(adapter, "usermove e2e4")) == ["Illegal move (not your turn): e2e4"]


def test_the_engine_announces_the_end_of_the_game() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "force", "f2f3", "e7e5", "g2g4", "go"))
    assert answer(adapter, go, "d8h4")[0] == ["move d8h4", "0-1 {Black mates}"]


def test_go_on_a_finished_game_says_the_result_and_does_not_search() -> None:
    adapter = XBoardAdapter()
    commands = feed(adapter, "new", "force", "f2f3", "e7e5", "g2g4", "d8h4", "go")
    assert not any(isinstance(c, Go) for c in commands)
    assert said(commands) == ["0-1 {Black mates}"]


# -- time -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("setup,limits", [
    # level MPS BASE INC: minutes or minutes:seconds, a fractional increment in seconds.
    (["level 40 5 0"], Limits(white_clock=300_000, black_clock=300_000, moves_to_go=40)),
    (["level 0 2:57 2.0"], Limits(white_clock=177_000, black_clock=177_000, white_inc=2000, black_inc=2000)),
    (["level 0 1 0.5", "time 5000", "otim 4000"], Limits(white_clock=50_000, black_clock=40_000, white_inc=500, black_inc=500)),
    # time/otim are centiseconds, and `time` is the engine's own clock.
    (["level 0 0:30 0", "time 1", "otim 2"], Limits(white_clock=10, black_clock=20)),
    # st: float seconds per move; it replaces `level` and the other way round.
    (["level 40 5 0", "st 0.5"], Limits(movetime=500)),
    (["st 10", "level 0 1 0"], Limits(white_clock=60_000, black_clock=60_000)),
    # sd is in addition to the time control.
    (["st 2", "sd 7"], Limits(movetime=2000, depth=7)),
    (["sd 3"], Limits(depth=3)),
    # python-chess's node limit: `nps 1` + `st NODES`; cutechess's: `st 1` + `nps NODES`.
    (["nps 1", "st 5000"], Limits(nodes=5000)),
    (["st 1", "nps 20000"], Limits(nodes=20000)),
    (["nps 1000", "st 0.5"], Limits(nodes=500)),
])
def test_time_controls_become_limits_in_milliseconds(setup: list[str], limits: Limits) -> None:
    _, go = engine_to_move(*setup)
    assert go.limits == limits


def test_the_engine_clock_follows_the_colour_it_plays() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "level 0 5 0", "time 1000", "otim 2000", "e2e4"))
    assert (go.limits.white_clock, go.limits.black_clock) == (20_000, 10_000)


def test_moves_to_go_counts_down_within_a_session() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "level 40 5 0", "force", "e2e4", "e7e5", "g1f3", "go"))
    assert go.limits.moves_to_go == 39  # Black, on its second move


def test_new_clears_sd_and_nps_but_keeps_the_time_control() -> None:
    _, go = engine_to_move("level 0 1 0", "sd 5", "nps 100", "new")
    assert go.limits == Limits(white_clock=60_000, black_clock=60_000)


# -- thinking output -----------------------------------------------------------------------------


@pytest.mark.parametrize("search_info,line", [
    (info(5, 1, 31, "e2e4 e7e5"), "5 31 123 4567 e2e4 e7e5"),
    (info(5, 1, -31, "e2e4"), "5 -31 123 4567 e2e4"),
    (info(9, 1, 0, "e2e4", mate=3), "9 100003 123 4567 e2e4"),
    (info(9, 1, 0, "e2e4", mate=-2), "9 -100002 123 4567 e2e4"),
    (info(1, 1, 0, "e2e4", time=9), "1 0 0 4567 e2e4"),
    (info(6, 1, 40, "e2e4", bound="lower"), "6 40 123 4567 e2e4!"),
    (info(6, 1, -40, "e2e4", bound="upper"), "6 -40 123 4567 e2e4?"),
])
def test_thinking_line_format(search_info: SearchInfo, line: str) -> None:
    adapter, go = engine_to_move("post")
    assert go.board is not None
    assert adapter.on_event(Info(search_info, go.board, go.tag)) == ([line], [])


def test_no_thinking_output_without_post() -> None:
    adapter, go = engine_to_move("nopost")
    assert go.board is not None
    assert adapter.on_event(Info(info(1, 1, 5, "e2e4"), go.board, go.tag)) == ([], [])


def test_multipv_lines_of_a_depth_are_held_and_sent_best_last() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "post", "option MultiPV=3")
    go = only_go(feed(adapter, "analyze"))
    assert go.multipv == 3 and go.limits.infinite
    board = go.board
    assert board is not None
    out: list[str] = []
    for depth in (1, 2):
        for multipv, (cp, move) in enumerate([(40, "e2e4"), (30, "d2d4"), (10, "g1f3")], 1):
            lines, _ = adapter.on_event(Info(info(depth, multipv, cp, move), board, go.tag))
            if multipv < 3:
                assert lines == []
            out += lines
    assert out == [
        "1 10 123 4567 g1f3", "1 30 123 4567 d2d4", "1 40 123 4567 e2e4",
        "2 10 123 4567 g1f3", "2 30 123 4567 d2d4", "2 40 123 4567 e2e4",
    ]


def test_multipv_with_fewer_legal_moves_than_lines() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "force", "post", "option MultiPV=5", "setboard 7k/8/8/8/8/8/8/K7 w - - 0 1")
    go = only_go(feed(adapter, "analyze"))
    assert go.board is not None
    lines: list[str] = []
    for multipv, move in enumerate(["a1b2", "a1a2", "a1b1"], 1):
        lines += adapter.on_event(Info(info(3, multipv, 0, move), go.board, go.tag))[0]
    assert lines == ["3 0 123 4567 a1b1", "3 0 123 4567 a1a2", "3 0 123 4567 a1b2"]


# -- ping ----------------------------------------------------------------------------------------


def test_ping_is_answered_in_order_when_idle() -> None:
    adapter = XBoardAdapter()
    assert feed(adapter, "ping 7") == [IsReady(tag="7")]
    assert adapter.on_event(Ready(tag="7")) == (["pong 7"], [])


def test_ping_while_thinking_is_answered_after_the_move() -> None:
    adapter, go = engine_to_move()
    assert feed(adapter, "ping 3") == []
    assert answer(adapter, go, "e2e4") == (["move e2e4", "pong 3"], [])


def test_ping_while_thinking_then_force_is_answered_after_the_cancel() -> None:
    adapter, _ = engine_to_move()
    feed(adapter, "ping 3")
    assert feed(adapter, "force") == [Cancel(), IsReady(tag="3")]


def test_ping_while_pondering_or_analyzing_is_answered_at_once() -> None:
    adapter, go = engine_to_move("hard")
    answer(adapter, go, "e2e4", "e7e5")
    assert feed(adapter, "ping 4") == [IsReady(tag="4")]
    feed(adapter, "force", "analyze")
    assert feed(adapter, "ping 5") == [IsReady(tag="5")]


# -- pondering -------------------------------------------------------------------------------------


def test_hard_ponders_on_the_expected_reply_after_the_move() -> None:
    adapter, go = engine_to_move("level 0 1 0", "hard")
    lines, followups = answer(adapter, go, "e2e4", "e7e5")
    assert lines == ["move e2e4", "Hint: e7e5"]
    [ponder] = followups
    assert isinstance(ponder, Go) and ponder.ponder and ponder.board is not None
    assert ponder.board.move_stack == [M("e2e4"), M("e7e5")]
    assert ponder.limits == Limits(white_clock=60_000, black_clock=60_000)
    assert adapter.game.board.move_stack == [M("e2e4")]  # the game has only the real moves
    assert said(feed(adapter, "hint")) == ["Hint: e7e5"]
    # No thinking output while pondering.
    assert adapter.on_event(Info(info(1, 1, 0, "g1f3"), ponder.board, ponder.tag)) == ([], [])


def test_ponder_hit_goes_on_with_the_fresh_clock() -> None:
    adapter, go = engine_to_move("level 0 1 0", "hard", "post")
    [ponder] = answer(adapter, go, "e2e4", "e7e5")[1]
    assert isinstance(ponder, Go)
    commands = feed(adapter, "time 5000", "otim 4000", "usermove e7e5")
    assert commands == [PonderHit(received_at=AT, limits=Limits(white_clock=50_000, black_clock=40_000))]
    assert ponder.board is not None
    assert adapter.on_event(SearchKindChanged("game", ponder.tag)) == ([], [])  # the session took the hit
    # The same search goes on: its lines are shown now, and its move is played.
    assert adapter.on_event(Info(info(2, 1, 9, "g1f3"), ponder.board, ponder.tag))[0] == ["2 9 123 4567 g1f3"]
    assert answer(adapter, ponder, "g1f3")[0][0] == "move g1f3"


def test_ponder_miss_cancels_and_searches_afresh() -> None:
    adapter, go = engine_to_move("hard")
    answer(adapter, go, "e2e4", "e7e5")
    commands = feed(adapter, "usermove c7c5")
    assert commands[0] == Cancel()
    fresh = only_go(commands)
    assert not fresh.ponder and fresh.board is not None
    assert fresh.board.move_stack == [M("e2e4"), M("c7c5")]


def test_easy_stops_pondering_without_a_move() -> None:
    """python-chess ends a ponder with `easy` + `ping`, then sends `force`, moves and `go`."""
    adapter, go = engine_to_move("hard")
    [ponder] = answer(adapter, go, "e2e4", "e7e5")[1]
    assert feed(adapter, "easy", "ping 9") == [Cancel(), IsReady(tag="9")]
    assert isinstance(ponder, Go)
    assert adapter.on_event(SearchCancelled(ponder.tag)) == ([], [])
    assert not any(isinstance(c, Go) for c in feed(adapter, "force", "usermove e7e5", "hard"))
    only_go(feed(adapter, "go"))


def test_no_pondering_after_a_move_that_ends_the_game() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "hard", "force", "f2f3", "e7e5", "g2g4", "go"))
    assert answer(adapter, go, "d8h4", "a2a3") == (["move d8h4", "0-1 {Black mates}"], [])


# -- analysis ------------------------------------------------------------------------------------


def test_analyze_with_moves_undo_and_exit() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "post", "analyze"))
    assert go.limits == Limits(infinite=True) and go.board == chess.Board()
    commands = feed(adapter, "e2e4")
    assert commands[0] == Cancel()
    assert only_go(commands).board == chess.Board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
    commands = feed(adapter, "undo")
    assert commands[0] == Cancel() and only_go(commands).board == chess.Board()
    assert feed(adapter, ".") == []
    assert feed(adapter, "exit") == [Cancel()]
    assert feed(adapter, "e2e4") == []  # force mode after analysis


def test_exclude_and_include_restart_the_analysis_with_search_moves() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "analyze")
    commands = feed(adapter, "exclude all", "include e2e4", "include d2d4")
    gos = [c for c in commands if isinstance(c, Go)]
    assert gos[-1].limits.search_moves == (M("d2d4"), M("e2e4")) or set(gos[-1].limits.search_moves) == {M("e2e4"), M("d2d4")}
    commands = feed(adapter, "include all")
    assert only_go(commands).limits.search_moves == ()


def test_python_chess_root_moves_before_analyze() -> None:
    adapter = XBoardAdapter()
    commands = feed(adapter, "new", "force", "exclude all", "include g1f3", "post", "analyze")
    assert only_go(commands).limits.search_moves == (M("g1f3"),)


def test_multipv_changed_during_analysis_restarts_it() -> None:
    adapter = XBoardAdapter()
    feed(adapter, "new", "analyze")
    commands = feed(adapter, "option MultiPV=2")
    assert commands[0] == Cancel() and SetOptions((("MultiPV", "2"),)) in commands
    assert only_go(commands).multipv == 2


# -- Chess960 --------------------------------------------------------------------------------------

FRC = "setboard k7/8/8/8/8/8/8/4RKR1 w GE - 0 1"


@pytest.mark.parametrize("text,uci", [
    ("O-O", "f1g1"), ("O-O-O", "f1e1"), ("0-0", "f1g1"), ("0-0-0", "f1e1"),
    ("f1g1", "f1g1"), ("f1e1", "f1e1"),  # king takes rook
    ("f1c1", "f1e1"),  # the king's destination
])
def test_960_castling_input(text: str, uci: str) -> None:
    board = chess.Board("k7/8/8/8/8/8/8/4RKR1 w GE - 0 1", chess960=True)
    assert parse_move(board, text) == M(uci)


def test_960_castling_output_is_o_o() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "variant fischerandom", "force", FRC, "go"))
    assert answer(adapter, go, "f1e1")[0] == ["move O-O-O"]
    assert adapter.game.board.piece_at(chess.C1) == chess.Piece(chess.KING, chess.WHITE)


def test_standard_castling_is_e1g1_both_ways() -> None:
    adapter = XBoardAdapter()
    go = only_go(feed(adapter, "new", "force", "setboard r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "go"))
    assert answer(adapter, go, "e1g1")[0] == ["move e1g1"]
    feed(adapter, "force", "undo", "e1h1")
    assert adapter.game.board.peek() == M("e1g1")


# -- through the session: the ordering that solves the race after `move` --------------------------


async def run_scene(scene: list[Any], *, ponder: str | None = None) -> tuple[list[str], FakeRunner]:
    """Play lines (str) and search answers (("answer", best)) through a real Session; return
    every line the adapter writes."""
    import anyio

    from cb_async.session import InputLine, Session

    adapter = XBoardAdapter()
    runner = FakeRunner(stop_result=lambda board: result("a2a3"))
    written: list[str] = []
    done = anyio.Event()

    def sink(event: Any) -> list[Any]:
        lines, followups = adapter.on_event(event)
        written.extend(lines)
        if any(line == "pong end" for line in lines):
            done.set()
        return followups

    session = Session(runner, sink, lambda line: adapter.receive(line.text, line.received_at))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        for step in scene:
            if isinstance(step, tuple):
                _, best = step
                with anyio.fail_after(2):
                    while runner.active is None:  # let the session reach the search
                        await anyio.sleep(0)
                runner.active.finish(SearchResult(
                    M(best), M(ponder) if ponder else None, Score(cp=0), 3, 3, 10, 1,
                    (M(best), M(ponder)) if ponder else (M(best),)))
                with anyio.fail_after(2):
                    while not any(line.startswith("move ") for line in written):  # a GUI answers once it has read the move
                        await anyio.sleep(0)
            else:
                session.submit(InputLine(step, AT))
        session.submit(InputLine("force", AT))  # ends a search still running; its held pongs follow
        session.submit(InputLine("ping end", AT))
        with anyio.fail_after(2):
            await done.wait()
        session.submit(InputLine("quit", AT))
    return written, runner


async def test_the_answer_to_move_meets_the_updated_game() -> None:
    """The GUI answers the instant `move e7e5` is written: the session reads that answer only
    after the event that wrote the move, so the adapter's game already has e7e5."""
    written, runner = await run_scene(["new", "ping 1", "e2e4", ("answer", "e7e5"), "g1f3", "ping 2"])
    assert written == ["pong 1", "move e7e5", "pong 2", "pong end"]
    assert runner.searches[-1].board.move_stack == [M("e2e4"), M("e7e5"), M("g1f3")]


async def test_ponder_hit_through_the_session_uses_the_fresh_clock() -> None:
    written, runner = await run_scene(
        ["new", "level 0 1 0", "hard", "time 6000", "otim 6000", "e2e4", ("answer", "e7e5"),
         "time 500", "otim 6000", "g1f3", "ping 3"], ponder="g1f3")
    assert written[:2] == ["move e7e5", "Hint: g1f3"]
    assert len(runner.searches) == 2  # the hit went on with the ponder search
    soft, hard = runner.searches[1].deadlines  # type: ignore[misc]
    assert hard - AT <= 5.0  # within the fresh 5 s, not the old 60 s


@pytest.mark.parametrize("args", [["inf", "5", "0"], ["40", "5", "inf"], ["nan", "5", "0"]])
def test_a_level_with_numbers_that_are_not_finite_is_a_value_error(args: list[str]) -> None:
    from cb_async.adapters.xboard import parse_level

    with pytest.raises(ValueError):
        parse_level(args)


def opponent_values(commands: list[object]) -> list[str]:
    return [value for c in commands if isinstance(c, SetOptions) for name, value in c.values
            if name == "UCI_Opponent"]


def test_name_rating_and_computer_after_new_set_the_opponent_as_python_chess_sends_them() -> None:
    adapter = XBoardAdapter()
    # python-chess's order for send_opponent_information (lichess-bot): new, name, rating, computer.
    assert opponent_values(feed(adapter, "new")) == []
    assert opponent_values(feed(adapter, "name BOT lichess")) == ["none none human BOT lichess"]
    assert opponent_values(feed(adapter, "rating 1700 2012")) == ["none 2012 human BOT lichess"]
    assert opponent_values(feed(adapter, "computer")) == ["none 2012 computer BOT lichess"]
    assert feed(adapter, "ics lichess.org") == []
    assert adapter.game.opponent.ics == "lichess.org"
    # The next game forgets the opponent, once.
    assert opponent_values(feed(adapter, "new")) == [""]
    assert opponent_values(feed(adapter, "new")) == []


def test_a_rating_of_zero_or_junk_is_an_unknown_rating_never_an_error() -> None:
    adapter = XBoardAdapter()
    for line in ("rating 0 0", "rating", "rating x y"):
        commands = feed(adapter, line)
        assert said(commands) == []
        assert opponent_values(commands) == [""]


def test_a_note_for_the_record_is_a_comment_line_and_a_message_for_the_user_a_telluser() -> None:
    # XBoard shows `telluser` in a dialog: how the engine kept a deadline is not worth one.
    adapter = XBoardAdapter()
    feed(adapter, "xboard", "protover 2")
    quiet, _ = adapter.on_event(Message("the search process did not answer in time", quiet=True))
    loud, _ = adapter.on_event(Message("cannot read book /x.bin"))
    assert quiet == ["# the search process did not answer in time"]
    assert loud == ["telluser cannot read book /x.bin"]
