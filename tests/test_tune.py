"""The tuner: labelling positions of real games with a UCI engine, and the fit's direction."""

from __future__ import annotations

import io
import math
import shlex
from contextlib import redirect_stdout
from pathlib import Path

import chess
import chess.pgn

from cb_async.search.structure import NAMES, SIGNS, WEIGHTS
from devtools import tune
from conformance.engine_process import engine_command


def test_every_shipped_weight_keeps_its_terms_sign() -> None:
    assert set(SIGNS) == set(NAMES)
    for name, mg, eg in WEIGHTS:
        assert SIGNS[name] * mg >= 0 and SIGNS[name] * eg >= 0, name


def test_quiet_means_no_check_and_no_capture_that_wins_material() -> None:
    assert tune.is_quiet(chess.Board())
    assert not tune.is_quiet(chess.Board("4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1"))  # Qxd5 wins a queen... for a queen, undefended
    assert not tune.is_quiet(chess.Board("4k3/8/8/3r4/4P3/8/8/4K3 w - - 0 1"))  # pawn takes rook
    assert tune.is_quiet(chess.Board("4k3/2p5/3p4/8/8/8/8/3RK3 w - - 0 1"))  # Rxd6 cxd6 loses the rook
    assert not tune.is_quiet(chess.Board("4k3/8/8/8/8/8/4r3/4K3 w - - 0 1"))  # in check


def test_label_writes_quiet_positions_with_the_engines_score(tmp_path: Path) -> None:
    game = chess.pgn.Game()
    node: chess.pgn.GameNode = game
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7"]:
        node = node.add_variation(chess.Move.from_uci(uci))
    pgn = tmp_path / "games.pgn"
    pgn.write_text(str(game) + "\n\n")
    out = tmp_path / "positions.txt"
    parser = tune.argparse.ArgumentParser()
    tune.add_arguments(parser)
    args = parser.parse_args(["label", "--pgn", str(pgn), "--out", str(out), "--skip", "6",
                              "--engine", shlex.join(engine_command()), "--nodes", "200"])
    assert tune.run(args) == 0
    lines = out.read_text().splitlines()
    # Plies 7 to 10, less the one after castling, where ...Nxe4 takes an undefended pawn.
    assert [line.split(";")[0].split()[0] for line in lines] == [
        "r1bqkbnr/1ppp1ppp/p1n5/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R",
        "r1bqkb1r/1ppp1ppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQK2R",
        "r1bqk2r/1pppbppp/p1n2n2/4p3/B3P3/5N2/PPPP1PPP/RNBQ1RK1",
    ]
    for line in lines:
        fen, cp = line.rsplit(";", 1)
        assert chess.Board(fen).is_valid() and abs(int(cp)) < 300


def test_the_fit_moves_a_weight_towards_what_the_reference_says(tmp_path: Path) -> None:
    # The same position with and without White's bishop pair; the reference likes the pair
    # far more than the weights do, so the fit raises the pair's weights.
    with_pair = "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1"
    one_bishop = "4k3/8/8/8/8/8/8/2N1KB2 w - - 0 1"
    data = tmp_path / "positions.txt"
    data.write_text(f"{with_pair};900\n{one_bishop};300\n" * 5)
    before = dict((name, (mg, eg)) for name, mg, eg in WEIGHTS)["bishop pair"]
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert tune.main(["fit", str(data), "--epochs", "30", "--rate", "2"]) == 0
    fitted = {line.split('"')[1]: line for line in printed.getvalue().splitlines() if line.strip().startswith("(")}
    assert set(fitted) == set(NAMES)
    mg, eg = (int(x) for x in fitted["bishop pair"].rstrip("),").split(",")[1:])
    assert eg > before[1] and not math.isnan(eg)


def test_a_missing_data_file_is_a_clear_error(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert tune.main(["fit", str(tmp_path / "none.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_the_fits_model_is_the_engines_evaluation() -> None:
    # A sample's fixed part plus today's weights times its counts must be what the engine
    # itself says (White's point of view), or the fit would tune a different function.
    from cb_async.search.evaluation import blend, evaluate_from_scratch

    params = [float(w) for _, mg, eg in WEIGHTS for w in (mg, eg)]
    for fen in [
        chess.STARTING_FEN,
        "8/5k2/3p4/1pP5/1P1P4/8/2B2K2/2b5 b - - 0 40",  # passed, supported, doubled-free, bishops
        "r1b1k2r/pp3ppp/2p5/8/1bPP4/2N5/PP3PPP/R1B1KB1R w KQkq - 0 10",  # isolated d-pawn, pairs
        "4k3/p1p5/P1P5/8/8/p7/8/4K3 w - - 0 1",  # doubled and isolated pawns
        "8/1k6/8/6P1/8/2p5/8/5K2 w - - 0 1",  # passed pawns far from and near the kings
    ]:
        board = chess.Board(fen)
        sample = tune.Sample(board, 0)
        model = sample.base + sum(params[i] * x for i, x in sample.terms)
        mg, eg, phase = evaluate_from_scratch(board)
        engine = blend(board, mg, eg, phase)
        white_view = engine if board.turn == chess.WHITE else -engine
        assert abs(model - white_view) <= 1, fen


def test_the_table_fits_model_is_the_engines_evaluation_too() -> None:
    # With the tables as parameters the fixed part is the tempo alone; today's tables as
    # parameters must give back the engine's evaluation.
    from cb_async.search.evaluation import blend, evaluate_from_scratch

    params = [float(w) for _, mg, eg in WEIGHTS for w in (mg, eg)] + tune.table_params()
    for fen in [
        chess.STARTING_FEN,
        "8/5k2/3p4/1pP5/1P1P4/8/2B2K2/2b5 b - - 0 40",
        "r1b1k2r/pp3ppp/2p5/8/1bPP4/2N5/PP3PPP/R1B1KB1R w KQkq - 0 10",
        "6k1/8/8/8/8/8/1q6/K7 w - - 0 1",
        "8/1k6/8/6P1/8/2p5/8/3R1K2 b - - 0 1",
    ]:
        board = chess.Board(fen)
        sample = tune.Sample(board, 0, tables=True)
        model = sample.base + sum(params[i] * x for i, x in sample.terms)
        mg, eg, phase = evaluate_from_scratch(board)
        engine = blend(board, mg, eg, phase)
        white_view = engine if board.turn == chess.WHITE else -engine
        assert abs(model - white_view) <= 1, fen


def _printed_tables(output: str) -> dict[str, list[list[int]]]:
    """{"_MG_TABLES": [pawn entries, knight entries, ...], "_EG_TABLES": [...]} from fit's output."""
    found: dict[str, list[list[int]]] = {}
    current: list[list[int]] = []
    for line in output.splitlines():
        if line.startswith("_"):
            current = found.setdefault(line.split(":")[0], [])
        elif line.strip().startswith("chess."):
            current.append([])
        elif line.startswith("        "):
            current[-1] += [int(v) for v in line.strip().rstrip(",").split(",")]
    return found


def test_the_table_fit_prints_todays_tables_when_nothing_moves_them_and_moves_a_square_when_asked(
    tmp_path: Path,
) -> None:
    from cb_async.search import evaluation

    # No pass over the data: the printed tables are today's, entry for entry.
    data = tmp_path / "positions.txt"
    knight_d5 = "4k3/8/8/3N4/8/8/8/4K3 w - - 0 1"
    data.write_text(f"{knight_d5};900\n" * 4)
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert tune.main(["fit", str(data), "--tables", "--epochs", "0"]) == 0
    tables = _printed_tables(printed.getvalue())
    assert tables["_MG_TABLES"] == [list(evaluation._MG_TABLES[p]) for p in chess.PIECE_TYPES]
    assert tables["_EG_TABLES"] == [list(evaluation._EG_TABLES[p]) for p in chess.PIECE_TYPES]

    # A reference that likes a knight on d5 far more than today's tables: that square rises,
    # and a square no position reads stays where it was.
    printed = io.StringIO()
    with redirect_stdout(printed):
        assert tune.main(["fit", str(data), "--tables", "--epochs", "20", "--rate", "2", "--batch", "2"]) == 0
    fitted = _printed_tables(printed.getvalue())
    d5 = chess.D5 ^ 56  # the printed tables start at a8
    knight = chess.KNIGHT - 1
    assert fitted["_EG_TABLES"][knight][d5] > evaluation._EG_TABLES[chess.KNIGHT][d5]
    assert fitted["_EG_TABLES"][knight][chess.A1 ^ 56] == evaluation._EG_TABLES[chess.KNIGHT][chess.A1 ^ 56]


def test_a_fit_twice_todays_size_is_scaled_back_by_half_and_rare_weights_are_held() -> None:
    boards = [chess.Board(), chess.Board("4k3/8/8/3N4/8/8/8/4K3 w - - 0 1")]
    samples = [tune.Sample(board, 0, tables=True) for board in boards]
    start = [float(w) for _, mg, eg in WEIGHTS for w in (mg, eg)] + tune.table_params()
    # Only the tempo is outside the weights: doubling them nearly doubles every evaluation.
    factor = tune.size_factor(samples, start, [2 * w for w in start])
    assert 0.49 < factor < 0.51

    bounds = tune.sign_bounds(True, tables=True)
    held = tune.hold_rare(samples, start, bounds, 2)
    knight_d5 = tune.table_index(chess.KNIGHT, chess.D5 ^ 56)  # one position has it
    white_king_e1 = tune.table_index(chess.KING, chess.E1 ^ 56)  # both have it
    assert held[knight_d5] == (start[knight_d5], start[knight_d5])
    assert held[white_king_e1] == bounds[white_king_e1]
