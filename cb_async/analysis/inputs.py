"""Input readers: a PGN file becomes games, an EPD or FEN file becomes positions.

Reading is lazy (a generator), so a database of a million positions is never held whole; the
job reads ahead only as far as its workers need. A game or line that cannot be analysed (an
illegal move, a broken FEN, a variant other than standard chess or Chess960) is yielded as a
`Problem` with its number and reason, and reading goes on. A file that cannot be read at all
raises `InputError` before anything is yielded, which the command line turns into one line and
exit status 2.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from typing import TextIO

import chess
import chess.pgn

from cb_async.analysis.model import GameInput, Item, PositionInput, PositionTask, Problem, task_for
from cb_async.search.searcher import history_keys

#: Variants python-chess reports for the rules we analyse (the `Variant` header, lower case).
_STANDARD = {"", "standard", "chess", "from position", "normal"}
_CHESS960 = {"chess960", "chess 960", "fischerandom", "fischer random", "chess960 (fischer random)", "freestyle"}


class _QuietBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, without logging each error: we report them ourselves."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


class InputError(Exception):
    """The input file cannot be read at all (missing, unreadable, a directory...)."""


def input_kind(path: str) -> str:
    """'pgn' or 'epd' (EPD or FEN lines), by the file's extension, else by its first line."""
    lowered = path.lower()
    if lowered.endswith(".pgn"):
        return "pgn"
    if lowered.endswith((".epd", ".fen")):
        return "epd"
    with _open(path) as handle:
        for line in handle:
            stripped = line.strip()
            if not stripped or stripped.startswith(("%", "#")):
                continue
            return "pgn" if stripped.startswith(("[", "1.", "{")) else "epd"
    return "epd"


def read_items(path: str) -> Iterator[Item | Problem]:
    """Every game or position of `path`, in order, with problems in their place."""
    kind = input_kind(path)
    handle = _open(path)
    return _read_pgn(path, handle) if kind == "pgn" else _read_lines(path, handle)


def count_items(path: str) -> int:
    """How many games or lines `path` holds, by a cheap scan (for the progress bar's estimate)."""
    kind = input_kind(path)
    count = 0
    with _open(path) as handle:
        for line in handle:
            if kind == "pgn":
                count += line.startswith("[Event ")
            else:
                stripped = line.strip()
                count += bool(stripped) and not stripped.startswith(("%", "#"))
    return count


def _open(path: str) -> TextIO:
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory")
    try:
        # PGN files in the wild are not always UTF-8: undecodable bytes must not stop a job.
        return open(path, encoding="utf-8-sig", errors="replace")
    except OSError as error:
        raise InputError(f"{path}: {error.strerror or error}") from None


# -- PGN -----------------------------------------------------------------------------------------


def _read_pgn(path: str, handle: TextIO) -> Iterator[GameInput | Problem]:
    with handle:
        number = 0
        while True:
            try:
                game = chess.pgn.read_game(handle, Visitor=_QuietBuilder)
            except (ValueError, UnicodeError) as error:
                number += 1
                yield Problem(path, number, "game", f"unreadable: {error}")
                continue
            if game is None:
                return
            number += 1
            yield game_input(path, number, game)


def game_input(path: str, number: int, game: chess.pgn.Game) -> GameInput | Problem:
    """The positions of a parsed game, or the reason it cannot be analysed."""
    variant = game.headers.get("Variant", "").strip().lower()
    if variant not in _STANDARD and variant not in _CHESS960:
        return Problem(path, number, "game", f"variant {game.headers.get('Variant')!r} is not supported "
                                             "(standard chess and Chess960 are)")
    if game.errors:
        return Problem(path, number, "game", _describe(game.errors[0]))
    try:
        board = game.board()
    except ValueError as error:
        return Problem(path, number, "game", f"bad FEN header: {error}")
    if variant in _CHESS960:
        board.chess960 = True
    if not board.is_valid():
        return Problem(path, number, "game", f"the starting position is not legal ({_status(board)})")
    moves = tuple(game.mainline_moves())
    if not moves and dict(game.headers) == dict(chess.pgn.Game().headers):
        return Problem(path, number, "game", "neither tags nor moves: not a game")
    positions: list[PositionTask] = [task_for(board, history_keys(board))]
    for move in moves:
        if not board.is_legal(move):  # python-chess reports these in game.errors; never trust it blindly
            return Problem(path, number, "game", f"illegal move {move.uci()} at ply {board.ply() + 1}")
        board.push(move)
        positions.append(task_for(board, history_keys(board)))
    return GameInput(number, game, moves, tuple(positions))


def _describe(error: Exception) -> str:
    text = str(error)
    return text if text else type(error).__name__


def _status(board: chess.Board) -> str:
    names = [(flag.name or "").lower().replace("_", " ") for flag in chess.Status if flag and board.status() & flag]
    return ", ".join(names) or "invalid"


# -- EPD and FEN ---------------------------------------------------------------------------------


def _read_lines(path: str, handle: TextIO) -> Iterator[PositionInput | Problem]:
    with handle:
        for number, line in enumerate(handle, start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith(("%", "#")):
                continue
            yield position_input(path, number, stripped)


def position_input(path: str, number: int, text: str) -> PositionInput | Problem:
    """One EPD or FEN line as a position, or the reason it is not one."""
    parts = text.split()
    full_fen = len(parts) >= 6 and parts[4].isdigit() and parts[5].isdigit()
    try:
        board = chess.Board(None, chess960=True)
        if full_fen:  # a FEN, perhaps followed by EPD operations
            operations: dict[str, object] = dict(board.set_epd(" ".join(parts[:4] + parts[6:])))
            board.halfmove_clock, board.fullmove_number = int(parts[4]), max(1, int(parts[5]))
        else:
            operations = dict(board.set_epd(text))
        board.chess960 = board.has_chess960_castling_rights()
    except (ValueError, IndexError) as error:
        return Problem(path, number, "line", f"not a FEN or EPD position: {error}")
    if not board.is_valid():
        return Problem(path, number, "line", f"the position is not legal ({_status(board)})")
    return PositionInput(number, board, task_for(board, ()), operations, full_fen)


def read_text(text: str, name: str = "<text>") -> Iterator[Item | Problem]:
    """Items from PGN or EPD/FEN text (for the library API and tests)."""
    stripped = text.lstrip()
    handle = io.StringIO(text)
    if stripped.startswith(("[", "1.", "{")):
        return _read_pgn(name, handle)
    return _read_lines(name, handle)
