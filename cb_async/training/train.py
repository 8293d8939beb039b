"""`cb-async eval-train`: train the evaluation's correction net on `eval-data` files, on the CPU.

Needs the `train` extra (PyTorch and NumPy); the engine that plays with the result does not.

What is learnt: the difference between Stockfish's score and cb-async's own hand-written
evaluation, measured where it matters for play, in win probability: the loss is the mean of
|sigmoid(pred / K) - sigmoid(label / K)|^POWER with pred = cb-async's evaluation + the net's
correction (both for the side to move), so a mistake of 50 centipawns in a level position costs
far more than one in a won one. Games are split, not positions, into training and validation
(every `--holdout`th game), so the validation loss is measured on games the net never saw.

The inputs of every position (its two sides' active features and cb-async's evaluation) are
prepared once and cached beside the data, keyed by the data files' hash; the float net is saved
as JSON and packed into a net file by `pack.build`, whose header records the data, the seed,
the label budget and this command.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, cast

import chess

from cb_async.cli import UsageError, whole_number
from cb_async.search.evaluation import blend, evaluate_from_scratch
from cb_async.search.network import FEATURES, INPUTS, PLAIN, dumps, features
from cb_async.training.data import file_games, file_header, player_nodes
from cb_async.training.pack import FloatNet, build, dequantise

#: The logistic's scale: centipawns at which the expected score is about 73%.
SCALE = 200.0
POWER = 2.5
#: The correction is clipped to this in play (training fits it unclipped). The built-in net
#: corrects cb-async's own positions by 78 cp on average and reaches the clip in 6% of them,
#: yet the same net clipped at 100, 150 or 300 scores them within a point of 200 (the loss 0.9
#: points worse at 100, 0.1 better at 150, 0.3 worse at 300), likely because the largest
#: corrections are the least sure (not measured). The search skips the net where even a
#: correction this large could not change a cut-off (`qsearch`), so a tighter clip saves work.
CLAMP = 200
#: At most this many pieces on a board: the width of a position's feature list.
SLOTS = 32


def data_hash(paths: list[Path]) -> str:
    digest = hashlib.sha256()
    for path in sorted(paths):
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def prepare(paths: list[Path], holdout: int, cache: Path | None, inputs: str = PLAIN) -> dict[str, Any]:
    """Arrays of every position: both sides' features (side to move first, as `inputs` says),
    cb-async's own evaluation, the label, the game's result for the side to move, and which are
    held out."""
    import numpy as np

    digest = data_hash(paths)
    name = f"prepared-{digest[:16]}-h{holdout}" + ("" if inputs == PLAIN else f"-{inputs}") + ".npz"
    if cache is not None:
        cached = cache / name
        if cached.exists():
            loaded = np.load(cached)
            return {key: loaded[key] for key in loaded.files} | {"hash": digest, "headers": _headers(paths)}
    us_rows: list[list[int]] = []
    them_rows: list[list[int]] = []
    own: list[int] = []
    labels: list[int] = []
    results: list[float] = []
    held: list[bool] = []
    game_count = 0
    for path in paths:
        for record in file_games(path):
            game = int(record["game"])
            game_count += 1
            white_result = float(record["result"])
            for fen, label in record["positions"]:
                board = chess.Board(fen)
                mg, eg, phase = evaluate_from_scratch(board)
                us = features(board, board.turn, inputs)
                them = features(board, not board.turn, inputs)
                us_rows.append(us + [FEATURES] * (SLOTS - len(us)))
                them_rows.append(them + [FEATURES] * (SLOTS - len(them)))
                own.append(blend(board, mg, eg, phase))
                labels.append(label)
                results.append(white_result if board.turn else 1.0 - white_result)
                held.append(game % holdout == 0)
    arrays = {
        "us": np.array(us_rows, dtype=np.int64),
        "them": np.array(them_rows, dtype=np.int64),
        "own": np.array(own, dtype=np.float32),
        "label": np.array(labels, dtype=np.float32),
        "result": np.array(results, dtype=np.float32),
        "held": np.array(held, dtype=bool),
        "games": np.array(game_count),
    }
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        np.savez(cache / name, **arrays)
    return arrays | {"hash": digest, "headers": _headers(paths)}


def _headers(paths: list[Path]) -> list[dict[str, Any]]:
    return [cast(dict[str, Any], file_header(path)) for path in paths]


def train(data: dict[str, Any], units: int, epochs: int, batch: int, rate: float, seed: int,
          limit: int | None, result_weight: float, log: Any = sys.stderr,
          initial: FloatNet | None = None) -> tuple[FloatNet, list[tuple[int, float, float]]]:
    """Fit the net, from random weights or from `initial` (`units` must then be its width);
    return the net of the epoch with the lowest validation loss and the curve (epoch, training
    loss, validation loss). From `initial`, epoch 0 is that net itself, kept if no epoch beats
    it."""
    import numpy as np
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    transfer = data.get("transfer", np.zeros(len(data["held"]), dtype=bool))
    train_index = np.flatnonzero(~data["held"] & ~transfer)
    valid_index = np.flatnonzero(data["held"] & ~transfer)
    transfer_index = np.flatnonzero(transfer)
    if limit is not None:
        train_index = rng.permutation(train_index)[:limit]
    tensors = {key: torch.from_numpy(data[key]) for key in ("us", "them", "own", "label", "result")}

    embedding = torch.nn.EmbeddingBag(FEATURES + 1, units, mode="sum", padding_idx=FEATURES)
    with torch.no_grad():
        embedding.weight.normal_(0.0, 0.02)
        embedding.weight[FEATURES].zero_()
        if initial is not None:
            embedding.weight[:FEATURES] = torch.tensor(initial.w, dtype=torch.float32)
    bias = torch.nn.Parameter(torch.full((units,), 0.5))
    out = torch.nn.Parameter(torch.randn(units) * 2.0)
    if initial is not None:
        with torch.no_grad():
            bias.copy_(torch.tensor(initial.b, dtype=torch.float32))
            out.copy_(torch.tensor(initial.v, dtype=torch.float32))
    parameters = [embedding.weight, bias, out]
    optimiser = torch.optim.Adam(parameters, lr=rate)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimiser, T_max=max(epochs, 1))

    def predict(index: Any) -> Any:
        a_us = embedding(tensors["us"][index]) + bias
        a_them = embedding(tensors["them"][index]) + bias
        correction = ((a_us.clamp(0.0, 1.0) - a_them.clamp(0.0, 1.0)) * out).sum(dim=1)
        return tensors["own"][index] + correction

    def loss_of(index: Any) -> Any:
        target = torch.sigmoid(tensors["label"][index] / SCALE)
        if result_weight:
            target = (1.0 - result_weight) * target + result_weight * tensors["result"][index]
        return (torch.sigmoid(predict(index) / SCALE) - target).abs().pow(POWER).mean()

    def validation(index: Any = valid_index) -> float:
        with torch.no_grad():
            total = 0.0
            for start in range(0, len(index), 65536):
                part = torch.from_numpy(index[start:start + 65536])
                total += loss_of(part).item() * len(part)
            return total / max(len(index), 1)

    def transfer_text() -> str:
        return f", transfer {validation(transfer_index):.6f}" if len(transfer_index) else ""

    curve = [(0, float("nan"), validation())]
    print(f"eval-train: {len(train_index)} training and {len(valid_index)} validation positions, "
          f"{units} units; validation loss before: {curve[0][2]:.6f}{transfer_text()}", file=log, flush=True)
    best = (curve[0][2], 0, [parameter.detach().clone() for parameter in parameters])
    for epoch in range(1, epochs + 1):
        started = time.monotonic()
        order = torch.from_numpy(rng.permutation(train_index))
        total = 0.0
        for start in range(0, len(order), batch):
            part = order[start:start + batch]
            optimiser.zero_grad()
            loss = loss_of(part)
            loss.backward()
            optimiser.step()
            with torch.no_grad():
                embedding.weight[FEATURES].zero_()
            total += loss.item() * len(part)
        schedule.step()
        curve.append((epoch, total / max(len(order), 1), validation()))
        print(f"eval-train: epoch {epoch}: training {curve[-1][1]:.6f}, validation {curve[-1][2]:.6f}{transfer_text()} "
              f"({time.monotonic() - started:.0f} s)", file=log, flush=True)
        if curve[-1][2] < best[0]:
            best = (curve[-1][2], epoch, [parameter.detach().clone() for parameter in parameters])
    # The net of the epoch with the lowest validation loss: past it, more passes only fit the
    # training games' noise.
    with torch.no_grad():
        for parameter, kept in zip(parameters, best[2]):
            parameter.copy_(kept)
    if best[1] != epochs:
        print(f"eval-train: kept epoch {best[1]}, the lowest validation loss", file=log, flush=True)
    w = embedding.weight.detach()[:FEATURES].tolist()
    return FloatNet(w, bias.detach().tolist(), out.detach().tolist()), curve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("data", type=Path, nargs="+", help="eval-data files")
    parser.add_argument("--out", type=Path, required=True, help="the net file to write")
    parser.add_argument("--units", type=whole_number(1, 512), default=64, help="hidden units (default: 64)")
    parser.add_argument("--epochs", type=whole_number(1), default=12, help="passes over the data (default: 12)")
    parser.add_argument("--batch", type=whole_number(1), default=4096, help="positions a step (default: 4096)")
    parser.add_argument("--rate", type=float, default=2e-3, help="Adam's learning rate (default: 0.002)")
    parser.add_argument("--seed", type=int, default=1, help="the training seed (default: 1)")
    parser.add_argument("--holdout", type=whole_number(2), default=20,
                        help="every Nth game is held out for validation (default: 20)")
    parser.add_argument("--limit", type=whole_number(1), default=None, help="train on at most this many positions")
    parser.add_argument("--inputs", choices=INPUTS, default=PLAIN,
                        help="plain: each side sees the board as it stands; mirror: turned left to right "
                             "whenever its king is on the a- to d-files (default: plain)")
    parser.add_argument("--result-weight", type=float, default=0.0,
                        help="the share of the game's result in the target, 0 to 1 (default: 0)")
    parser.add_argument("--float", type=Path, default=None, metavar="FILE",
                        help="also write the trained net in floats (JSON), the reference the packed net is checked against")
    parser.add_argument("--validate", type=Path, nargs="+", default=None, metavar="FILE",
                        help="eval-data files of another kind to report the loss on too (never trained on)")
    parser.add_argument("--init", default=None, metavar="NET",
                        help="start from this net instead of random weights (a net file, or default.net for the "
                             "built-in one): a further round of training on new data; --units is then its width")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep the prepared inputs in this folder (default: beside the first data file)")


def run(args: argparse.Namespace) -> int:
    try:
        import numpy  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        raise UsageError("training needs PyTorch and NumPy: pip install 'cb-async[train]'") from None
    for path in args.data:
        if not path.is_file():
            raise UsageError(f"no data file {path}")
    initial, initial_name = _initial_net(args.init, args.inputs) if args.init is not None else (None, "")
    if initial is not None:
        args.units = len(initial.v)  # the width is the starting net's, and the header says so
    started = time.monotonic()
    data = prepare(list(args.data), args.holdout, args.cache or args.data[0].parent, args.inputs)
    if args.validate:
        # Positions of another kind (cb-async's own games, say), never trained on: how well
        # what the net learnt carries over to them.
        import numpy as np

        other = prepare(list(args.validate), args.holdout, args.cache or args.data[0].parent, args.inputs)
        size = len(data["label"])
        for key in ("us", "them", "own", "label", "result", "held"):
            data[key] = np.concatenate([data[key], other[key]])
        data["transfer"] = np.arange(len(data["label"])) >= size
    prepared = time.monotonic()
    print(f"eval-train: {len(data['label'])} positions prepared in {prepared - started:.0f} s", file=sys.stderr)
    net, curve = train(data, args.units, args.epochs, args.batch, args.rate, args.seed, args.limit, args.result_weight,
                       initial=initial)
    network = build(net, CLAMP, args.inputs)
    headers = data["headers"]
    trained = int((~data["held"] & ~data.get("transfer", data["held"] & False)).sum())
    header = {
        "data": "cb-async eval-data " + "; ".join(data_arguments(h) for h in headers)
                + f" ({int(data['games'])} games)",
        "labels": "; ".join(f"{h['engine']} at {h['nodes']} nodes" for h in headers),
        "data-sha256": data["hash"],
        "positions": str(min(args.limit or trained, trained)),
        "train": training_command(args),
        "validation-loss": f"{min(loss for _, _, loss in curve):.6f}",
    }
    if initial_name:
        header["init"] = initial_name
    args.out.write_text(dumps(network.weights, header), encoding="utf-8")
    if args.float is not None:
        args.float.write_text(json.dumps({"w": net.w, "b": net.b, "v": net.v}))
    print(f"eval-train: wrote {args.out} ({network.weights.units} units, shift {network.shift}) "
          f"in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 0


def data_arguments(header: dict[str, Any]) -> str:
    """The `eval-data` arguments that made a data file, from its header: seed, label budget, and
    how cb-async chose its moves when it did (nodes, evaluation, sides), or, for labelled games,
    the PGN files by name (their contents' hash is in the header)."""
    if "from-pgn" in header:
        return " ".join(["--from-pgn", *map(shlex.quote, map(str, header["from-pgn"])), f"--nodes {header['nodes']}"])
    words = f"--seed {header['seed']} --nodes {header['nodes']}"
    nodes = player_nodes(header)
    if nodes:
        words += f" --player-nodes {nodes}"
    if "player-eval-file" in header:
        words += f" --player-eval-file {shlex.quote(str(header['player-eval-file']))}"
    if "player-sides" in header:
        words += f" --player-sides {header['player-sides']}"
    return words


def training_command(args: argparse.Namespace) -> str:
    """The command that trains this net again (the data files by name: their hash is recorded)."""
    words = ["cb-async", "eval-train", *(path.name for path in args.data), "--units", str(args.units),
             "--epochs", str(args.epochs), "--batch", str(args.batch), "--rate", str(args.rate),
             "--seed", str(args.seed), "--holdout", str(args.holdout)]
    if args.limit is not None:
        words += ["--limit", str(args.limit)]
    if args.result_weight:
        words += ["--result-weight", str(args.result_weight)]
    if args.inputs != PLAIN:
        words += ["--inputs", args.inputs]
    if args.init is not None:
        words += ["--init", Path(args.init).name]
    return " ".join(shlex.quote(word) for word in words)


def _initial_net(name: str, inputs: str) -> tuple[FloatNet, str]:
    """The float net a further round starts from (the packed net `name` names, dequantised) and
    how the new net's header names it. UsageError if it cannot be read or was trained on other
    inputs."""
    from cb_async.search.eval_file import resolve_name
    from cb_async.search.network import NetworkError

    try:
        network = resolve_name(name)
    except NetworkError as error:
        raise UsageError(f"--init: {error}") from None
    if network is None:
        raise UsageError("--init: none is the hand-written evaluation, not a net to start from")
    if network.weights.inputs != inputs:
        raise UsageError(f"--init: {name} was trained with --inputs {network.weights.inputs}, not {inputs}")
    return dequantise(network.weights), f"{Path(name).name} sha256 {network.header.get('sha256', '?')}"


def float_net(path: Path) -> FloatNet:
    record = json.loads(path.read_text())
    return FloatNet(record["w"], record["b"], record["v"])

