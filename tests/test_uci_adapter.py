"""The UCI adapter both ways, table-driven: lines to commands, events to lines."""

from __future__ import annotations

import chess
import pytest

from cb_async.adapters.uci import UciAdapter, UciNotice
from cb_async.commands import (
    Emit, Go, Identify, IsReady, NewGame, PonderHit, Quit, SetOptions, SetPosition, Stop,
)
from cb_async.events import BestMove, Identity, Info, Message, OptionError, OptionsSet, Ready, SearchStarted
from cb_async.framing import TooLong
from cb_async.limits import Limits
from cb_async.options import OPTIONS
from cb_async.results import Score, SearchInfo, SearchResult

M = chess.Move.from_uci


def receive(*lines: str, adapter: UciAdapter | None = None) -> list[object]:
    adapter = adapter or UciAdapter()
    out: list[object] = []
    for line in lines:
        out += adapter.receive(line, 10.0)
    return out


def notices(commands: list[object]) -> list[str]:
    return [c.event.text for c in commands if isinstance(c, Emit) and isinstance(c.event, UciNotice)]


@pytest.mark.parametrize("line,expected", [
    ("uci", [Identify()]),
    ("isready", [IsReady()]),
    ("  isready  ", [IsReady()]),
    ("isready\t", [IsReady()]),
    ("ucinewgame", [NewGame()]),
    ("stop", [Stop()]),
    ("ponderhit", [PonderHit(received_at=10.0)]),
    ("quit", [Quit()]),
    ("debug on", []),
    ("debug off", []),
    ("joho debug on", []),
    ("register later", []),
    ("", []),
    ("xboard", []),
])
def test_simple_commands(line: str, expected: list[object]) -> None:
    assert receive(line) == expected


@pytest.mark.parametrize("line,name,value", [
    ("setoption name Hash value 64", "Hash", "64"),
    ("setoption name Move Overhead value 100", "Move Overhead", "100"),
    ("setoption name Clear Hash", "Clear Hash", None),
    ("setoption name SyzygyPath value /a b/c", "SyzygyPath", "/a b/c"),
    ("setoption name SyzygyPath value", "SyzygyPath", ""),
    ("setoption name SyzygyPath value <empty>", "SyzygyPath", "<empty>"),
    ("setoption  name  UCI_ShowWDL  VALUE  true", "UCI_ShowWDL", "true"),
])
def test_setoption(line: str, name: str, value: str | None) -> None:
    assert receive(line) == [SetOptions(((name, value),))]


def test_setoption_without_name() -> None:
    assert notices(receive("setoption value 3")) == ["setoption needs: setoption name <name> [value <value>]"]


def test_position_startpos_and_moves() -> None:
    [command] = receive("position startpos moves e2e4 e7e5 g1f3")
    assert isinstance(command, SetPosition)
    assert command.board.move_stack == [M("e2e4"), M("e7e5"), M("g1f3")]


def test_position_fen_with_four_fields_and_uppercase_promotion() -> None:
    [command] = receive("position fen 8/P6k/8/8/8/8/8/K7 w - - moves a7a8Q")
    assert isinstance(command, SetPosition)
    assert command.board.piece_at(chess.A8) == chess.Piece(chess.QUEEN, chess.WHITE)


def test_castling_both_forms_in_standard_chess() -> None:
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    for text in ("e1g1", "e1h1"):
        [command] = receive(f"position fen {fen} moves {text}")
        assert isinstance(command, SetPosition)
        assert command.board.piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE)


@pytest.mark.parametrize("line,message", [
    ("position fen nonsense", "invalid FEN, position unchanged"),
    ("position fen 8/8/8/8/8/8/8/8 w - - 0 1", "invalid FEN, position unchanged"),
    ("position startpos moves e2e5", "illegal move e2e5 in position, position unchanged"),
    ("position", "position needs startpos or fen"),
    ("position somewhere", "position needs startpos or fen, not 'somewhere'; position unchanged"),
])
def test_bad_position_keeps_the_last_good_one(line: str, message: str) -> None:
    adapter = UciAdapter()
    receive("position startpos moves d2d4", adapter=adapter)
    out = receive(line, adapter=adapter)
    assert len(notices(out)) == 1 and notices(out)[0].startswith(message)
    assert not any(isinstance(c, SetPosition) for c in out)
    # searchmoves are still read against the last good position
    [go] = receive("go depth 1 searchmoves d7d5", adapter=adapter)
    assert isinstance(go, Go) and go.limits.search_moves == (M("d7d5"),)


@pytest.mark.parametrize("line,limits,ponder", [
    ("go", Limits(), False),
    ("go infinite", Limits(infinite=True), False),
    ("go depth 7", Limits(depth=7), False),
    ("go nodes 5000", Limits(nodes=5000), False),
    ("go mate 3", Limits(mate=3), False),
    ("go movetime 1500", Limits(movetime=1500), False),
    ("go wtime 60000 btime 50000 winc 1000 binc 900 movestogo 20",
     Limits(white_clock=60000, black_clock=50000, white_inc=1000, black_inc=900, moves_to_go=20), False),
    ("go ponder wtime 1000 btime 1000", Limits(white_clock=1000, black_clock=1000), True),
    ("go wtime 1000 btime 1000 winc 0 binc 0", Limits(white_clock=1000, black_clock=1000), False),
    ("go searchmoves e2e4 d2d4 depth 3", Limits(depth=3, search_moves=(M("e2e4"), M("d2d4"))), False),
    ("go depth 3 searchmoves e2e4 d2d4", Limits(depth=3, search_moves=(M("e2e4"), M("d2d4"))), False),
    ("go depth 3 searchmoves 0000", Limits(depth=3), False),
])
def test_go(line: str, limits: Limits, ponder: bool) -> None:
    [go] = receive(line)
    assert go == Go(limits, ponder=ponder, received_at=10.0)


@pytest.mark.parametrize("line,limits,message", [
    ("go wtime 0 btime 100", Limits(white_clock=1, black_clock=100), "go: wtime 0 counted as 1 ms"),
    ("go wtime -50 btime 100", Limits(white_clock=1, black_clock=100), "go: wtime -50 counted as 1 ms"),
    ("go movetime 0", Limits(movetime=1), "go: movetime 0 counted as 1 ms"),
    ("go depth -1", Limits(), "go: ignored depth -1"),
    ("go depth x", Limits(), "go: ignored depth x, not a number"),
    ("go depth", Limits(), "go: depth needs a value"),
    ("go sideways", Limits(), "go: ignored unknown token sideways"),
    ("go searchmoves e2e5", Limits(), "searchmoves: ignored e2e5, not a legal move here"),
])
def test_malformed_go_still_searches(line: str, limits: Limits, message: str) -> None:
    out = receive(line)
    assert notices(out) == [message]
    assert out[-1] == Go(limits, received_at=10.0)


def test_unknown_command_and_over_long_line() -> None:
    assert notices(receive("hello world")) == ["unknown command: hello world"]
    adapter = UciAdapter()
    assert notices(adapter.receive(TooLong(2_000_000), 0.0)) == ["ignored a line of 2000000 bytes: over the 1 MiB limit"]


# -- output ---------------------------------------------------------------------------------

def info(**changes: object) -> SearchInfo:
    values: dict[str, object] = dict(depth=5, seldepth=9, multipv=1, score=Score(cp=31), nodes=12345, nps=50000,
                                     time=246, pv=(M("e2e4"), M("e7e5")), hashfull=12, tbhits=0)
    values.update(changes)
    return SearchInfo(**values)  # type: ignore[arg-type]


def test_identity_lines() -> None:
    lines = UciAdapter().format(Identity("cb-async", "us", "1.0", OPTIONS))
    assert lines[:2] == ["id name cb-async 1.0", "id author us"]
    assert "option name Hash type spin default 16 min 1 max 4096" in lines
    assert "option name Ponder type check default false" in lines
    assert "option name Clear Hash type button" in lines
    assert not any("maxTimeMs" in line for line in lines)  # CNP's own option
    assert lines[-1] == "uciok"


@pytest.mark.parametrize("event,lines", [
    (Ready(), ["readyok"]),
    (Message("hello  there"), ["info string hello there"]),
    (OptionError("Hash", "Hash must be between 1 and 4096, not 0"), ["info string Hash must be between 1 and 4096, not 0"]),
    (Info(info(), chess.Board()), [
        "info depth 5 seldepth 9 multipv 1 score cp 31 nodes 12345 nps 50000 hashfull 12 tbhits 0 time 246 pv e2e4 e7e5"]),
    (Info(info(score=Score(mate=-3), bound="upper", multipv=2), chess.Board()), [
        "info depth 5 seldepth 9 multipv 2 score mate -3 upperbound nodes 12345 nps 50000 hashfull 12 tbhits 0 time 246 pv e2e4 e7e5"]),
])
def test_event_lines(event: object, lines: list[str]) -> None:
    assert UciAdapter().format(event) == lines


def test_wdl_when_asked() -> None:
    adapter = UciAdapter()
    adapter.format(OptionsSet({"UCI_ShowWDL": True}))  # the session accepted the value
    [line] = adapter.format(Info(info(score=Score(mate=2)), chess.Board()))
    assert " score mate 2 wdl 1000 0 0 nodes " in line


def test_bestmove_with_final_infos_for_every_line() -> None:
    lines_ = (info(multipv=1), info(multipv=2, pv=(M("d2d4"),), score=Score(cp=20)))
    result = SearchResult(M("e2e4"), M("e7e5"), Score(cp=31), 5, 9, 12345, 246, (M("e2e4"), M("e7e5")), lines_)
    out = UciAdapter().format(BestMove(result, chess.Board()))
    assert out == [
        "info depth 5 seldepth 9 multipv 1 score cp 31 nodes 12345 nps 50000 hashfull 12 tbhits 0 time 246 pv e2e4 e7e5",
        "info depth 5 seldepth 9 multipv 2 score cp 20 nodes 12345 nps 50000 hashfull 12 tbhits 0 time 246 pv d2d4",
        "bestmove e2e4 ponder e7e5",
    ]


def test_bestmove_stopped_before_depth_one_still_has_a_scored_info() -> None:
    result = SearchResult(M("g1f3"), None, Score(cp=0), 0, 0, 40, 2, ())
    assert UciAdapter().format(BestMove(result, chess.Board())) == [
        "info depth 0 seldepth 0 multipv 1 score cp 0 nodes 40 nps 20000 hashfull 0 tbhits 0 time 2 pv g1f3",
        "bestmove g1f3",
    ]


@pytest.mark.parametrize("score,first", [(Score(mate=0), "info depth 0 score mate 0"), (Score(cp=0), "info depth 0 score cp 0")])
def test_no_legal_move(score: Score, first: str) -> None:
    result = SearchResult(None, None, score, 0, 0, 0, 0)
    assert UciAdapter().format(BestMove(result, chess.Board())) == [first, "bestmove (none)"]


def test_chess960_castling_is_king_takes_rook() -> None:
    adapter = UciAdapter()
    adapter.format(OptionsSet({"UCI_Chess960": True}))
    [command] = adapter.receive("position fen r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1 moves e1h1", 0.0)
    assert isinstance(command, SetPosition) and command.board.chess960
    assert command.board.piece_at(chess.G1) == chess.Piece(chess.KING, chess.WHITE)
    assert command.board.piece_at(chess.F1) == chess.Piece(chess.ROOK, chess.WHITE)


def test_the_notation_options_follow_only_what_the_session_accepted() -> None:
    adapter = UciAdapter()
    assert adapter.receive("setoption name UCI_Chess960 value maybe", 0.0) == [SetOptions((("UCI_Chess960", "maybe"),))]
    assert not adapter.chess960  # refused by the session: no OptionsSet, nothing changes
    adapter.format(OptionsSet({"UCI_Chess960": True, "UCI_ShowWDL": True}))
    assert adapter.chess960 and adapter.show_wdl


def test_each_info_line_is_written_once() -> None:
    """The final depth's lines were written as the search went: the answer does not repeat them."""
    adapter = UciAdapter()
    board = chess.Board()
    adapter.format(SearchStarted(board, "game"))
    written = [line for depth in (1, 2, 3)
               for line in adapter.format(Info(info(depth=depth, multipv=1), board))]
    last = info(depth=3, multipv=1)
    result = SearchResult(M("e2e4"), M("e7e5"), Score(cp=31), 3, 9, 12345, 246, (M("e2e4"), M("e7e5")), (last,))
    written += adapter.format(BestMove(result, board))
    assert [line.split(" pv ")[0].split(" seldepth")[0] for line in written] == [
        "info depth 1", "info depth 2", "info depth 3", "bestmove e2e4 ponder e7e5"]


def test_a_final_line_unlike_the_last_one_written_is_written() -> None:
    """Stopped in the middle of an iteration after a fail-high line: the answer ends on the
    last complete depth's line, which is not what was written last."""
    adapter = UciAdapter()
    board = chess.Board()
    adapter.format(SearchStarted(board, "game"))
    adapter.format(Info(info(depth=3), board))
    adapter.format(Info(info(depth=4, bound="lower"), board))
    result = SearchResult(M("e2e4"), M("e7e5"), Score(cp=31), 3, 9, 12345, 246, (M("e2e4"), M("e7e5")),
                          (info(depth=3),))
    out = adapter.format(BestMove(result, board))
    assert [line.split(" seldepth")[0] for line in out] == ["info depth 3", "bestmove e2e4 ponder e7e5"]
