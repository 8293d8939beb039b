"""The learned evaluation is certified before it plays: its lanes cannot overflow, the search's
incremental accumulators equal the ones built from scratch, it is exactly antisymmetric, the
packed integers compute what the float net does, and a damaged net file is an error."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from cb_async.limits import Limits
from cb_async.search import Searcher, StopToken
from cb_async.search.network import (
    BIAS, FEATURES, LANE, MAX_GAIN_SUM, MIRROR, VALUE_BITS, Network, NetworkError, Weights, certify, default, dumps,
    features, lane_bounds, lanes, load, loads, pack,
)
from cb_async.search.eval_file import resolve
from cb_async.training.pack import FloatNet, best_shift, build, dequantise, quantise


def random_float_net(units: int, seed: int, scale: float = 0.15) -> FloatNet:
    rng = random.Random(seed)
    return FloatNet(
        [[rng.gauss(0.0, scale) for _ in range(units)] for _ in range(FEATURES)],
        [rng.uniform(0.0, 1.0) for _ in range(units)],
        [rng.gauss(0.0, 30.0) for _ in range(units)],
    )


def random_positions(count: int, seed: int, chess960: bool = False) -> list[chess.Board]:
    """The ends of random games, one a game: castling, en passant and promotions all happen."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        for _ in range(rng.randrange(1, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            # Prefer the special moves, so that each kind is walked often.
            special = [m for m in moves if m.promotion or board.is_castling(m) or board.is_en_passant(m)]
            board.push(rng.choice(special) if special and rng.random() < 0.5 else rng.choice(moves))
        if not board.is_game_over():
            boards.append(board.copy(stack=False))
    return boards


#: Positions whose trees are full of castling, en passant and promotions for both sides.
SPECIAL_FENS = (
    "r3k2r/pPp2ppp/8/3pP3/3Pp3/8/PpP2PPP/R3K2R w KQkq d6 0 1",
    "r3k2r/1pp1pppp/8/P2pP3/8/8/1PPP1PpP/R3K2R b KQkq - 0 1",
    "rk2r3/pp3Ppp/8/2pP4/8/8/PP3pPP/RK2R3 w KQkq c6 0 1",
)


def mirrored_net() -> Network:
    """A small net with mirrored inputs (random weights: the packing, not the play, is tested)."""
    return build(random_float_net(16, seed=21), clamp=600, inputs=MIRROR)


def plain_net() -> Network:
    return build(random_float_net(16, seed=21), clamp=600)


#: The shipped net and one of each kind of inputs: every certification runs on each.
NETS = {"built-in": default, "plain": plain_net, "mirror": mirrored_net}


class CheckingNetwork(Network):
    """A net that checks, at every evaluation inside a search, that the accumulator the search
    carried down equals the one built from the search's board as it stands, and counts the
    special moves the search built an accumulator after."""

    def __init__(self, base: Network) -> None:
        self.__dict__.update(base.__dict__)
        self.board: chess.Board | None = None
        self.checked = 0
        self.wrong: list[str] = []
        self.special = {"castling": 0, "en passant": 0, "promotion": 0}
        if base.mirrored:
            self.special["king changing half"] = 0
        plain = base.white_value

        def checking(acc: int) -> int:
            assert self.board is not None
            self.checked += 1
            if acc != Network.accumulate(self, self.board):
                self.wrong.append(self.board.fen())
            return plain(acc)

        self.white_value = checking

    def accumulate(self, board: chess.Board) -> int:
        self.board = board  # the search builds its root's accumulator from its own board
        previous = board._stack[-1] if board._stack else None
        if isinstance(previous, chess._BoardState):  # a move inside the tree that went through `push`
            move = board.peek()
            start, end = chess.BB_SQUARES[move.from_square], chess.BB_SQUARES[move.to_square]
            own = previous.occupied_w if previous.occupied_w & start else previous.occupied_b
            if move.promotion:
                self.special["promotion"] += 1
            elif previous.kings & start and (
                abs(chess.square_file(move.to_square) - chess.square_file(move.from_square)) >= 2 or own & end
            ):
                self.special["castling"] += 1
            elif previous.pawns & start and previous.ep_square == move.to_square:
                self.special["en passant"] += 1
            elif previous.kings & start and (move.from_square ^ move.to_square) & 4 and self.mirrored:
                self.special["king changing half"] += 1
        return Network.accumulate(self, board)



def test_the_built_in_net_is_certified_and_says_where_it_came_from() -> None:
    net = default()
    certify(net.weights)
    for field in ("data", "labels", "data-sha256", "train", "positions", "sha256"):
        assert net.header.get(field), field
    assert sum(net.weights.gains) <= MAX_GAIN_SUM


@pytest.mark.parametrize("kind", NETS)
def test_every_lane_of_every_position_stays_inside_its_guard_bit(kind: str) -> None:
    net = NETS[kind]()
    count = 2 * net.weights.units
    bounds = lane_bounds(net.weights)
    assert all(0 <= low <= high < 1 << VALUE_BITS for low, high in bounds)
    for board in random_positions(300, seed=1) + random_positions(100, seed=2, chess960=True):
        values = lanes(net.accumulate(board), count)
        assert all(low <= value <= high for value, (low, high) in zip(values, bounds))


def test_a_net_whose_lanes_could_overflow_is_refused_and_packed_less_finely() -> None:
    loud = random_float_net(8, seed=3, scale=3.0)
    shift = best_shift(loud)  # the gains fit the sum, but the rows push lanes past the guard
    weights = quantise(loud, shift, 600)
    with pytest.raises(NetworkError, match="lane .* outside"):
        certify(weights)
    network = build(loud, 600)  # the packer steps the gain down until the bound holds
    assert network.shift < shift
    certify(network.weights)


def test_the_gains_must_fit_the_modular_sum() -> None:
    weights = quantise(random_float_net(4, seed=4), 6, 600)
    too_much = Weights(weights.shift, weights.clamp, weights.positive, (MAX_GAIN_SUM,) * weights.units,
                       weights.biases, weights.rows)
    with pytest.raises(NetworkError, match="gains add up"):
        certify(too_much)


@pytest.mark.parametrize("chess960", [False, True])
@pytest.mark.parametrize("kind", NETS)
def test_the_searchs_accumulators_equal_the_ones_built_from_scratch(chess960: bool, kind: str) -> None:
    # Every node's accumulator, carried down through quiet moves, captures, castling, en
    # passant, promotions, null moves and (mirrored) kings changing half, against the one
    # built from the board at that node.
    checking = CheckingNetwork(NETS[kind]())
    searcher = Searcher()
    searcher.network = checking
    boards = random_positions(30, seed=5 + chess960, chess960=chess960)
    boards += [chess.Board(fen, chess960=chess960) for fen in SPECIAL_FENS]
    for board in boards:
        searcher.new_game()
        searcher.search(board, (), Limits(depth=3), StopToken())
    assert checking.wrong == []
    assert checking.checked > 5000
    assert all(checking.special.values()), checking.special


@pytest.mark.parametrize("kind", NETS)
def test_the_correction_is_exactly_antisymmetric(kind: str) -> None:
    net = NETS[kind]()
    for board in random_positions(500, seed=7) + random_positions(100, seed=8, chess960=True):
        mirror = board.mirror()
        assert net.white_value(net.accumulate(board)) == -net.white_value(net.accumulate(mirror))
        assert net.evaluate(board) == net.evaluate(mirror)


def test_mirrored_inputs_see_a_position_and_its_left_right_mirror_alike() -> None:
    # Each side's view is turned so that its king is on the e- to h-files: a position and its
    # mirror through the d/e line are the same picture to both sides.
    net = mirrored_net()
    plain = build(random_float_net(16, seed=21), clamp=600)
    boards = random_positions(300, seed=22)
    turned = [board.transform(chess.flip_horizontal) for board in boards]
    assert all(net.evaluate(board) == net.evaluate(other) for board, other in zip(boards, turned))
    assert any(plain.evaluate(board) != plain.evaluate(other) for board, other in zip(boards, turned))
    # The halves are kept above the lanes: 2 for White's king on the a- to d-files, 1 for Black's.
    board = chess.Board("8/8/8/8/8/8/8/1K4k1 w - - 0 1")
    assert net.accumulate(board) >> net.state_shift == 2
    assert net.accumulate(board.transform(chess.flip_horizontal)) >> net.state_shift == 1


@pytest.mark.parametrize("inputs", ["plain", "mirror"])
def test_the_packed_net_computes_what_the_float_net_does(inputs: str) -> None:
    # Each row value is rounded to 1/G_k of unit k's range, so with at most 32 pieces and the
    # bias, a unit's pre-activation is off by at most 33/2 steps of 1/G_k, which moves the
    # output by at most 16.5 |v_k| / G_k = 16.5 / 2^shift centipawns; the final shift rounds
    # toward zero, one centipawn more.
    float_net = random_float_net(16, seed=9)
    network = build(float_net, clamp=10_000, inputs=inputs)
    tolerance = 16 * 16.5 / (1 << network.shift) + 1
    worst = 0.0
    for board in random_positions(300, seed=10):
        expected = float_net.value(features(board, True, inputs), features(board, False, inputs))
        got = network.white_value(network.accumulate(board))
        worst = max(worst, abs(got - expected))
    assert worst <= tolerance
    assert worst > 0  # the comparison saw real rounding, not two copies of one computation


@pytest.mark.parametrize("inputs", ["plain", "mirror"])
def test_a_packed_net_turned_back_into_floats_packs_to_the_same_integers(inputs: str) -> None:
    # `eval-train --init` starts from the dequantised net: it must be the net the engine plays
    # with, unit for unit, or a further round would begin somewhere else.
    network = build(random_float_net(16, seed=14), clamp=200, inputs=inputs)
    floats = dequantise(network.weights)
    assert quantise(floats, network.shift, 200, inputs) == network.weights
    assert sum(weight > 0 for weight in floats.v) == network.weights.positive
    for board in random_positions(50, seed=15):
        white, black = features(board, True, inputs), features(board, False, inputs)
        expected = min(max(floats.value(white, black), -200.0), 200.0)
        assert abs(expected - network.white_value(network.accumulate(board))) <= 1


def test_the_built_in_net_turns_back_into_floats_that_pack_to_it() -> None:
    weights = default().weights
    assert quantise(dequantise(weights), weights.shift, weights.clamp, weights.inputs) == weights


def test_the_correction_is_clipped() -> None:
    network = build(random_float_net(16, seed=11, scale=0.4), clamp=25)
    values = [network.white_value(network.accumulate(board)) for board in random_positions(200, seed=12)]
    assert max(values) == 25 and min(values) == -25


@pytest.mark.parametrize("inputs", ["plain", "mirror"])
def test_a_net_file_reads_back_as_the_same_net(tmp_path: Path, inputs: str) -> None:
    network = build(random_float_net(8, seed=13), clamp=600, inputs=inputs)
    path = tmp_path / "small.net"
    path.write_text(dumps(network.weights, {"data": "test"}))
    again = load(path)
    assert again.weights == network.weights and again.header["data"] == "test"
    assert again.mirrored == (inputs == "mirror") and again.header["inputs"] == inputs
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    assert again.evaluate(board) == network.evaluate(board)


def test_a_net_file_with_unknown_inputs_is_a_clear_error(tmp_path: Path) -> None:
    text = dumps(build(random_float_net(8, seed=14), clamp=600).weights, {"data": "test"})
    path = tmp_path / "odd.net"
    path.write_text(text.replace("\ninputs plain\n", "\ninputs king-buckets\n"))
    with pytest.raises(NetworkError, match="odd.net.*inputs are 'king-buckets'"):
        load(path)


@pytest.mark.parametrize("damage", ["truncated", "changed", "not a net", "empty"])
def test_a_damaged_net_file_is_a_clear_error(tmp_path: Path, damage: str) -> None:
    text = dumps(build(random_float_net(8, seed=14), clamp=600).weights, {"data": "test"})
    path = tmp_path / "bad.net"
    if damage == "truncated":
        path.write_text(text[: len(text) * 2 // 3])
    elif damage == "changed":
        path.write_text(text.replace("\n1 ", "\n2 ", 1) if "\n1 " in text else text[:-3] + "9\n")
    elif damage == "not a net":
        path.write_text("hello\n")
    else:
        path.write_text("")
    with pytest.raises(NetworkError, match="bad.net"):
        load(path)


def test_eval_file_none_is_the_hand_written_evaluation_alone_and_a_missing_file_an_error(tmp_path: Path) -> None:
    assert resolve("") is default()
    assert resolve("none") is None and resolve("None") is None
    with pytest.raises(NetworkError, match="cannot read"):
        resolve(str(tmp_path / "missing.net"))


def test_the_net_changes_the_search_and_none_restores_the_hand_written_one() -> None:
    board = chess.Board("r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9")
    searcher = Searcher()
    searcher.network = default()
    with_net = searcher.search(board, (), Limits(depth=5), StopToken())
    plain = Searcher()
    plain.network = None
    without = plain.search(board, (), Limits(depth=5), StopToken())
    assert with_net.nodes != without.nodes


@pytest.mark.parametrize("units", [1, 3, 16, 128])
def test_the_packed_correction_is_the_lane_by_lane_sum_exactly(units: int) -> None:
    # The reference reads every lane on its own: clip it to [0, G], add the low block and the
    # mirrored high block, take sum(G) off. The packed evaluation (masks, folds, one modular
    # sum) must give the same integer for any width, odd lane counts included.
    network = build(random_float_net(units, seed=13, scale=0.5), clamp=10_000, inputs="mirror")
    gains = network.weights.ceiling_values()
    below = above = 0
    for board in random_positions(200, seed=14):
        acc = network.accumulate(board)
        values = [value - BIAS for value in lanes(acc, len(gains))]
        below += sum(value < 0 for value in values)
        above += sum(value > gain for value, gain in zip(values, gains))
        clipped = sum(min(max(value, 0), gain) for value, gain in zip(values, gains))
        diff = clipped - sum(network.weights.gains)
        expected = diff >> network.shift if diff >= 0 else -((-diff) >> network.shift)
        assert network.white_value(acc) == max(-network.clamp, min(network.clamp, expected))
    assert below and above  # both clips were exercised, not only the straight part


def test_pack_is_the_sum_of_each_value_shifted_to_its_lane() -> None:
    # The packing reads the values as 16-bit two's complement bytes, and falls back to adding
    # them one by one beyond that range: both must give the plain sum, whatever the signs.
    rng = random.Random(7)
    edges = [0, 1, -1, 32767, -32768, 32768, -32769, 65535, -65536, 1 << 20, -(1 << 20)]
    cases = [[], [-1], [32767, -32768], edges]
    cases += [[rng.choice(edges) if rng.random() < 0.1 else rng.randint(-32768, 32767) for _ in range(rng.randrange(300))]
              for _ in range(200)]
    for values in cases:
        assert pack(values) == sum(value << (LANE * index) for index, value in enumerate(values)), values


@pytest.mark.parametrize("kind", NETS)
def test_every_table_of_rows_packs_what_each_piece_adds(kind: str) -> None:
    # The tables are built as sums of each view's packed part (`_view_parts`): each entry must
    # be the packing of the piece's lane values under that table's flips.
    net = NETS[kind]()
    flips = ((0, 0), (0, 7), (7, 0), (7, 7)) if net.mirrored else ((0, 0),) * 4
    for state, (white_flip, black_flip) in enumerate(flips):
        for colour in chess.COLORS:
            for piece_type in chess.PIECE_TYPES:
                for square in chess.SQUARES:
                    expected = pack(net.weights.lane_values(colour, piece_type, square, white_flip, black_flip))
                    assert net.rows_by_state[state][colour][piece_type][square] == expected


def test_a_net_that_is_not_the_built_in_one_is_certified_when_it_is_read(tmp_path: Path) -> None:
    # Only the built-in net, certified by a test above, skips the lanes' bounds when it loads.
    weights = default().weights
    rows = list(weights.rows)
    king_on_e1 = (chess.KING - 1) * 64 + chess.E1  # an input every position has
    rows[king_on_e1] = tuple(value + (1 << VALUE_BITS) for value in rows[king_on_e1])
    unsound = Weights(weights.shift, weights.clamp, weights.positive, weights.gains, weights.biases, tuple(rows),
                      weights.inputs)
    path = tmp_path / "unsound.net"
    path.write_text(dumps(unsound, {}), encoding="utf-8")
    with pytest.raises(NetworkError, match="lane"):
        load(path)
