"""The opening book: the file check, the moves of a position, the choice, and who uses it.

The tests write their own tiny Polyglot books (`cb_async.search.book.write_book`), so that they do not
depend on a real book file.
"""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from cb_async.timeman import stop_token
from cb_async.search import book
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.sources import MoveSources
from cb_async.search.settings import SearchSettings

E4, D4, C4 = (chess.Move.from_uci(text) for text in ("e2e4", "d2d4", "c2c4"))


@pytest.fixture
def tiny_book(tmp_path: Path) -> str:
    start = chess.Board()
    after_e4 = chess.Board()
    after_e4.push(E4)
    castle = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    path = str(tmp_path / "tiny.bin")
    book.write_book(path, [
        (start, E4, 60), (start, D4, 30), (start, C4, 10),
        (after_e4, chess.Move.from_uci("c7c5"), 5),
        (castle, chess.Move.from_uci("e1g1"), 1),
    ])
    return path


def test_a_good_book_passes_the_check(tiny_book: str) -> None:
    assert book.check_book(tiny_book) is None


def test_missing_empty_and_corrupt_books_are_named(tmp_path: Path) -> None:
    assert "cannot read book" in book.check_book(str(tmp_path / "nothere.bin"))  # type: ignore[operator]
    (tmp_path / "empty.bin").write_bytes(b"")
    assert "is empty" in book.check_book(str(tmp_path / "empty.bin"))  # type: ignore[operator]
    (tmp_path / "odd.bin").write_bytes(b"x" * 17)
    assert "not a multiple of 16" in book.check_book(str(tmp_path / "odd.bin"))  # type: ignore[operator]
    rows = [book.ENTRY.pack(2, 0, 1, 0), book.ENTRY.pack(1, 0, 1, 0)]
    (tmp_path / "unsorted.bin").write_bytes(b"".join(rows))
    assert "not sorted" in book.check_book(str(tmp_path / "unsorted.bin"))  # type: ignore[operator]


def test_book_moves_heaviest_first_and_castling_in_board_notation(tiny_book: str) -> None:
    assert [(entry.move, entry.weight) for entry in book.book_moves(tiny_book, chess.Board())] == [
        (E4, 60), (D4, 30), (C4, 10)]
    castle = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert [entry.move for entry in book.book_moves(tiny_book, castle)] == [chess.Move.from_uci("e1g1")]
    assert book.book_moves(tiny_book, chess.Board("8/8/8/4k3/8/8/8/4K3 w - - 0 1")) == []
    assert book.book_moves(tiny_book, chess.Board(chess960=True)) == []  # a book is standard chess


def test_choice_is_by_weight_reproducible_and_best_only(tiny_book: str) -> None:
    moves = book.book_moves(tiny_book, chess.Board())
    assert book.choose(moves, True, random.Random(1)) == E4
    picks = [book.choose(moves, False, random.Random(seed)) for seed in range(300)]
    assert picks == [book.choose(moves, False, random.Random(seed)) for seed in range(300)]
    assert picks.count(E4) > picks.count(D4) > picks.count(C4) > 0
    assert book.choose(moves, True, random.Random(1), allowed=(C4,)) == C4
    assert book.choose(moves, False, random.Random(1), allowed=(chess.Move.from_uci("g1f3"),)) is None


def _answer(settings: SearchSettings, limits: Limits, board: chess.Board | None = None):
    sources = MoveSources(Searcher(hash_mb=1))
    return sources.search(board or chess.Board(), (), limits, settings, stop_token(limits, (board or chess.Board()).turn))


def test_a_game_search_plays_from_the_book_at_once(tiny_book: str) -> None:
    result = _answer(SearchSettings(own_book=True, book_file=tiny_book, book_best_move=True), Limits(movetime=5000))
    assert (result.best_move, result.source, result.nodes, result.depth) == (E4, "book", 0, 0)
    assert result.lines[0].score.cp == 0 and result.lines[0].pv == (E4,)


def test_a_ponder_search_uses_the_book_and_analysis_never(tiny_book: str) -> None:
    settings = SearchSettings(own_book=True, book_file=tiny_book)
    assert _answer(settings, Limits(depth=2).pondering()).source == "book"
    analysis = _answer(settings, Limits(infinite=True, depth=2))
    assert analysis.source == "search" and analysis.depth == 2


def test_without_own_book_or_out_of_book_the_search_answers(tiny_book: str) -> None:
    assert _answer(SearchSettings(book_file=tiny_book), Limits(depth=1)).source == "search"
    board = chess.Board("8/8/8/4k3/8/8/8/4KQ2 w - - 0 1")
    assert _answer(SearchSettings(own_book=True, book_file=tiny_book), Limits(depth=1), board).source == "search"


def test_searchmoves_restrict_the_book(tiny_book: str) -> None:
    settings = SearchSettings(own_book=True, book_file=tiny_book)
    assert _answer(settings, Limits(depth=1, search_moves=(D4,))).best_move == D4
