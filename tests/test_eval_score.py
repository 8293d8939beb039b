"""The two measurements of a net anyone can rerun: `cb-async eval-score` (eval-train's loss of
packed nets on eval-data positions, against none's) and `cb-async bench --eval-file` (the node
total and time of a search with a net)."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from cb_async.cli import main
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.eval_file import resolve_name
from cb_async.search.evaluation import blend, evaluate_from_scratch
from cb_async.search.network import FEATURES, Network, default, dumps
from cb_async.tools import bench
from cb_async.training import score
from cb_async.training.pack import FloatNet, build
from cb_async.training.train import POWER, SCALE

FENS = (
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9",
    "2r3k1/pp3ppp/4p3/3pP3/3P4/P1R2P2/1P4PP/6K1 b - - 0 25",
    "8/5pk1/6p1/8/5P2/6P1/3B2K1/8 w - - 0 50",
    "r2q1rk1/3nbppp/p2pbn2/1p2p3/4P1P1/1NN1BP2/PPPQ3P/2KR1B1R w - - 0 12",
)


def small_net(seed: int = 21) -> Network:
    rng = random.Random(seed)
    units = 8
    return build(FloatNet([[rng.gauss(0.0, 0.15) for _ in range(units)] for _ in range(FEATURES)],
                          [rng.uniform(0.0, 1.0) for _ in range(units)],
                          [rng.gauss(0.0, 30.0) for _ in range(units)]), clamp=600)


@pytest.fixture(scope="module")
def net_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("nets") / "small.net"
    path.write_text(dumps(small_net().weights, {"data": "test"}))
    return path


def own(fen: str) -> int:
    board = chess.Board(fen)
    return blend(board, *evaluate_from_scratch(board))


def loss(own_cp: int, correction: int, label: int) -> float:
    def sigmoid(cp: float) -> float:
        return 1.0 / (1.0 + math.exp(-cp / SCALE))

    return abs(sigmoid(own_cp + correction) - sigmoid(label)) ** POWER


def labelled_positions(net: Network) -> list[tuple[str, int]]:
    """Labels the net is right about (beyond own on the correction's side), wrong about, equal
    to own, and one where the net does not correct (the last two not counted for direction)."""
    corrections = [net.evaluate(chess.Board(fen)) for fen in FENS]
    assert corrections.count(0) == 1  # the second position: this net leaves it as it is
    shifts = (3, 1, 2, 0, -1)  # label = own + shift * correction (or 50 more where there is none)
    return [(fen, own(fen) + (shift * correction if correction else 50))
            for fen, shift, correction in zip(FENS, shifts, corrections)]


def direction(net: Network, positions: list[tuple[str, int]]) -> tuple[int, int]:
    """(positions judged, corrected the right way), counted here as the brief defines them."""
    judged = right = 0
    for fen, label in positions:
        correction, plain = net.evaluate(chess.Board(fen)), own(fen)
        if correction != 0 and label != plain:
            judged += 1
            right += (correction > 0) == (label > plain)
    return judged, right


def write_data(path: Path, positions: list[tuple[str, int]]) -> Path:
    header = {"eval-data": 1, "seed": 1, "nodes": 5000, "engine": "test"}
    games = [positions[:2], positions[2:]]
    lines = [json.dumps(header)] + [json.dumps({"game": i, "result": 0.5, "positions": [list(p) for p in game]})
                                    for i, game in enumerate(games)]
    path.write_text("\n".join(lines) + "\n")
    return path


def table(out: str) -> dict[str, list[str]]:
    rows = [line.split() for line in out.splitlines()]
    assert rows[0] == ["net", "positions", "loss", "vs", "none", "right", "way"]
    return {row[0]: row[1:] for row in rows[1:]}


def test_eval_score_prints_eval_trains_loss_against_none_and_the_share_corrected_the_right_way(
        tmp_path: Path, net_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net = small_net()
    positions = labelled_positions(net)
    data = write_data(tmp_path / "data.jsonl", positions)
    plain = sum(loss(own(fen), 0, label) for fen, label in positions) / len(positions)
    netted = sum(loss(own(fen), net.evaluate(chess.Board(fen)), label) for fen, label in positions) / len(positions)

    assert main(["eval-score", str(data), "--net", "none", "--net", str(net_file)]) == 0
    rows = table(capsys.readouterr().out)
    assert rows["none"] == ["5", f"{plain:.6f}", "+0.0%", "-"]
    judged, right = direction(net, positions)
    assert (judged, right) == (3, 2)  # the unchanged label and the uncorrected position left out
    change = (netted / plain - 1.0) * 100.0
    assert rows[str(net_file)] == ["5", f"{netted:.6f}", f"{change:+.1f}%", f"{right / judged * 100:.1f}%"]

    figures = score.score([score.Labelled(fen, label) for fen, label in positions], {"none": None, "net": net})
    assert figures[0].loss == pytest.approx(plain, rel=1e-12) and figures[1].loss == pytest.approx(netted, rel=1e-12)
    assert (figures[1].judged, figures[1].right) == (judged, right)


def test_eval_score_draws_the_same_positions_for_the_same_seed_and_scores_none_as_the_baseline(
        tmp_path: Path, net_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    net = small_net()
    positions = labelled_positions(net)
    data = write_data(tmp_path / "data.jsonl", positions)
    drawn = list(positions)
    random.Random(9).shuffle(drawn)
    drawn = drawn[:2]
    plain = sum(loss(own(fen), 0, label) for fen, label in drawn) / 2
    netted = sum(loss(own(fen), net.evaluate(chess.Board(fen)), label) for fen, label in drawn) / 2

    assert main(["eval-score", str(data), "--net", str(net_file), "--positions", "2", "--seed", "9"]) == 0
    rows = table(capsys.readouterr().out)
    assert list(rows) == [str(net_file)]  # none is the baseline, printed only when asked for
    assert rows[str(net_file)][:3] == ["2", f"{netted:.6f}", f"{(netted / plain - 1.0) * 100.0:+.1f}%"]


def test_a_torn_last_line_ends_a_data_file_as_it_does_for_eval_train(tmp_path: Path) -> None:
    positions = labelled_positions(small_net())
    data = write_data(tmp_path / "data.jsonl", positions)
    data.write_text(data.read_text() + '{"game": 2, "result": 1.0, "posi')
    assert [(p.fen, p.label) for p in score.read_positions([data, data])] == positions * 2


def test_default_net_names_the_built_in_net_and_none_the_hand_written_evaluation() -> None:
    assert resolve_name("default.net") is default() and resolve_name("") is default()
    assert resolve_name("none") is None


def test_eval_score_needs_no_pytorch() -> None:
    code = "import sys, cb_async.training.score; print(sorted({'torch', 'numpy'} & set(sys.modules)))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


MATCH_PGN = """[Event "cb-async match"]
[White "cb-net"]
[Black "sf1000"]
[Result "0-1"]

1. e4 { +30/0.20s } 1... e5 { -25/0.01s } 2. Nf3 { +40/0.20s } 2... Nc6 { -31/0.01s } 3. Bc4 { +35/0.20s }
3... Nd4 { -12/0.01s } 4. Nxe5 { +90/0.20s } 4... Qg5 { -40/0.01s } 5. Nxf7 { +150/0.20s }
5... Qxg2 { #+3/0.01s } 6. Rf1 { -500/0.20s } 6... Qxe4+ { +700/0.01s } 7. Be2 { -700/0.20s }
7... Nf3# { +9000/0.01s } 0-1

[Event "cb-async match"]
[White "sf1000"]
[Black "cb-other"]
[Result "1/2-1/2"]

1. d4 { +20/0.01s } 1... d5 { -20/0.20s } 1/2-1/2
"""


def test_a_match_pgn_is_labelled_by_the_named_players_comments_where_it_moved(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "match.pgn"
    path.write_text(MATCH_PGN)
    board = chess.Board()
    before = {}
    for san in "e4 e5 Nf3 Nc6 Bc4 Nd4 Nxe5 Qg5 Nxf7 Qxg2 Rf1 Qxe4+ Be2".split():
        before[san] = board.fen()
        board.push_san(san)
    # sf1000's moves: e5, Nc6, Nd4 and Qg5 are kept; Qxg2 (a mate score and a capture), Qxe4+
    # (a capture) and Nf3# (a label beyond the cap) are not; d4 of the second game is kept.
    expected = [(before["e5"], -25), (before["Nc6"], -31), (before["Nd4"], -12), (before["Qg5"], -40),
                (chess.STARTING_FEN, 20)]
    assert [(p.fen, p.label) for p in score.read_positions([path], "sf1000")] == expected
    assert [(p.fen, p.label) for p in score.read_positions([path], "cb-net")] == [
        (chess.STARTING_FEN, 30), (before["Nf3"], 40), (before["Bc4"], 35), (before["Rf1"], -500)]
    assert main(["eval-score", str(path), "--labels", "sf1000", "--net", "none"]) == 0
    plain = sum(loss(own(fen), 0, label) for fen, label in expected) / len(expected)
    assert table(capsys.readouterr().out)["none"] == ["5", f"{plain:.6f}", "+0.0%", "-"]


BAD = {
    "missing data": (["{tmp}/missing.jsonl", "--net", "none"], "cannot read the data file"),
    "data of another kind": (["{tmp}/other.jsonl", "--net", "none"], "is not an eval-data file"),
    "data without positions": (["{tmp}/empty.jsonl", "--net", "none"], "hold no positions"),
    "missing net": (["{tmp}/data.jsonl", "--net", "{tmp}/missing.net"], "cannot read the net"),
    "damaged net": (["{tmp}/data.jsonl", "--net", "{tmp}/damaged.net"], "damaged or truncated"),
    "no net": (["{tmp}/data.jsonl"], "required: --net"),
    "a PGN without --labels": (["{tmp}/match.pgn", "--net", "none"], "name it with --labels"),
    "a PGN that does not parse": (["{tmp}/broken.pgn", "--labels", "sf", "--net", "none"], "game 1 does not parse"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_data_file_or_net_is_one_line_and_status_2(case: str, tmp_path: Path, net_file: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    write_data(tmp_path / "data.jsonl", [(FENS[0], 10)])
    write_data(tmp_path / "empty.jsonl", [])
    (tmp_path / "other.jsonl").write_text('{"games": 3}\n')
    (tmp_path / "damaged.net").write_text(net_file.read_text().replace("\n1 ", "\n2 ", 1))
    (tmp_path / "match.pgn").write_text(MATCH_PGN)
    (tmp_path / "broken.pgn").write_text('[White "sf"]\n\n1. e4 e5 2. Ke3 *\n')
    words, message = BAD[case]
    assert main(["eval-score", *(word.replace("{tmp}", str(tmp_path)) for word in words)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("cb-async eval-score: ") and message in err, err


def bench_total(out: str, field: str) -> str:
    return next(line.split(":", 1)[1].strip() for line in out.splitlines() if line.startswith(field))


def test_bench_eval_file_searches_every_position_with_that_net(net_file: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    depth = 2
    net = small_net()
    direct = 0
    for fen in bench.POSITIONS:
        searcher = Searcher(hash_mb=16)
        searcher.network = net
        direct += searcher.search(bench._board(fen), (), Limits(depth=depth), StopToken()).nodes

    assert main(["bench", str(depth), "--eval-file", str(net_file)]) == 0
    out = capsys.readouterr().out
    assert bench_total(out, "Nodes searched  :") == str(direct)
    assert bench_total(out, "Eval file       :") == str(net_file)
    assert int(bench_total(out, "CPU time (ms)   :")) >= 0

    assert main(["bench", str(depth)]) == 0  # the engine's default, the built-in net: a different tree
    builtin = capsys.readouterr().out
    assert bench_total(builtin, "Eval file       :") == "default.net"
    assert bench_total(builtin, "Nodes searched  :") != str(direct)


def test_bench_with_a_bad_net_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "2", "--eval-file", str(tmp_path / "missing.net")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("cb-async bench: --eval-file: cannot read the net"), err
