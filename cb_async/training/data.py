"""`cb-async eval-data`: the learned evaluation's training set, made here from a seed.

Games of Stockfish against itself at a fixed node budget, each from one of the 64 balanced
openings (`cb_async/data/openings.epd`) followed by a few random plies, with now and then a
random move inside the game, so that the set holds the lopsided positions a search walks
through as well as the balanced ones a game is made of. Every position of a game is searched
by Stockfish to choose its move, and that search's score is the position's label: the game
and its labels come from the same work. A position is kept only when it is quiet (not in
check, and Stockfish's best move is neither a capture nor a promotion), since a static
evaluation is asked about quiet positions and a capture's value belongs to the search.

With `--player-nodes` cb-async's own search chooses the moves instead, Stockfish still labelling
every position: of both sides, or with `--player-sides one` of one side against Stockfish, as in
the yardstick's games, and with the hand-written evaluation or the net `--player-eval-file`
names. A search steers towards the positions its own evaluation overrates, so a net's own games
against Stockfish hold the positions that net misjudges most: the ones it needs to learn from.
`--from-pgn` labels the positions of games already played (a match's PGN, at the match's
clock) the same way instead of playing new ones.

Game `i` depends only on the seed and `i` (its random choices come from `Random(f"{seed}:{i}")`,
and Stockfish at a fixed node budget with one thread and a cleared table is deterministic), so
the set is the same however many workers make it and in whatever order they finish.

The output is a journal, as batch analysis keeps one: a JSON header naming the job, then one
line per finished game, written with a single `write` to an append-only descriptor. A run that
is interrupted leaves at most one torn last line, which the next run with the same job drops;
it then plays only the games that are missing. A file made for another job is refused.

Each worker is a process of its own driving its own Stockfish by UCI lines, and with
`--player-nodes` cb-async's own search too, which needs a core of its own as much as Stockfish
does. The workers are `cb_async.worker_process.WorkerProcess`es, started, watched and ended as
every worker process of ours is (`data_workers.py`: the messages, the worker's loop, handing
out the games); the main process alone writes the file and prints progress.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import chess
import chess.pgn

from cb_async.cli import UsageError, whole_number
from cb_async.search.eval_file import NONE, resolve_name
from cb_async.search.network import NetworkError

FORMAT = 1
#: Stockfish's nodes per move by default: about depth 9, a few milliseconds a move.
DEFAULT_NODES = 5000
#: Random plies after the opening line, drawn uniformly from this range.
RANDOM_PLIES = (2, 8)
#: The chance that a move inside the game is a random legal one instead of Stockfish's.
RANDOM_MOVE_RATE = 0.04
#: A game stops when Stockfish's score stays beyond this for `ADJUDICATE_PLIES` plies...
ADJUDICATE_CP = 2000
ADJUDICATE_PLIES = 4
#: ...or at this many plies (scored a draw).
MAX_PLIES = 300
#: Labels beyond this are left out (a won position's exact size says little).
MAX_LABEL_CP = 3000


def default_cache() -> Path:
    """Where data lives unless told: outside the repository, in the user's cache folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "cb-async" / "eval-data"


def openings() -> list[str]:
    text = resources.files("cb_async").joinpath("data/openings.epd").read_text(encoding="utf-8")
    return [" ".join(line.split()[:4]) + " 0 1" for line in text.splitlines() if line and not line.startswith("#")]


@dataclass(frozen=True)
class Job:
    """What makes a data set: equal jobs make equal games."""

    seed: int
    nodes: int
    engine: str
    #: Who chooses the moves: 0 for Stockfish (its labelling search), N for cb-async's own
    #: search at N nodes a move, so that the set holds the positions cb-async's games reach,
    #: labelled by Stockfish all the same.
    player_nodes: int = 0
    #: The evaluation cb-async plays with, as a tool's `--eval-file` names it: the hand-written
    #: one (`none`) unless told. A search steers towards the positions its own evaluation
    #: overrates, so the positions a net's games reach are the ones that net misjudges most.
    player_eval_file: str = NONE
    #: `both`: cb-async plays both sides; `one`: only one, White in even-numbered games and Black
    #: in odd ones, Stockfish the other, as in the yardstick's games.
    player_sides: str = "both"
    #: `--from-pgn`: the PGN files whose games are labelled instead of playing new ones.
    pgn: tuple[str, ...] = ()

    def header(self, engine_name: str) -> dict[str, object]:
        header: dict[str, object] = {"eval-data": FORMAT, "seed": self.seed, "nodes": self.nodes, "engine": engine_name}
        if self.pgn:
            header["from-pgn"] = [Path(path).name for path in self.pgn]
            # The job is the games, whatever the files are called: their contents' hash says which.
            header["pgn-sha256"] = pgn_hash(self.pgn)
        if self.player_nodes:
            header["player"] = PLAYER.format(self.player_nodes)
        if self.player_eval_file != NONE:
            network = resolve_name(self.player_eval_file)
            header["player-eval-file"] = self.player_eval_file
            header["player-net-sha256"] = network.header.get("sha256", "") if network is not None else NONE
        if self.player_sides != "both":
            header["player-sides"] = self.player_sides
        return header


#: How a header names cb-async as the player (`--player-nodes`).
PLAYER = "cb-async at {} nodes"


def player_nodes(header: dict[str, object]) -> int:
    """The `--player-nodes` a data file was made with, from its header (0: Stockfish played)."""
    player = str(header.get("player", ""))
    prefix, _, suffix = PLAYER.partition("{}")
    return int(player.removeprefix(prefix).removesuffix(suffix)) if player else 0


class StockfishDriver:
    """One UCI engine process, driven by lines: `search(fen)` -> (score cp or None, best move).

    The engine runs in a session of its own, out of reach of a terminal's Ctrl-C: the host of
    the run decides what Ctrl-C does, and the engine ends with whoever drives it (the end of its
    input is its `quit`)."""

    def __init__(self, command: str, nodes: int) -> None:
        self.nodes = nodes
        self.process = subprocess.Popen(
            [command], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, start_new_session=True,
        )
        self.name = ""
        self._send("uci")
        for line in self._lines_until("uciok"):
            if line.startswith("id name "):
                self.name = line[8:].strip()
        self._send("setoption name Threads value 1")
        self._send("setoption name Hash value 16")

    def _send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")

    def _lines_until(self, word: str) -> list[str]:
        assert self.process.stdout is not None
        lines = []
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the engine ended while we waited for '{word}'")
            lines.append(line)
            if line.startswith(word):
                return lines

    def new_game(self) -> None:
        self._send("ucinewgame")
        self._send("isready")
        self._lines_until("readyok")

    def search(self, fen: str) -> tuple[int | None, int | None, str]:
        """Stockfish's last full score of `fen` (centipawns or moves to mate, side to move; the
        other one None) and its best move."""
        self._send(f"position fen {fen}")
        self._send(f"go nodes {self.nodes}")
        cp: int | None = None
        mate: int | None = None
        for line in self._lines_until("bestmove"):
            if line.startswith("bestmove"):
                return cp, mate, line.split()[1]
            words = line.split()
            if words[:1] == ["info"] and "score" in words and "lowerbound" not in words and "upperbound" not in words:
                at = words.index("score")
                kind, value = words[at + 1], int(words[at + 2])
                cp, mate = (value, None) if kind == "cp" else (None, value)
        raise AssertionError("unreachable")

    def close(self) -> None:
        """Ask the engine to quit and wait for it; kill it if it will not. Both pipes end closed
        here, even to an engine that already died: a pipe left to the garbage collector would
        flush its unsent `quit` into a broken pipe and print a traceback from the finalizer."""
        try:
            self._send("quit")
            self.process.stdin.close()  # type: ignore[union-attr]
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            for pipe in (self.process.stdin, self.process.stdout):
                try:
                    pipe.close()  # type: ignore[union-attr]
                except OSError:
                    pass  # the unsent `quit` of an engine that is gone; the pipe is closed all the same


def play_game(driver: StockfishDriver, seed: int, index: int, lines: list[str],
              player: CbAsyncPlayer | None = None, sides: str = "both") -> dict[str, object]:
    """Game `index` of the set: its kept positions (FEN, label) and its result for White.
    `player` chooses the moves (None: Stockfish's labelling search does) of both sides, or with
    `sides` "one" of White in even-numbered games and of Black in odd ones."""
    rng = random.Random(f"{seed}:{index}")
    board = chess.Board(rng.choice(lines))
    for _ in range(rng.randint(*RANDOM_PLIES)):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    driver.new_game()
    if player is not None:
        player.new_game()
    kept: list[tuple[str, int]] = []
    decisive = 0
    result = 0.5
    plies = 0
    while True:
        outcome = board.outcome(claim_draw=False)
        if outcome is not None:
            result = 0.5 if outcome.winner is None else float(outcome.winner)
            break
        if board.is_repetition(3) or board.halfmove_clock >= 100 or plies >= MAX_PLIES:
            break
        fen = board.fen()
        score, mate, best = driver.search(fen)
        move = chess.Move.from_uci(best)
        if score is not None and keeps(board, score, move):
            kept.append((fen, score))
        # A side Stockfish sees winning by far (or mating) for a few plies running has won.
        winning = mate if mate is not None else score if score is not None and abs(score) >= ADJUDICATE_CP else 0
        if winning:
            decisive += 1
            if decisive >= ADJUDICATE_PLIES:
                result = float((winning > 0) == board.turn)
                break
        else:
            decisive = 0
        if rng.random() < RANDOM_MOVE_RATE:
            move = rng.choice(list(board.legal_moves))
        elif player is not None and (sides == "both" or board.turn == (index % 2 == 0)):
            move = player.choose(board)
        board.push(move)
        plies += 1
    return {"game": index, "result": result, "positions": kept}


def keeps(board: chess.Board, score: int, best: chess.Move) -> bool:
    """Whether a position is kept with Stockfish's `score` as its label: it is quiet (not in
    check, Stockfish's `best` move neither a capture nor a promotion) and not won by far."""
    return abs(score) <= MAX_LABEL_CP and not board.is_check() and not (board.is_capture(best) or best.promotion)


class _GameBuilder(chess.pgn.GameBuilder[chess.pgn.Game]):
    """python-chess's game builder, keeping a game's errors without logging them: the caller
    reports the first in its own one line."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def read_pgn_games(paths: tuple[str, ...]) -> list[chess.pgn.Game]:
    """The games of the PGN files, in order; UsageError naming a file that cannot be read or a
    game the PGN reader cannot follow."""
    games: list[chess.pgn.Game] = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                number = 0
                while (game := chess.pgn.read_game(handle, Visitor=_GameBuilder)) is not None:
                    number += 1
                    if game.errors:
                        raise UsageError(f"{path}: game {number} does not parse: {game.errors[0]}")
                    games.append(game)
        except OSError as error:
            raise UsageError(f"cannot read the PGN {path}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{path} is not a PGN (not text)") from None
    return games


def label_game(driver: StockfishDriver, index: int, game: chess.pgn.Game) -> dict[str, object]:
    """Game `index` of `--from-pgn`: every position before a move of its main line searched by
    Stockfish and kept as `play_game` keeps one; its result from its header (a draw if unknown)."""
    driver.new_game()
    board = game.board()
    kept: list[tuple[str, int]] = []
    for move in game.mainline_moves():
        fen = board.fen()
        score, _, best = driver.search(fen)
        if score is not None and keeps(board, score, chess.Move.from_uci(best)):
            kept.append((fen, score))
        board.push(move)
    result = {"1-0": 1.0, "0-1": 0.0}.get(game.headers.get("Result", "*"), 0.5)
    return {"game": index, "result": result, "positions": kept}


def file_header(path: Path) -> object:
    """A data file's first line, parsed (None when it is not JSON): its job's header."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        try:
            return json.loads(handle.readline())
        except ValueError:
            return None


def file_games(path: Path) -> Iterator[dict[str, Any]]:
    """A data file's games in order, up to a torn last line (an interrupted run's: the journal
    drops it and plays that game again), which ends the file for its readers too."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        handle.readline()
        for line in handle:
            try:
                record = json.loads(line)
            except ValueError:
                return
            yield record


class DataFile:
    """The journal: header, then one JSON line per game; `open` returns the games it holds."""

    def __init__(self, path: Path, header: dict[str, object]) -> None:
        self.path = path
        self.header = header
        self._fd = -1

    def open(self) -> set[int]:
        done: set[int] = set()
        if self.path.exists():
            data = self.path.read_bytes()
            lines = data.split(b"\n")
            try:
                found = json.loads(lines[0])
            except ValueError:
                found = None
            if found != self.header:
                raise UsageError(f"{self.path} was made by another job ({found}); "
                                 "use another --out or the same seed, nodes and engine")
            good_end = len(lines[0]) + 1
            for line in lines[1:]:
                if not line:
                    break
                try:
                    record = json.loads(line)
                except ValueError:
                    break  # a torn last line: dropped, its game played again
                done.add(int(record["game"]))
                good_end += len(line) + 1
            self._fd = os.open(self.path, os.O_WRONLY)
            os.ftruncate(self._fd, min(good_end, len(data)))
            os.lseek(self._fd, 0, os.SEEK_END)
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.write(self._fd, (json.dumps(self.header) + "\n").encode())
        return done

    def append(self, record: dict[str, object]) -> None:
        os.write(self._fd, (json.dumps(record, separators=(",", ":")) + "\n").encode())

    def close(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1


class CbAsyncPlayer:
    """cb-async's own search at `nodes` a move, with the evaluation `eval_file` names (the
    hand-written one unless told). Its table and history are cleared at every game's start, so
    that a game's moves depend on the game alone, not on which games the same worker played
    before."""

    def __init__(self, nodes: int, eval_file: str = NONE) -> None:
        from cb_async.search import Searcher

        self.nodes = nodes
        self.searcher = Searcher(hash_mb=8)
        self.searcher.network = resolve_name(eval_file)

    def new_game(self) -> None:
        self.searcher.new_game()

    def choose(self, board: chess.Board) -> chess.Move:
        from cb_async.limits import Limits
        from cb_async.search import StopToken

        move = self.searcher.search(board, (), Limits(nodes=self.nodes), StopToken()).best_move
        assert move is not None
        return move


def generate(job: Job, out: Path, games: int, workers: int, progress: bool = True) -> int:
    """Make games 0 .. games-1 of `job` into `out`, skipping those it already holds; return the
    number of positions the file holds at the end. Raises `data_workers.WorkerFailed` when a
    worker cannot play; the games finished by then stay in the file."""
    from cb_async.training.data_workers import DataWorkers  # here: it imports this module

    probe = StockfishDriver(job.engine, job.nodes)
    data = DataFile(out, job.header(probe.name))
    probe.close()
    done = data.open()
    todo = [index for index in range(games) if index not in done]
    start = time.monotonic()
    positions = 0
    finished = 0
    last_report = 0.0
    try:
        with DataWorkers(job, min(workers, len(todo))) as players:
            for record in players.play(todo):
                data.append(record)
                finished += 1
                positions += len(record["positions"])  # type: ignore[arg-type]
                now = time.monotonic()
                if progress and (now - last_report > 10 or finished == len(todo)):
                    last_report = now
                    rate = positions / max(now - start, 1e-9)
                    print(f"eval-data: {len(done) + finished}/{games} games, {positions} new positions, "
                          f"{rate:.0f} positions/s", file=sys.stderr, flush=True)
    finally:
        data.close()
    return positions


def pgn_hash(paths: tuple[str, ...]) -> str:
    """The SHA-256 of the PGN files' contents, in the order given."""
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=1, help="the set's seed (default: 1)")
    parser.add_argument("--games", type=whole_number(1), default=None,
                        help="games to play (default: 1000; with --from-pgn, every game of the files)")
    parser.add_argument("--nodes", type=whole_number(1), default=DEFAULT_NODES,
                        help=f"Stockfish's nodes per move and label (default: {DEFAULT_NODES})")
    parser.add_argument("--workers", type=whole_number(1), default=os.cpu_count() or 1,
                        help="worker processes at once, each with its own Stockfish (default: one per core)")
    parser.add_argument("--player-nodes", type=whole_number(0), default=0, metavar="N",
                        help="cb-async's own search chooses the moves at N nodes (default: 0, Stockfish does)")
    parser.add_argument("--player-eval-file", default=NONE, metavar="NET",
                        help="the evaluation cb-async plays with: none (the hand-written one, the default), "
                             "default.net (the built-in net) or a net file")
    parser.add_argument("--player-sides", choices=("both", "one"), default="both",
                        help="both: cb-async plays both sides (the default); one: White in even-numbered "
                             "games and Black in odd ones, Stockfish the other")
    parser.add_argument("--engine", default="stockfish", help="the labelling engine's command (default: stockfish)")
    parser.add_argument("--from-pgn", nargs="+", default=(), metavar="PGN",
                        help="label the positions of these games (for instance a match's PGN) instead of playing "
                             "new ones: the positions an engine's own games reach")
    parser.add_argument("--out", type=Path, default=None,
                        help="the data file (default: seed-S-nodes-N.jsonl in the user's cache folder)")


def run(args: argparse.Namespace) -> int:
    if not args.player_nodes and (args.player_eval_file != NONE or args.player_sides != "both"):
        raise UsageError("--player-eval-file and --player-sides need --player-nodes")
    if args.from_pgn and args.player_nodes:
        raise UsageError("--from-pgn labels games already played: it takes no --player-nodes")
    pgn = tuple(str(Path(path).resolve()) for path in args.from_pgn)
    games = args.games or 1000
    if pgn:
        count = len(read_pgn_games(pgn))
        if not count:
            raise UsageError("--from-pgn: the files hold no game")
        games = min(args.games or count, count)
    try:
        resolve_name(args.player_eval_file)
    except NetworkError as error:
        raise UsageError(f"--player-eval-file: {error}") from None
    engine = shutil.which(args.engine) or shutil.which(args.engine, path="/usr/games")
    if engine is None:
        raise UsageError(f"--engine: no command '{args.engine}' (Debian: apt-get install stockfish)")
    player = f"-player-{args.player_nodes}" if args.player_nodes else ""
    name = f"pgn-{pgn_hash(pgn)[:12]}-nodes-{args.nodes}.jsonl" if pgn else f"seed-{args.seed}-nodes-{args.nodes}{player}.jsonl"
    out = args.out or default_cache() / name
    print(f"eval-data: writing {out}", file=sys.stderr)
    from cb_async.training.data_workers import WorkerFailed  # here: it imports this module

    try:
        job = Job(args.seed, args.nodes, engine, args.player_nodes, args.player_eval_file, args.player_sides, pgn)
        generate(job, out, games, args.workers)
    except WorkerFailed as error:
        raise UsageError(f"{error}; the games finished are kept in {out}, and the same command resumes") from None
    return 0
