"""Polyglot opening books: checking a file, listing a position's moves, choosing one.

The format is a sorted array of 16-byte big-endian entries (key u64, move u16, weight u16,
learn u32); python-chess reads it (memory-mapped, binary search by key) and turns the moves
into legal `chess.Move`s. A book is for standard chess: a Chess960 board never uses it.

`check_book` runs when the `BookFile` option is set, so that a missing or corrupt file is
refused with a clear message at once (the engine plays on without a book) rather than being
discovered in the middle of a game.
"""

from __future__ import annotations

import os
import random
import struct
from dataclasses import dataclass

import chess

ENTRY = struct.Struct(">QHHI")


@dataclass(frozen=True, slots=True)
class BookMove:
    move: chess.Move
    weight: int


def check_book(path: str) -> str | None:
    """None if `path` is a readable Polyglot book, else what is wrong with it."""
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError as error:
        return f"cannot read book {path}: {error.strerror or error}"
    if not data:
        return f"book {path} is empty"
    if len(data) % ENTRY.size:
        return f"book {path} is not a Polyglot book: its size {len(data)} is not a multiple of {ENTRY.size}"
    previous = -1
    for key, *_ in ENTRY.iter_unpack(data):
        if key < previous:
            return f"book {path} is not a Polyglot book: its keys are not sorted"
        previous = key
    return None


def book_moves(path: str, board: chess.Board) -> list[BookMove]:
    """The legal book moves of `board`, heaviest first (empty on any problem with the file)."""
    if board.chess960 or not os.path.isfile(path):
        return []
    import chess.polyglot

    try:
        with chess.polyglot.open_reader(path) as reader:
            found: dict[chess.Move, int] = {}
            for entry in reader.find_all(board):
                found[entry.move] = found.get(entry.move, 0) + entry.weight
    except (OSError, ValueError):
        return []
    return [BookMove(move, weight) for move, weight in sorted(found.items(), key=lambda item: -item[1])]


def choose(moves: list[BookMove], best_only: bool, rng: random.Random,
           allowed: tuple[chess.Move, ...] = ()) -> chess.Move | None:
    """A move by weight (or the heaviest with `best_only`), among `allowed` when given."""
    if allowed:
        moves = [entry for entry in moves if entry.move in allowed]
    if not moves:
        return None
    if best_only:
        return moves[0].move
    total = sum(entry.weight for entry in moves)
    pick = rng.randrange(total)
    for entry in moves:
        pick -= entry.weight
        if pick < 0:
            return entry.move
    return moves[-1].move


def write_book(path: str, entries: list[tuple[chess.Board, chess.Move, int]]) -> None:
    """Write a Polyglot book of (position, move, weight): for tests and small home-made books.
    Castling is stored as Polyglot wants it, king takes rook (e1h1)."""
    import chess.polyglot

    rows = []
    for board, move, weight in entries:
        if board.is_castling(move) and not board.chess960:
            rook_file = 7 if board.is_kingside_castling(move) else 0
            move = chess.Move(move.from_square, chess.square(rook_file, chess.square_rank(move.from_square)))
        raw = move.to_square | move.from_square << 6 | ((move.promotion - 1) if move.promotion else 0) << 12
        rows.append((chess.polyglot.zobrist_hash(board), raw, weight, 0))
    rows.sort()
    with open(path, "wb") as file:
        for row in rows:
            file.write(ENTRY.pack(*row))
