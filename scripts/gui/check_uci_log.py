"""Check a UCI engine's side of a GUI session from its `cb-async --log` file: every `go` got
exactly one `bestmove` (unless input ended or `quit` came first), and every best move and ponder
move is legal in the position the GUI had set. Prints the last game's moves, as the GUI sent
them, and exits 1 on the first fault.

Used by the drives in scripts/gui/; needs python-chess (in cb-async's virtual environment).
"""

from __future__ import annotations

import argparse
import re
import sys

import chess

LINE = re.compile(r"^\S+ +\S+ (<<|>>) (.*)$")


def position(args: list[str], chess960: bool) -> chess.Board:
    if args[0] == "startpos":
        board = chess.Board(chess960=chess960)
        rest = args[1:]
    else:
        end = args.index("moves") if "moves" in args else len(args)
        board = chess.Board(" ".join(args[1:end]), chess960=chess960)
        rest = args[end:]
    for text in rest[1:] if rest[:1] == ["moves"] else []:
        board.push(board.parse_uci(text))
    return board


def check(path: str) -> int:
    board = chess.Board()
    chess960 = False
    searching = 0
    searches = 0
    with open(path, encoding="utf-8") as handle:
        for number, raw in enumerate(handle, 1):
            match = LINE.match(raw.rstrip("\n"))
            if match is None:
                continue
            direction, text = match.groups()
            words = text.split()
            if not words:
                continue
            where = f"{path}:{number}"
            if direction == "<<":
                if words[0] == "setoption" and text.lower().startswith("setoption name uci_chess960 value"):
                    chess960 = words[-1].lower() == "true"
                elif words[0] == "position":
                    try:
                        board = position(words[1:], chess960)
                    except ValueError as error:
                        print(f"{where}: the GUI's position does not replay: {error}", file=sys.stderr)
                        return 1
                elif words[0] == "go":
                    if searching:
                        print(f"{where}: `go` while a search still runs", file=sys.stderr)
                        return 1
                    searching, searches = 1, searches + 1
                elif words[0] == "uci":  # a new engine process appending to the same log
                    searching, chess960, board = 0, False, chess.Board()
                elif words[0] == "quit" or text == "<end of input>":
                    searching = 0
            elif words[0] == "bestmove":
                if not searching:
                    print(f"{where}: a bestmove with no search running", file=sys.stderr)
                    return 1
                searching = 0
                try:
                    move = board.parse_uci(words[1])
                    if len(words) >= 4 and words[2] == "ponder":
                        after = board.copy()
                        after.push(move)
                        after.parse_uci(words[3])
                except ValueError as error:
                    print(f"{where}: {text!r} is not legal in {board.fen()}: {error}", file=sys.stderr)
                    return 1
    if searching:
        print(f"{path}: the last `go` got no bestmove", file=sys.stderr)
        return 1
    print(f"{path}: {searches} searches, every bestmove legal; last position {board.fen()}")
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log", nargs="+")
    args = parser.parse_args()
    sys.exit(max(check(path) for path in args.log))


if __name__ == "__main__":
    main()
