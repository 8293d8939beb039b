"""`python3 dev.py tune`: fit the evaluation's positional weights to a reference (Texel tuning).

Two steps, so that a tuning run can be repeated from the same data:

    python3 dev.py tune label --pgn games.pgn --out positions.txt --engine /usr/games/stockfish --nodes 5000
    python3 dev.py tune fit positions.txt

`label` takes the quiet positions of the games (not in check, no capture that wins material at
once, past the opening), and writes each with a reference engine's evaluation (centipawns,
White's point of view): `FEN;cp` a line. `fit` finds the weights of `structure.WEIGHTS` that
make cb-async's evaluation, through the logistic curve that turns centipawns into an expected
score, closest to the reference's (mean squared error); the piece-square tables stay PeSTO's.
It prints the new table to paste into `cb_async/search/structure.py`.

`fit --tables` fits the piece-square tables (material included) together with those weights:
about 800 weights instead of 20, so it wants a data set ten times larger (the recipe's sizes
are set by the environment) and `--batch` (a step every few thousand positions, a few passes
over the data) to finish in minutes. It prints the tables in `evaluation.py`'s layout too.

The evaluation is linear in the weights (a count times a midgame and an endgame weight, blended
by the phase), so each position is turned into its few non-zero counts once, and the fit is a
plain gradient descent (Adam) over them: no third-party numerics. The data recipe is
`scripts/make-tuning-data.sh`.
"""

from __future__ import annotations

import argparse
import math
import random
import shlex
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn

from cb_async import cli
from cb_async.search.evaluation import (
    _EG_TABLES,
    _EG_VALUE,
    _MG_TABLES,
    _MG_VALUE,
    MAX_PHASE,
    TEMPO,
    evaluate_from_scratch,
)
from cb_async.search.structure import NAMES, PASSER_PHASE, SIGNS, WEIGHTS, features, passer_kings, structure
from devtools import command_line

#: Values for the "does a capture win material at once" test of quiet positions.
_VALUE = (0, 100, 300, 300, 500, 900, 10_000)
#: Reference evaluations beyond this (centipawns) say little about positional terms.
_MAX_CP = 1500
#: The logistic curve: expected score = 1 / (1 + 10 ** (-cp / _SCALE)).
_SCALE = 400.0


def is_quiet(board: chess.Board) -> bool:
    """Not in check, and no capture that plainly wins material (an undefended piece, or one
    worth more than its taker): the static evaluation means something there."""
    if board.is_check():
        return False
    them = not board.turn
    for move in board.generate_legal_captures():
        victim = board.piece_type_at(move.to_square)
        if victim is None:  # en passant
            continue
        attacker = board.piece_type_at(move.from_square) or 0
        if _VALUE[victim] > _VALUE[attacker] or not board.is_attacked_by(them, move.to_square):
            return False
    return True


def game_positions(pgn_path: Path, skip_plies: int, every: int) -> list[chess.Board]:
    """Quiet positions of every game in the PGN, past `skip_plies`, one in `every`."""
    found: list[chess.Board] = []
    seen: set[str] = set()
    with pgn_path.open(encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            for ply, move in enumerate(game.mainline_moves()):
                board.push(move)
                if ply < skip_plies or ply % every:
                    continue
                if board.is_game_over() or not is_quiet(board):
                    continue
                key = board.epd()
                if key in seen:
                    continue
                seen.add(key)
                found.append(board.copy(stack=False))
    return found


def label(args: argparse.Namespace) -> int:
    boards: list[chess.Board] = []
    for path in args.pgn:
        boards += game_positions(Path(path), args.skip, args.every)
    if args.max_positions and len(boards) > args.max_positions:
        boards = random.Random(args.seed).sample(boards, args.max_positions)
    print(f"{len(boards)} quiet positions; labelling with {args.engine} at {args.nodes} nodes", file=sys.stderr)
    written = 0
    with chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine)) as engine, \
            open(args.out, "w", encoding="utf-8") as out:
        for index, board in enumerate(boards):
            info = engine.analyse(board, chess.engine.Limit(nodes=args.nodes), game=object())
            score = info.get("score")
            if score is None or score.is_mate():
                continue
            cp = score.white().score()
            if cp is None or abs(cp) > _MAX_CP:
                continue
            out.write(f"{board.fen()};{cp}\n")
            written += 1
            if (index + 1) % 1000 == 0:
                print(f"{index + 1}/{len(boards)}", file=sys.stderr)
    print(f"wrote {written} positions to {args.out}", file=sys.stderr)
    return 0


def _expected(cp: float) -> float:
    return 1.0 / (1.0 + math.pow(10.0, -cp / _SCALE))


#: Where the tables' weights start in the parameters of `fit --tables`: after the structure's.
_TABLES_AT = 2 * len(NAMES)


def table_index(piece_type: int, table_square: int) -> int:
    """The midgame parameter of a piece type on a square of the printed tables (a8 first); the
    endgame one follows it."""
    return _TABLES_AT + 2 * ((piece_type - 1) * 64 + table_square)


class Sample:
    """One position as the fit sees it: the fixed part of its evaluation and its counts.

    With `tables`, the piece-square tables are parameters too: each piece is an input of +1
    (White) or -1 (Black) to its square's two weights, and only the tempo stays fixed.
    """

    __slots__ = ("base", "terms", "target")

    def __init__(self, board: chess.Board, reference: int, tables: bool = False) -> None:
        mg, eg, phase = evaluate_from_scratch(board)
        # The part the fit does not change: the tables and the tempo, without today's terms.
        terms_mg, terms_eg = structure(board)
        mg, eg = mg - terms_mg, eg - terms_eg
        phase = min(phase, MAX_PHASE)
        tempo = TEMPO if board.turn == chess.WHITE else -TEMPO
        # The kings' part of the passed pawns is not fitted: it stays in the fixed part.
        kings = passer_kings(board) * (MAX_PHASE - phase) / MAX_PHASE if phase < PASSER_PHASE else 0.0
        self.base = (mg * phase + eg * (MAX_PHASE - phase)) / MAX_PHASE + tempo + kings
        mg_share = phase / MAX_PHASE
        # (parameter index, input) for the non-zero counts: 2i is a midgame weight, 2i+1 endgame.
        self.terms = [
            pair
            for i, count in enumerate(features(board)) if count
            for pair in ((2 * i, count * mg_share), (2 * i + 1, count * (1 - mg_share)))
        ]
        if tables:
            self.base = tempo + kings
            for square, piece in board.piece_map().items():
                # The printed tables are from White's side, a8 first: White's a1 is entry 56.
                white = piece.color == chess.WHITE
                index = table_index(piece.piece_type, square ^ 56 if white else square)
                sign = 1.0 if white else -1.0
                self.terms += ((index, sign * mg_share), (index + 1, sign * (1 - mg_share)))
        self.target = float(reference)

    def value(self, params: list[float]) -> float:
        """The evaluation these weights give the position (centipawns, White's point of view)."""
        return self.base + sum(params[i] * x for i, x in self.terms)


def table_params() -> list[float]:
    """Today's tables as parameters: material plus square, for each piece type and square."""
    params = []
    for piece_type in chess.PIECE_TYPES:
        for square in range(64):
            params += [float(_MG_VALUE[piece_type] + _MG_TABLES[piece_type][square]),
                       float(_EG_VALUE[piece_type] + _EG_TABLES[piece_type][square])]
    return params


def print_tables(params: list[float]) -> None:
    """The fitted tables in `evaluation.py`'s layout, the material values kept (the tables
    carry the difference): only the sum of the two is ever read."""
    for name, values, offset in (("_MG_TABLES", _MG_VALUE, 0), ("_EG_TABLES", _EG_VALUE, 1)):
        print(f"{name}: dict[int, tuple[int, ...]] = {{")
        for piece_type in chess.PIECE_TYPES:
            print(f"    chess.{chess.piece_name(piece_type).upper()}: (")
            for rank in range(8):
                row = []
                for file in range(8):
                    square = rank * 8 + file
                    if piece_type == chess.PAWN and rank in (0, 7):
                        row.append(0)
                        continue
                    row.append(round(params[table_index(piece_type, square) + offset]) - values[piece_type])
                print("        " + ", ".join(str(v) for v in row) + ",")
            print("    ),")
        print("}")


def load_samples(path: Path, tables: bool = False) -> list[Sample]:
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        fen, _, cp = line.rpartition(";")
        if fen:
            samples.append(Sample(chess.Board(fen), int(cp), tables))
    return samples


def loss(samples: list[Sample], params: list[float], target_scale: float) -> float:
    total = 0.0
    for s in samples:
        value = s.value(params)
        total += (_expected(value) - _expected(s.target * target_scale)) ** 2
    return total / len(samples)


def fit_target_scale(samples: list[Sample], params: list[float]) -> float:
    """The factor that puts the reference's centipawns on our scale (searched on a grid)."""
    best = min((loss(samples, params, c / 100), c / 100) for c in range(50, 201, 5))
    return best[1]


def sign_bounds(constrained: bool, tables: bool = False) -> list[tuple[float, float]]:
    """(lowest, highest) of each parameter: a term's weights stay on the side of its sign; the
    tables' weights are free."""
    bounds = []
    for name in NAMES:
        sign = SIGNS[name] if constrained else 0
        bounds += [(0.0 if sign > 0 else -math.inf, 0.0 if sign < 0 else math.inf)] * 2
    if tables:
        bounds += [(-math.inf, math.inf)] * (2 * 64 * len(chess.PIECE_TYPES))
    return bounds


def hold_rare(samples: list[Sample], start: list[float], bounds: list[tuple[float, float]],
              min_count: int) -> list[tuple[float, float]]:
    """`bounds` with every weight that fewer than `min_count` positions read held at its start:
    a square a piece seldom stands on would otherwise be fitted to a handful of positions."""
    counts = [0] * len(start)
    for s in samples:
        for i, _ in s.terms:
            counts[i] += 1
    return [bound if count >= min_count else (value, value)
            for bound, count, value in zip(bounds, counts, start)]


def size_factor(samples: list[Sample], before: list[float], after: list[float]) -> float:
    """The factor that brings the fitted evaluations closest to today's (least squares).

    The fit is free to shrink or stretch the whole evaluation (only its ratio to the
    reference's scale matters to the loss), but the search's margins are in today's
    centipawns: scaling the fit back keeps them meaning what they meant.
    """
    cross = square = 0.0
    for s in samples:
        old = s.value(before)
        new = s.value(after)
        cross += old * new
        square += new * new
    return cross / square if square else 1.0


def fit(samples: list[Sample], params: list[float], target_scale: float, epochs: int, rate: float,
        bounds: list[tuple[float, float]], batch: int = 0, seed: int = 1) -> list[float]:
    """Adam on the mean squared error between expected scores, each step kept within `bounds`.

    A step per `batch` positions (shuffled each pass), or per pass over all of them when
    `batch` is 0.
    """
    params = [min(max(value, low), high) for value, (low, high) in zip(params, bounds)]
    m = [0.0] * len(params)
    v = [0.0] * len(params)
    k = math.log(10) / _SCALE
    pairs = [(s, _expected(s.target * target_scale)) for s in samples]
    size = batch if 0 < batch < len(pairs) else len(pairs)
    shuffle = random.Random(seed).shuffle
    step = 0
    for epoch in range(1, epochs + 1):
        if size < len(pairs):
            shuffle(pairs)
        for start in range(0, len(pairs), size):
            chunk = pairs[start:start + size]
            step += 1
            grad = [0.0] * len(params)
            for s, target in chunk:
                value = s.value(params)
                p = _expected(value)
                g = 2 * (p - target) * p * (1 - p) * k
                for i, x in s.terms:
                    grad[i] += g * x
            correct_m = 1 - 0.9 ** step
            correct_v = 1 - 0.999 ** step
            for i, total in enumerate(grad):
                g = total / len(chunk)
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                if not v[i]:
                    continue  # a weight no position of this step reads
                params[i] -= rate * (m[i] / correct_m) / (math.sqrt(v[i] / correct_v) + 1e-12)
                low, high = bounds[i]
                params[i] = min(max(params[i], low), high)
        if epoch % 50 == 0 or size < len(pairs):
            print(f"epoch {epoch}: loss {loss(samples, params, target_scale):.6f}", file=sys.stderr)
    return params


def run_fit(args: argparse.Namespace) -> int:
    try:
        samples = load_samples(Path(args.data), args.tables)
    except OSError as error:
        raise cli.UsageError(f"cannot read {args.data}: {error.strerror}") from None
    if not samples:
        raise cli.UsageError(f"no positions in {args.data}")
    held_out: list[Sample] = []
    if args.holdout > 0:
        random.Random(args.seed).shuffle(samples)
        cut = int(len(samples) * args.holdout)
        held_out, samples = samples[:cut], samples[cut:]
    start = [float(w) for _, mg, eg in WEIGHTS for w in (mg, eg)]
    zero = [0.0] * len(start)
    if args.tables:
        start += table_params()
        zero += table_params()  # "no terms" keeps today's tables: the terms are the structure's
    target_scale = fit_target_scale(samples, zero)
    print(f"{len(samples)} positions; reference scale {target_scale:.2f}; "
          f"loss with no terms {loss(samples, zero, target_scale):.6f}, "
          f"with today's weights {loss(samples, start, target_scale):.6f}", file=sys.stderr)
    bounds = sign_bounds(not args.free, args.tables)
    if args.min_count:
        bounds = hold_rare(samples, start, bounds, args.min_count)
    params = fit(samples, start, target_scale, args.epochs, args.rate, bounds, args.batch, args.seed)
    print(f"fitted loss {loss(samples, params, target_scale):.6f}", file=sys.stderr)
    if args.keep_scale:
        factor = size_factor(samples, start, params)
        params = [value * factor for value in params]
        target_scale *= factor
        print(f"scaled by {factor:.3f} to today's size: loss {loss(samples, params, target_scale):.6f}",
              file=sys.stderr)
    if held_out:
        print(f"held-out {len(held_out)} positions: loss with no terms {loss(held_out, zero, target_scale):.6f}, "
              f"today's weights {loss(held_out, start, target_scale):.6f}, "
              f"fitted {loss(held_out, params, target_scale):.6f}", file=sys.stderr)
    print("WEIGHTS: tuple[tuple[str, int, int], ...] = (")
    for index, name in enumerate(NAMES):
        print(f'    ("{name}", {round(params[2 * index])}, {round(params[2 * index + 1])}),')
    print(")")
    if args.tables:
        print_tables(params)
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    steps = parser.add_subparsers(dest="step", required=True)
    lab = steps.add_parser("label", help="quiet positions of PGN games, with a reference engine's evaluation")
    lab.add_argument("--pgn", type=cli.readable_file, nargs="+", required=True)
    lab.add_argument("--out", type=cli.appendable_file, required=True)
    lab.add_argument("--engine", default="/usr/games/stockfish",
                     help="the command of a UCI engine (default: Debian's Stockfish, one thread)")
    lab.add_argument("--nodes", type=int, default=5000, help="its nodes per position")
    lab.add_argument("--skip", type=int, default=8, help="plies of each game to leave out (the opening)")
    lab.add_argument("--every", type=int, default=1, help="take one position in this many plies")
    lab.add_argument("--max-positions", type=int, default=0, help="a random sample of at most this many")
    lab.add_argument("--seed", type=int, default=1)
    fit_parser = steps.add_parser("fit", help="fit structure.WEIGHTS to labelled positions")
    # Checked when the fit starts rather than by the parser, so that a recipe can name the file
    # its first step will make.
    fit_parser.add_argument("data")
    fit_parser.add_argument("--epochs", type=int, default=300)
    fit_parser.add_argument("--rate", type=float, default=1.0, help="Adam's step, in centipawns")
    fit_parser.add_argument("--holdout", type=float, default=0.0,
                            help="keep this share of the positions out of the fit and report its loss")
    fit_parser.add_argument("--seed", type=int, default=1)
    fit_parser.add_argument("--tables", action="store_true",
                            help="fit the piece-square tables (material included) with the weights")
    fit_parser.add_argument("--batch", type=int, default=0,
                            help="positions per step (default: all of them, a step per pass)")
    fit_parser.add_argument("--min-count", type=int, default=0,
                            help="hold every weight that fewer positions than this read at today's value")
    fit_parser.add_argument("--keep-scale", action="store_true",
                            help="scale the fitted weights so that the evaluation keeps today's size")
    fit_parser.add_argument("--free", action="store_true",
                            help="let weights take either sign (by default each keeps its term's sign, structure.SIGNS)")


def run(args: argparse.Namespace) -> int:
    if args.step == "label":
        return label(args)
    return run_fit(args)


def main(argv: list[str] | None = None) -> int:
    return command_line("python3 dev.py tune", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
