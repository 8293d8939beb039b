"""The measurements of a net anyone can rerun: `cb-async bench --eval-file` (the node total and
time of a search with a net)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cb_async.cli import main
from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.eval_file import resolve_name
from cb_async.search.network import FEATURES, Network, default, dumps
from cb_async.tools import bench
from cb_async.training.pack import FloatNet, build


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


def test_default_net_names_the_built_in_net_and_none_the_hand_written_evaluation() -> None:
    assert resolve_name("default.net") is default() and resolve_name("") is default()
    assert resolve_name("none") is None


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

    assert main(["bench", str(depth)]) == 0  # the engine's default, none: a different tree
    plain = capsys.readouterr().out
    assert bench_total(plain, "Eval file       :") == "none"
    assert bench_total(plain, "Nodes searched  :") != str(direct)


def test_bench_with_a_bad_net_is_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "2", "--eval-file", str(tmp_path / "missing.net")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("cb-async bench: --eval-file: cannot read the net"), err
