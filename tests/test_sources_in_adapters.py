"""How each front end shows a book or tablebase answer, and the XBoard `bk`/`egtpath` commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import chess
import chess.engine

from cb_async.adapters.cnp import search_result
from cb_async.adapters.uci import UciAdapter
from cb_async.adapters.xboard import XBoardAdapter
from cb_async.search.book import BookMove, write_book
from cb_async.commands import BookQuery, SetOptions
from cb_async.events import BestMove, BookEntries
from cb_async.results import Score, SearchInfo, SearchResult

E4 = chess.Move.from_uci("e2e4")


def _book_result() -> SearchResult:
    info = SearchInfo(depth=0, seldepth=0, multipv=1, score=Score(cp=0), nodes=0, nps=0, time=1, pv=(E4,))
    return SearchResult(E4, None, Score(cp=0), 0, 0, 0, 1, pv=(E4,), lines=(info,), source="book")


def test_uci_says_book_move_before_a_complete_info_and_the_bestmove() -> None:
    lines = UciAdapter().format(BestMove(_book_result(), chess.Board()))
    assert lines == [
        "info string book move e2e4",
        "info depth 0 seldepth 0 multipv 1 score cp 0 nodes 0 nps 0 hashfull 0 tbhits 0 time 1 pv e2e4",
        "bestmove e2e4",
    ]


def test_cnp_reports_the_source() -> None:
    result = search_result(BestMove(_book_result(), chess.Board()), 1, (E4,))
    assert result["source"] == "book" and result["bestMove"] == "e2e4" and result["depth"] == 0


def test_xboard_bk_asks_the_session_and_lists_weights() -> None:
    adapter = XBoardAdapter()
    commands = adapter.receive("bk", 0.0)
    assert len(commands) == 1 and isinstance(commands[0], BookQuery)
    assert commands[0].board == chess.Board()
    moves = (BookMove(E4, 3), BookMove(chess.Move.from_uci("d2d4"), 1))
    lines, followups = adapter.on_event(BookEntries(moves, chess.Board()))
    assert (lines, followups) == (["\te2e4 75% (weight 3)", "\td2d4 25% (weight 1)", ""], [])
    assert adapter.on_event(BookEntries((), chess.Board()))[0] == ["\tno book moves", ""]


def test_xboard_egtpath_sets_syzygy_only() -> None:
    adapter = XBoardAdapter()
    assert adapter.receive("egtpath syzygy /tables/with space", 0.0) == [
        SetOptions((("SyzygyPath", "/tables/with space"),), tag="egtpath")]
    assert adapter.receive("egtpath gaviota /g", 0.0) == []


def test_embedded_play_reports_a_book_move(tmp_path: Path) -> None:
    import cb_async

    path = str(tmp_path / "book.bin")
    write_book(path, [(chess.Board(), E4, 1)])

    async def main() -> chess.engine.PlayResult:
        async with cb_async.Engine({"OwnBook": True, "BookFile": path}) as engine:
            return await asyncio.wait_for(engine.play(chess.Board(), chess.engine.Limit(time=5)), 20)

    result = asyncio.run(main())
    assert result.move == E4 and result.info["string"] == "book move e2e4"
