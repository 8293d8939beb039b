"""`cb-async eval-score`: how well nets predict the labels of `eval-data` files, without PyTorch.

The question eval-train's validation loss answers, asked of packed nets, which is what the
engine plays with (the float net it trained is rounded into integers and clipped), and of any
data, for instance positions of another kind than the ones a net was trained on. The loss is
eval-train's own (`train.SCALE`, `train.POWER`), so the figures compare:

    |sigmoid((own + correction) / SCALE) - sigmoid(label / SCALE)| ^ POWER

with `own` cb-async's hand-written evaluation and `correction` the net's, both for the side to
move. `none` (no correction) is always scored, as the baseline every net's change is given
against. The "right way" share counts the positions where the net corrects at all and the
label differs from `own`: of those, the share where the correction moves `own` toward the label.

A file may also be a PGN of `cb-async match` games, whose move comments hold the mover's score
(`+46/0.21s`): with `--labels NAME` its positions are those where the player NAME moved, kept by
eval-data's rule (not in check, the move neither a capture nor a promotion, a score in
centipawns of at most eval-data's cap) and labelled by that comment. Against Stockfish at fixed
nodes that is the question a net's own games ask: a search steers towards the positions its
evaluation overrates, so a net judges the positions of its own games worse than other nets
judge them (docs/strength.md, "Each net misjudges the positions of its own games most").

Positions are drawn from all the files' positions in order, shuffled by `random.Random(seed)`,
the first N kept: the same command gives the same figures. Pure Python (python-chess and the
packed net), so anyone with the engine can check a net: 20,000 positions take a few seconds.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass
from pathlib import Path

import chess

from cb_async.cli import UsageError, whole_number
from cb_async.search.eval_file import NONE, display_name, resolve_name
from cb_async.search.evaluation import blend, evaluate_from_scratch
from cb_async.search.network import Network, NetworkError
from cb_async.training.data import file_games, file_header, keeps, read_pgn_games
from cb_async.training.train import POWER, SCALE

#: The shuffle's seed unless told: the one the figures in docs/strength.md were drawn with.
DEFAULT_SEED = 5


@dataclass(frozen=True)
class Labelled:
    """A position of a data file and Stockfish's score of it for the side to move."""

    fen: str
    label: int


@dataclass(frozen=True)
class Score:
    """One net's figures over the positions scored."""

    name: str
    positions: int
    loss: float
    #: Positions where the net corrects and the label differs from the hand-written evaluation.
    judged: int
    #: Of those, the ones where the correction moves the evaluation toward the label.
    right: int

    @property
    def right_share(self) -> float | None:
        return self.right / self.judged if self.judged else None


def read_positions(paths: list[Path], labels: str | None = None) -> list[Labelled]:
    """Every position of the files, in order. A torn last line (an interrupted eval-data run)
    ends a file, as it does for eval-train; a file that is not eval-data's is a UsageError. A
    `.pgn` file's positions are those where the player `labels` moved (`pgn_positions`)."""
    found: list[Labelled] = []
    for path in paths:
        try:
            if path.suffix.lower() == ".pgn":
                if labels is None:
                    raise UsageError(f"{path}: a PGN's labels are one player's comments; name it with --labels")
                found.extend(pgn_positions(path, labels))
            else:
                found.extend(_file_positions(path))
        except OSError as error:
            raise UsageError(f"cannot read the data file {path}: {error.strerror or error}") from None
    return found


def pgn_positions(path: Path, player: str) -> list[Labelled]:
    """The positions of `cb-async match` games where `player` moved, labelled by its comment's
    score, kept as eval-data keeps a position (`data.keeps`)."""
    found: list[Labelled] = []
    for game in read_pgn_games((str(path),)):
        colours = [colour for colour, tag in ((chess.WHITE, "White"), (chess.BLACK, "Black"))
                   if game.headers.get(tag) == player]
        if not colours:
            continue
        board = game.board()
        for node in game.mainline():
            label = _comment_centipawns(node.comment)
            if board.turn in colours and label is not None and keeps(board, label, node.move):
                found.append(Labelled(board.fen(), label))
            board.push(node.move)
    return found


def _comment_centipawns(comment: str) -> int | None:
    """The centipawns of a match comment (`+46/0.21s`): None for a mate (`#+3`), none or text."""
    text = comment.strip().partition("/")[0]
    try:
        return int(text)
    except ValueError:
        return None


def _file_positions(path: Path) -> list[Labelled]:
    header = file_header(path)
    if not isinstance(header, dict) or "eval-data" not in header:
        raise UsageError(f"{path} is not an eval-data file (its first line is not eval-data's header)")
    found: list[Labelled] = []
    for record in file_games(path):
        try:
            found.extend(Labelled(str(fen), int(label)) for fen, label in record["positions"])
        except (KeyError, TypeError, ValueError, AttributeError):
            raise UsageError(f"{path}: a game without a list of [FEN, label] positions") from None
    return found


def sample(positions: list[Labelled], count: int | None, seed: int) -> list[Labelled]:
    """`count` of the positions (all if None), the same ones for the same seed."""
    chosen = list(positions)
    random.Random(seed).shuffle(chosen)
    return chosen if count is None else chosen[:count]


def win_probability(centipawns: float) -> float:
    """The logistic eval-train maps a score through (written so that neither side overflows)."""
    x = centipawns / SCALE
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def position_loss(own: int, correction: int, label: int) -> float:
    return float(abs(win_probability(own + correction) - win_probability(label)) ** POWER)


def score(positions: list[Labelled], nets: dict[str, Network | None]) -> list[Score]:
    """Each net's figures over `positions` (the hand-written evaluation computed once a
    position, the nets' corrections from scratch)."""
    losses = dict.fromkeys(nets, 0.0)
    judged = dict.fromkeys(nets, 0)
    right = dict.fromkeys(nets, 0)
    for position in positions:
        board = chess.Board(position.fen)
        own = blend(board, *evaluate_from_scratch(board))
        label = position.label
        for name, net in nets.items():
            correction = net.evaluate(board) if net is not None else 0
            losses[name] += position_loss(own, correction, label)
            if correction and label != own:
                judged[name] += 1
                right[name] += (correction > 0) == (label > own)
    count = len(positions)
    return [Score(name, count, losses[name] / count if count else math.nan, judged[name], right[name])
            for name in nets]


def report(scores: list[Score], baseline: Score) -> list[str]:
    """A header and a line a net: positions, mean loss, change against `none`, right way."""
    width = max(len("net"), *(len(score.name) for score in scores))
    lines = [f"{'net':<{width}}  {'positions':>9}  {'loss':>8}  {'vs none':>7}  {'right way':>9}"]
    for row in scores:
        change = (row.loss / baseline.loss - 1.0) * 100.0 if baseline.loss else 0.0
        share = f"{row.right_share * 100.0:.1f}%" if row.right_share is not None else "-"
        lines.append(f"{row.name:<{width}}  {row.positions:>9}  {row.loss:>8.6f}  {change:>+6.1f}%  {share:>9}")
    return lines


def load_nets(names: list[str]) -> dict[str, Network | None]:
    """The nets by the names they are printed under, `none` first; UsageError naming a net that
    cannot be used."""
    nets: dict[str, Network | None] = {NONE: None}
    for name in names:
        try:
            nets[display_name(name)] = resolve_name(name)
        except NetworkError as error:
            raise UsageError(f"--net: {error}") from None
    return nets


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, nargs="+", metavar="DATA",
                        help="eval-data files, or PGN files of cb-async match games (with --labels)")
    parser.add_argument("--net", action="append", required=True, metavar="NAME_OR_PATH",
                        help="a net to score (repeat for more): a net file, default.net for the built-in net, "
                             "none for the hand-written evaluation alone (scored every time, as the baseline of the change)")
    parser.add_argument("--labels", default=None, metavar="PLAYER",
                        help="for PGN files of cb-async match games: the player whose comments label the "
                             "positions where it moved (for instance the Stockfish of a yardstick run)")
    parser.add_argument("--positions", type=whole_number(1), default=None, metavar="N",
                        help="score N positions drawn at random from all the files' (default: all of them)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"the seed of the draw (default: {DEFAULT_SEED})")


def run(args: argparse.Namespace) -> int:
    nets = load_nets(args.net)
    positions = read_positions(list(args.data), args.labels)
    if not positions:
        raise UsageError("the data files hold no positions")
    scores = score(sample(positions, args.positions, args.seed), nets)
    asked = {display_name(name) for name in args.net}
    for line in report([row for row in scores if row.name in asked], scores[0]):
        print(line)
    return 0
