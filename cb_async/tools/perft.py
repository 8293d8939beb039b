"""`cb-async perft <FEN|startpos> <depth>`: count leaf nodes of the legal move tree.

The search plays on python-chess boards, so perft walks python-chess's own move generator: it
checks the move generation the engine actually uses, and its tests compare with published
node counts. Output is the "divide" form every perft tool prints: one `move: count` line per
root move, a blank line, then `Nodes searched: N`.
"""

from __future__ import annotations

import argparse
import sys

import chess

from cb_async.cli import UsageError, whole_number


def perft(board: chess.Board, depth: int) -> int:
    """Leaf nodes at `depth` plies below `board` (bulk-counted at the last ply)."""
    if depth <= 0:
        return 1
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in board.generate_legal_moves():
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """(root move, leaf count) for every legal root move, in generation order."""
    result = []
    for move in list(board.generate_legal_moves()):
        board.push(move)
        result.append((move, perft(board, depth - 1)))
        board.pop()
    return result


def parse_position(text: str) -> chess.Board:
    """A board from `startpos`, a standard FEN, an X-FEN or a Shredder-FEN.

    Chess960 is detected rather than declared: a castling field with file letters
    (Shredder-FEN, `HAha`) or castling rights that are not the standard corner rooks with the
    king on the e-file make a Chess960 board, so its castling moves print king-takes-rook.
    """
    text = text.strip()
    if text == "startpos":
        return chess.Board()
    fields = text.split()
    if len(fields) < 1:
        raise ValueError("empty FEN")
    board = chess.Board(text, chess960=True)
    castling = fields[2] if len(fields) > 2 else "-"
    shredder = any(letter not in "KQkq-" for letter in castling)
    if not shredder and not board.has_chess960_castling_rights():
        board.chess960 = False
    status = board.status()
    if status & ~chess.STATUS_VALID & (
        chess.STATUS_NO_WHITE_KING | chess.STATUS_NO_BLACK_KING | chess.STATUS_TOO_MANY_KINGS
        | chess.STATUS_OPPOSITE_CHECK | chess.STATUS_PAWNS_ON_BACKRANK
    ):
        raise ValueError(f"not a playable position: {text}")
    return board


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = "%(prog)s [-h] FEN|startpos DEPTH"
    parser.add_argument("position", nargs="+", metavar="FEN|startpos",
                        help="the position: startpos, or a FEN (X-FEN and Shredder-FEN too), quoted or as separate words")
    parser.add_argument("depth", metavar="DEPTH", type=whole_number(1), help="plies to walk (at least 1)")


def run(args: argparse.Namespace) -> int:
    """`cb-async perft`: the divide lines and the total; a bad position is a UsageError."""
    try:
        board = parse_position(" ".join(args.position))
    except ValueError as error:
        raise UsageError(f"bad position: {error}") from None
    total = 0
    lines = []
    for move, count in divide(board, args.depth):
        lines.append(f"{board.uci(move)}: {count}")
        total += count
    lines.append("")
    lines.append(f"Nodes searched: {total}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
