"""Check the games a GUI saved after a drive: every move replays legally, the game ended, and
not by something the engine did wrong (a loss on time, an illegal move, a crash, a disconnect).

Prints one line a game (result, reason, plies, castlings) and exits 1 on the first bad one.
Used by the drives in scripts/gui/; needs python-chess (in cb-async's virtual environment).
"""

from __future__ import annotations

import argparse
import re
import sys

import chess
import chess.pgn

BAD_ENDING = re.compile(r"time|illegal|forfeit|crash|disconnect|error|stall|abort", re.IGNORECASE)


def check(path: str, chess960: bool, last_only: bool) -> int:
    games = 0
    with open(path, encoding="utf-8", errors="replace") as handle:
        found: list[chess.pgn.Game] = []
        while (game := chess.pgn.read_game(handle)) is not None:
            found.append(game)
        for game in found[-1:] if last_only else found:
            games += 1
            if game.errors:
                print(f"{path}: game {games}: {game.errors[0]}", file=sys.stderr)
                return 1
            board = game.board()
            if chess960 and not board.chess960:
                print(f"{path}: game {games} is not a Chess960 game", file=sys.stderr)
                return 1
            castlings = []
            for node in game.mainline():
                if board.is_castling(node.move):
                    castlings.append(board.san(node.move))
                board.push(node.move)
            result = game.headers.get("Result", "*")
            last = game.end().comment.strip() or game.headers.get("Termination", "")
            print(f"{path}: game {games}: {result} {last!r}, {board.ply()} plies, castling {castlings}")
            if result == "*":
                print(f"{path}: game {games} did not finish", file=sys.stderr)
                return 1
            if BAD_ENDING.search(last):
                print(f"{path}: game {games} ended badly: {last}", file=sys.stderr)
                return 1
    if games == 0:
        print(f"{path}: no game", file=sys.stderr)
        return 1
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pgn")
    parser.add_argument("--chess960", action="store_true", help="the games must be Chess960")
    parser.add_argument("--last", action="store_true", help="check the file's last game only")
    args = parser.parse_args()
    sys.exit(check(args.pgn, args.chess960, args.last))


if __name__ == "__main__":
    main()
