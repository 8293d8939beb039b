"""The human's side for a GUI drive that has no engine-against-engine mode: read the engine's
`cb-async --log` file, rebuild the current game (the last `position` the GUI sent, plus the
`bestmove` that answered it), and print a move for the side to move, chosen at random among
the legal ones but never a promotion (it would open a dialog); or `over RESULT` when the game
has ended. The random choice is seeded by the ply, so a drive replays the same game.

Used by scripts/gui/gnome-chess.sh; needs python-chess (in cb-async's virtual environment).
"""

from __future__ import annotations

import random
import re
import sys

import chess

LINE = re.compile(r"^\S+ +\S+ (<<|>>) (.*)$")


def current_board(path: str) -> chess.Board:
    board = chess.Board()
    with open(path, encoding="utf-8") as handle:
        for raw in handle:
            match = LINE.match(raw.rstrip("\n"))
            if match is None:
                continue
            direction, text = match.groups()
            words = text.split()
            if direction == "<<" and words[:2] == ["position", "startpos"]:
                board = chess.Board()
                for move in words[3:]:
                    board.push_uci(move)
            elif direction == "<<" and words[:2] == ["position", "fen"]:
                end = words.index("moves") if "moves" in words else len(words)
                board = chess.Board(" ".join(words[2:end]))
                for move in words[end + 1:]:
                    board.push_uci(move)
            elif direction == ">>" and words[:1] == ["bestmove"] and words[1] != "(none)":
                board.push_uci(words[1])
    return board


def main() -> None:
    board = current_board(sys.argv[1])
    if board.is_game_over(claim_draw=True):
        print("over", board.result(claim_draw=True))
        return
    moves = [move for move in board.legal_moves if move.promotion is None] or list(board.legal_moves)
    print(random.Random(board.ply()).choice(moves).uci())


if __name__ == "__main__":
    main()
