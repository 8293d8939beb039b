"""`cb-async bench [depth]`: a fixed-depth search over built-in positions, for a node signature.

Every position is searched by a fresh `Searcher` (16 MB table) to the same depth, so the node
total is deterministic: it changes only when the search changes, which is why commits that
touch the search quote it (`Bench: N`). `--positions-5s` (or `speed(seconds)`) instead measures
speed and depth reached on a few reference positions in fixed time.

`--eval-file` searches with a learned evaluation's net (a file, `default.net` the built-in one,
`none` the hand-written evaluation alone; the engine's default unless given), which is how what
a net costs is measured: its node total and CPU time against `none`'s. CPU time is printed
beside wall time because a loaded machine inflates the one and hardly the other.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import chess

from cb_async.cli import UsageError, number, whole_number
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.eval_file import DEFAULT_EVAL_FILE, display_name, resolve_name
from cb_async.search.network import Network, NetworkError

DEFAULT_DEPTH = 9

#: Openings, middlegames, endgames, tactical and Chess960 positions (960: Shredder castling).
POSITIONS: tuple[str, ...] = (
    chess.STARTING_FEN,
    "rnbqkb1r/pp1p1ppp/4pn2/2p5/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 0 4",
    "r1bqkbnr/pppp1ppp/2n5/4p3/3PP3/5N2/PPP2PPP/RNBQKB1R b KQkq - 0 3",
    "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9",
    "r1b2rk1/pp1nqppp/2p1p3/3n4/2BP4/2N1PN2/PP3PPP/2RQK2R w K - 0 11",
    "r2q1rk1/3nbppp/p2pbn2/1p2p3/4P1P1/1NN1BP2/PPPQ3P/2KR1B1R w - - 0 12",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "2r3k1/pp3ppp/4p3/3pP3/3P4/P1R2P2/1P4PP/6K1 w - - 0 25",
    "6k1/p4pp1/1p5p/3r4/8/1P4P1/P4PKP/3R4 b - - 0 30",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "8/8/4kpp1/3p4/p2P1P2/P3K1P1/8/8 w - - 0 45",
    "8/5pk1/6p1/8/5P2/6P1/3B2K1/8 w - - 0 50",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
)

#: The positions `speed` reports on: the start and three middlegames.
SPEED_POSITIONS: tuple[str, ...] = (
    chess.STARTING_FEN,
    "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9",
    "r1b2rk1/pp1nqppp/2p1p3/3n4/2BP4/2N1PN2/PP3PPP/2RQK2R w K - 0 11",
    "r2q1rk1/3nbppp/p2pbn2/1p2p3/4P1P1/1NN1BP2/PPPQ3P/2KR1B1R w - - 0 12",
)


def _board(fen: str) -> chess.Board:
    board = chess.Board(fen, chess960=True)
    if not board.has_chess960_castling_rights() and all(c in "KQkq-" for c in fen.split()[2]):
        board.chess960 = False
    return board


@dataclass(frozen=True)
class Totals:
    """What a bench run adds up over its positions."""

    nodes: int
    seconds: float
    cpu_seconds: float


def _searcher(network: Network | None) -> Searcher:
    searcher = Searcher(hash_mb=16)
    searcher.network = network
    return searcher


def bench(depth: int = DEFAULT_DEPTH, eval_file: str = DEFAULT_EVAL_FILE) -> Totals:
    """Search every position to `depth` with the net `eval_file` names (`eval_file.resolve_name`;
    NetworkError if it cannot be used); print a line each; return the totals."""
    network = resolve_name(eval_file)
    total_nodes = 0
    total_time = total_cpu = 0.0
    for index, fen in enumerate(POSITIONS, 1):
        board = _board(fen)
        searcher = _searcher(network)
        start = time.perf_counter()
        cpu_start = time.process_time()
        result = searcher.search(board, (), Limits(depth=depth), StopToken())
        total_cpu += time.process_time() - cpu_start
        total_time += time.perf_counter() - start
        total_nodes += result.nodes
        move = board.uci(result.best_move) if result.best_move else "(none)"
        print(f"{index:2d} {fen:<72} {move:<6} {str(result.score):<9} nodes {result.nodes:8d}")
    return Totals(total_nodes, total_time, total_cpu)


def speed(seconds: float = 5.0, eval_file: str = DEFAULT_EVAL_FILE) -> list[tuple[str, int, int, int]]:
    """Search each of `SPEED_POSITIONS` for `seconds` with the net `eval_file` names; print and
    return (fen, depth, nodes, nps)."""
    network = resolve_name(eval_file)
    rows = []
    for fen in SPEED_POSITIONS:
        searcher = _searcher(network)
        stop = StopToken()
        start = time.monotonic()
        cpu_start = time.process_time()
        stop.set_deadlines(start + seconds, start + seconds)
        result = searcher.search(_board(fen), (), Limits(), stop)
        elapsed = time.monotonic() - start
        cpu = time.process_time() - cpu_start
        nps = int(result.nodes / elapsed) if elapsed > 0 else 0
        # Per CPU second too: on a loaded machine the wall-clock figure measures the load.
        cpu_nps = int(result.nodes / cpu) if cpu > 0 else 0
        rows.append((fen, result.depth, result.nodes, nps))
        print(f"{fen:<72} depth {result.depth:3d} nodes {result.nodes:9d} nps {nps:7d} cpu-nps {cpu_nps:7d}")
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("depth", nargs="?", type=whole_number(1),
                        help=f"the depth of every search (default {DEFAULT_DEPTH}, the one `Bench:` quotes)")
    parser.add_argument("--positions-5s", dest="speed_seconds", nargs="?", type=number(0.001), const=5.0,
                        metavar="SECONDS",
                        help="measure speed instead: search the start and three middlegames for SECONDS each (default 5)")
    parser.add_argument("--eval-file", default=DEFAULT_EVAL_FILE, metavar="NAME_OR_PATH",
                        help="search with this learned evaluation: a net file, default.net for the built-in net, "
                             f"none for the hand-written evaluation alone (default: {display_name(DEFAULT_EVAL_FILE)}, "
                             "the engine's)")


def run(args: argparse.Namespace) -> int:
    """`cb-async bench [depth] [--eval-file NET]` and `cb-async bench --positions-5s [seconds]`."""
    try:
        if args.speed_seconds is not None:
            if args.depth is not None:
                raise UsageError("--positions-5s searches for a time, not to a depth: give one or the other")
            speed(args.speed_seconds, args.eval_file)
            return 0
        totals = bench(DEFAULT_DEPTH if args.depth is None else args.depth, args.eval_file)
    except NetworkError as error:
        raise UsageError(f"--eval-file: {error}") from None
    print()
    print(f"Eval file       : {display_name(args.eval_file)}")
    print(f"Total time (ms) : {int(totals.seconds * 1000)}")
    print(f"CPU time (ms)   : {int(totals.cpu_seconds * 1000)}")
    print(f"Nodes searched  : {totals.nodes}")
    print(f"Nodes/second    : {int(totals.nodes / totals.seconds) if totals.seconds > 0 else 0}")
    return 0
