"""The learned part of the evaluation: a 768 -> N -> 1 residual packed into one Python integer.

The evaluation is the hand-written one (PeSTO's tables and the pawn structure, `evaluation`)
plus a trained correction, clipped to +-`clamp` centipawns:

    nn(position) = sum_k v_k * (crelu(a_k(white)) - crelu(a_k(black)))

where `a_k(side)` is hidden unit k of a one-layer accumulator over 768 piece-square features
seen from `side` (own and their pieces, the board flipped for Black) and `crelu` clips to [0, 1].
One output weight serves both sides with opposite signs, so the correction is exactly
antisymmetric: a position and its colour mirror get opposite values, bit for bit.

Why one integer: CPython pays per operation, not per bit. The whole accumulator, both sides'
N units, lives in 2N lanes of 16 bits of one `int`, so a move updates it with two or three
additions and the evaluation is a dozen whole-integer operations, whatever N is, instead of
a Python loop over units. The packing (after sunfish's `nnue_4k`):

- lane = BIAS + G_k * a_k, with BIAS = 2^14 and G_k = round(2^shift * |v_k|): the output
  weight is folded into the rows, so the clipped ReLU is a clamp of each lane to [0, G_k]
  (a few masks, `Network.evaluator`) and the output needs no multiplication;
- units with v_k > 0 put their White lane in the low block and their Black lane in the high
  block, units with v_k < 0 the other way round, so that (sum of low lanes) - (sum of high
  lanes) = 2^shift * nn from White's point of view;
- the high block holds its lanes mirrored, BIAS + G_k - G_k * a_k (its rows negated), and the
  clamp commutes with the mirror (clamping G - x to [0, G] is G minus clamping x), so the sum of
  all 2N clamped lanes is (sum of low) + sum(G) - (sum of high): the output is that one sum less
  sum(G);
- the sum of all lanes is one reduction modulo 2^16 - 1 (2^16 = 1 there), exact while it stays
  below 2^16 - 1, which `sum(G) <= 32767` guarantees since a clamped lane never exceeds its G_k;
- bit 15 of each lane is a guard: every lane of a real position's accumulator stays in
  [0, 2^15), which `lane_bounds` proves over every placement of at most 16 pieces a side
  (intermediate sums may leave it: Python integers are exact).

Mirrored inputs (`inputs mirror` in the header): each side sees the board turned left to right
whenever its own king stands on the a- to d-files, so that its king is always on the e- to
h-side of what it sees. A king on g1 and one on b1 then read the pieces around them alike,
which a net of this size learns far better than two unrelated pictures (the loss on cb-async's
positions falls by a quarter more than without). What a piece adds then depends on which half
each king is in: four tables of rows, one per pair of halves. The pair is kept in the bits
above the lanes (`state_shift`), where the lane arithmetic never reaches, so the search reads
which table to use from the accumulator it already carries, and rebuilds the accumulator from
scratch only when a king crosses between the d- and e-files. Turning the board is a
permutation of the squares (pawns stay on their ranks), so each lane takes the same values as
without it and `lane_bounds` holds unchanged.

A net file is text: a header of `key value` lines (the shape, and where the net came from),
a line `---`, then the integers. It is checked whole when it is read (its SHA-256, its shape,
the lane bound): a damaged file is an error, never a silently different evaluation.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chess

FORMAT = "cb-async-net 1"
LANE = 16
VALUE_BITS = LANE - 1
BIAS = 1 << (VALUE_BITS - 1)
#: The largest sum of gains: both blocks' clamped lanes, each at most its gain, then add up to
#: at most 2 * 32,767 = 65,534, which the reduction modulo 2^16 - 1 reads exactly.
MAX_GAIN_SUM = (1 << (LANE - 1)) - 1
FEATURES = 768
#: The net shipped in the package, the `EvalFile` option's default.
DEFAULT_NAME = "default.net"

#: At most this many pieces of each type a side (promotions included), and 15 besides the king.
_TYPE_CAPS = {chess.PAWN: 8, chess.KNIGHT: 10, chess.BISHOP: 10, chess.ROOK: 10, chess.QUEEN: 9}
_OTHERS_CAP = 15


class NetworkError(Exception):
    """A net file that cannot be used: unreadable, damaged, or not a net."""


#: The `inputs` of a net file: the board as each side sees it, or turned so its king is on the right.
PLAIN = "plain"
MIRROR = "mirror"
INPUTS = (PLAIN, MIRROR)


def feature(own: bool, piece_type: int, square: int) -> int:
    """The input index of a piece seen from one side: own pieces first, the square as that
    side sees the board (flipped vertically for Black)."""
    return ((0 if own else 6) + piece_type - 1) * 64 + square


def file_flip(board: chess.Board, colour: bool) -> int:
    """What `colour`'s view XORs into a square's file under mirrored inputs: 7 (a <-> h) when
    its king is on the a- to d-files, else 0."""
    king = board.king(colour)
    return 7 if king is not None and king & 7 < 4 else 0


def features(board: chess.Board, white_view: bool, inputs: str = PLAIN) -> list[int]:
    """The active inputs of `board` seen from White (or from Black)."""
    flip = (0 if white_view else 56) ^ (file_flip(board, white_view) if inputs == MIRROR else 0)
    found = []
    for square, piece in board.piece_map().items():
        own = piece.color == white_view
        found.append(feature(own, piece.piece_type, square ^ flip))
    return found


@dataclass(frozen=True)
class Weights:
    """A net as integers, before packing: what a net file holds.

    Units are ordered with the positive output weights first (`positive` of them). For unit k,
    `gains[k]` = G_k, `biases[k]` = G_k * b_k rounded, `rows[f][k]` = G_k * W[f][k] rounded."""

    shift: int
    clamp: int
    positive: int
    gains: tuple[int, ...]
    biases: tuple[int, ...]
    rows: tuple[tuple[int, ...], ...]
    inputs: str = PLAIN

    @property
    def units(self) -> int:
        return len(self.gains)

    def lane_values(self, colour: bool, piece_type: int, square: int, white_flip: int = 0,
                    black_flip: int = 0) -> list[int]:
        """The 2N lane values a piece adds: block 0, then block 1 mirrored (negated). The flips
        are what each side's view XORs into the square (`file_flip`): 0 for plain inputs."""
        white = self.rows[feature(colour == chess.WHITE, piece_type, square ^ white_flip)]
        black = self.rows[feature(colour == chess.BLACK, piece_type, square ^ 56 ^ black_flip)]
        p = self.positive
        return [*white[:p], *black[p:], *(-value for value in black[:p]), *(-value for value in white[p:])]

    def base_values(self) -> list[int]:
        return ([BIAS + bias for bias in self.biases]
                + [BIAS + gain - bias for gain, bias in zip(self.gains, self.biases)])

    def ceiling_values(self) -> list[int]:
        return list(self.gains) * 2


def pack(values: list[int]) -> int:
    """Lane values (any sign) into one integer: lane i at bit 16 i. The sum of `value << 16 i`,
    built in C, since a net's rows are packed each time a process loads it, before its first
    search: the values as little-endian 16-bit two's complement, read as one unsigned integer,
    count each negative lane as `value + 2 ** 16`; its sign bit (bit 15 of the lane) says which,
    and shifted up by one it is the `2 ** 16` to take back from the lane above."""
    try:
        signed = array("h", values)
    except OverflowError:  # a value beyond 16 signed bits: add it in its place, one by one
        packed = 0
        for index, value in enumerate(values):
            packed += value << (LANE * index)
        return packed
    if sys.byteorder == "big":
        signed.byteswap()
    raw = int.from_bytes(signed.tobytes(), "little")
    return raw - ((raw & _sign_bits(len(values))) << 1)


@functools.cache
def _sign_bits(count: int) -> int:
    """Bit 15 of each of `count` lanes."""
    return int.from_bytes(b"\x00\x80" * count, "little")


def lanes(packed: int, count: int) -> list[int]:
    mask = (1 << LANE) - 1
    return [(packed >> (LANE * index)) & mask for index in range(count)]


def lane_bounds(weights: Weights) -> list[tuple[int, int]]:
    """For each lane, the least and greatest value it can take on a board with at most one king,
    eight pawns (on ranks 2 to 7), nine queens, ten of each minor piece and rook, and 15 pieces
    besides the king, of each colour: a superset of the legal positions, so a bound that
    holds here holds in every game. Per colour, the extreme is the king's extreme plus the best
    15 of the other pieces' values under the per-type caps (a greedy choice is optimal for
    nested caps like these)."""
    count = 2 * weights.units
    by_piece: dict[tuple[bool, int], list[list[int]]] = {}
    for colour in chess.COLORS:
        for piece_type in chess.PIECE_TYPES:
            squares = chess.SQUARES if piece_type != chess.PAWN else range(8, 56)
            by_piece[colour, piece_type] = [weights.lane_values(colour, piece_type, square) for square in squares]
    bounds = []
    for lane in range(count):
        low = high = weights.base_values()[lane]
        for colour in chess.COLORS:
            kings = [values[lane] for values in by_piece[colour, chess.KING]]
            others = []
            for piece_type, cap in _TYPE_CAPS.items():
                column = sorted(values[lane] for values in by_piece[colour, piece_type])
                others.append((piece_type, cap, column))
            high += max(kings) + _best(others, _OTHERS_CAP, reverse=True)
            low += min(kings) + _best(others, _OTHERS_CAP, reverse=False)
        bounds.append((low, high))
    return bounds


def _best(columns: list[tuple[int, int, list[int]]], total: int, reverse: bool) -> int:
    """The largest (or, without `reverse`, smallest) sum of at most `total` values, at most `cap`
    from each column, counting only values that help (positive for the largest)."""
    pool: list[int] = []
    for _, cap, column in columns:
        chosen = column[-cap:] if reverse else column[:cap]
        pool.extend(value for value in chosen if (value > 0 if reverse else value < 0))
    pool.sort(reverse=reverse)
    return sum(pool[:total])


def certify(weights: Weights) -> None:
    """Raise NetworkError unless the packed evaluation of `weights` is exact on every position:
    the ceilings' sum within the modular reduction's range, every lane inside its guard."""
    check_shape(weights)
    for lane, (low, high) in enumerate(lane_bounds(weights)):
        if low < 0 or high >= 1 << VALUE_BITS:
            raise NetworkError(f"lane {lane} can reach [{low}, {high}], outside [0, {1 << VALUE_BITS})")


def check_shape(weights: Weights) -> None:
    """Raise NetworkError unless `weights` has the shape of a net: `certify` less the lanes'
    bounds, which take a third of a net's loading time."""
    if not weights.units or not 0 <= weights.positive <= weights.units or len(weights.rows) != FEATURES:
        raise NetworkError("the net's shape is wrong")
    if weights.inputs not in INPUTS:
        raise NetworkError(f"the net's inputs are {weights.inputs!r}, not one of {', '.join(INPUTS)}")
    if any(len(row) != weights.units for row in weights.rows):
        raise NetworkError("a row of the net has the wrong length")
    if any(gain <= 0 for gain in weights.gains):
        raise NetworkError("a gain of the net is not positive")
    if sum(weights.gains) > MAX_GAIN_SUM:
        raise NetworkError(f"the gains add up to {sum(weights.gains)}, more than {MAX_GAIN_SUM}")


class Network:
    """A certified net, packed: `accumulate` a board, `update` per move, `evaluate`."""

    def __init__(self, weights: Weights, header: dict[str, str] | None = None, certified: bool = False) -> None:
        """`certified`: `weights` are known to pass `certify` (the built-in net, which a test
        certifies), so only their shape is checked here: every search process loads the net
        before it is ready, and a net sent by a user is certified in full."""
        if certified:
            check_shape(weights)
        else:
            certify(weights)
        self.weights = weights
        self.header = dict(header or {})
        units = weights.units
        count = 2 * units
        self.shift = weights.shift
        self.clamp = weights.clamp
        self.mirrored = weights.inputs == MIRROR
        #: Where the accumulator keeps which half each king is in (`state`), above every lane.
        self.state_shift = LANE * count
        #: rows_by_state[state][colour][piece type][square]: what a piece there adds to the
        #: accumulator, for each pair of king halves (all four alike for plain inputs).
        white_parts, black_parts = self._view_parts()
        self.rows_by_state: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
            self._rows(white_parts, black_parts, white_flip, black_flip) if self.mirrored
            else self._rows(white_parts, black_parts, 0, 0)
            for white_flip, black_flip in ((0, 0), (0, 7), (7, 0), (7, 7))
        )
        self.base = pack(weights.base_values())
        self.gain_sum = sum(weights.gains)
        every = pack([1] * count)
        self.guard = every << VALUE_BITS
        self.low = every * BIAS
        #: Each lane's gain G_k (its ceiling), with the guard bit set.
        self.ceilings_guarded = pack(weights.ceiling_values()) | self.guard
        #: The correction from White's point of view of an accumulator: what the search calls.
        self.white_value = self.evaluator()

    def _view_parts(self) -> tuple[list[int], list[int]]:
        """Each input's row packed as White's view places it and as Black's view places it.
        `lane_values` puts a white-view row in lanes [0, p) and, negated, [N + p, 2N), and a
        black-view row in [p, N) and, negated, [N, N + p); packing is linear, so a piece's
        packed row is the sum of its two views' parts, and the four tables of mirrored inputs
        are sums of the same 2 x 768 parts: packed once each, not once per table and square."""
        weights = self.weights
        p = weights.positive
        units = weights.units
        white_parts = []
        black_parts = []
        for row in weights.rows:
            low, high = row[:p], row[p:]
            white_parts.append(pack([*low, *([0] * (units - p)), *([0] * p), *(-value for value in high)]))
            black_parts.append(pack([*([0] * p), *high, *(-value for value in low), *([0] * (units - p))]))
        return white_parts, black_parts

    def _rows(self, white_parts: list[int], black_parts: list[int], white_flip: int,
              black_flip: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
        """rows[colour][piece type][square] for one pair of flips (see `file_flip`): what
        `pack(weights.lane_values(colour, piece_type, square, white_flip, black_flip))` is."""
        return tuple(
            ((),) + tuple(
                tuple(white_parts[feature(colour == chess.WHITE, piece_type, square ^ white_flip)]
                      + black_parts[feature(colour == chess.BLACK, piece_type, square ^ 56 ^ black_flip)]
                      for square in chess.SQUARES)
                for piece_type in chess.PIECE_TYPES
            )
            for colour in (chess.BLACK, chess.WHITE)
        )

    def state(self, board: chess.Board) -> int:
        """Which table of rows serves `board`: 2 if White's king is on the a- to d-files, plus 1
        if Black's is; always 0 for plain inputs."""
        if not self.mirrored:
            return 0
        return (2 if file_flip(board, chess.WHITE) else 0) | (1 if file_flip(board, chess.BLACK) else 0)

    def accumulate(self, board: chess.Board) -> int:
        """The accumulator of a whole board, its state above the lanes: the start of the
        incremental chain, and what the search builds again when a king changes half."""
        state = self.state(board)
        rows = self.rows_by_state[state]
        acc = self.base + (state << self.state_shift)
        # Straight from the bitboards: `piece_map` builds a dict of objects and costs three
        # quarters of the time, and the search rebuilds thousands of times a second.
        for colour in chess.COLORS:
            ours = board.occupied_co[colour]
            table = rows[colour]
            for piece_type, pieces in ((1, board.pawns), (2, board.knights), (3, board.bishops),
                                       (4, board.rooks), (5, board.queens), (6, board.kings)):
                row = table[piece_type]
                left = pieces & ours
                while left:
                    low = left & -left
                    acc += row[low.bit_length() - 1]
                    left ^= low
        return acc

    def evaluator(self) -> Callable[[int], int]:
        """`white_value(acc)`: the correction in centipawns from White's point of view, clipped,
        rounded toward zero so that a position and its mirror get exactly opposite values.

        Each lane's clipped ReLU is min(max(v - BIAS, 0), G): with the guard bit set beforehand
        no lane borrows from its neighbour, so `t` has bit 15 of a lane set exactly when
        v >= BIAS and below it v - BIAS; `d` likewise has it set exactly when that is at most G,
        and below it G minus it. The clipped lane is G less what `d` keeps, so the sum of all
        clipped lanes is sum(G) less the sum of `r`'s lanes (the output is that sum less
        sum(G) / 2). The lane sum is taken modulo 2^16 - 1, which divides 2^(16k) - 1 for every
        k: three folds of the upper half onto the lower one keep it and leave the slow division
        an eighth of the integer. A closure over its constants: the search calls it at nearly
        every node, and local reads cost less than a method's attribute reads."""
        low, guard, guarded = self.low, self.guard, self.ceilings_guarded
        ones = (1 << VALUE_BITS) - 1
        modulus = (1 << LANE) - 1
        offset, shift, clamp = self.gain_sum, self.shift, self.clamp
        lanes_left = len(self.weights.gains) * 2
        folds = []
        for _ in range(3):
            lanes_left = (lanes_left + 1) // 2
            folds.append(LANE * lanes_left)
        fold1, fold2, fold3 = folds
        mask1, mask2, mask3 = ((1 << bits) - 1 for bits in folds)

        def white_value(acc: int) -> int:
            t = (acc | guard) - low
            d = guarded - (t & ((t & guard) >> VALUE_BITS) * ones)
            r = d & ((d & guard) >> VALUE_BITS) * ones
            r = (r & mask1) + (r >> fold1)
            r = (r & mask2) + (r >> fold2)
            r = (r & mask3) + (r >> fold3)
            diff = offset - r % modulus
            value = diff >> shift if diff >= 0 else -((-diff) >> shift)
            return clamp if value > clamp else -clamp if value < -clamp else value

        return white_value

    def evaluate(self, board: chess.Board) -> int:
        """The correction for the side to move, from scratch (the reference the search's
        incremental accumulators are checked against)."""
        value = self.white_value(self.accumulate(board))
        return value if board.turn else -value


# -- the file --------------------------------------------------------------------------------


def dumps(weights: Weights, header: dict[str, str]) -> str:
    """The text of a net file."""
    body_lines = [
        "gains " + " ".join(map(str, weights.gains)),
        "biases " + " ".join(map(str, weights.biases)),
        *(" ".join(map(str, row)) for row in weights.rows),
    ]
    body = "\n".join(body_lines) + "\n"
    fields = {
        **header,
        "units": str(weights.units),
        "positive": str(weights.positive),
        "shift": str(weights.shift),
        "clamp": str(weights.clamp),
        "inputs": weights.inputs,
        "sha256": hashlib.sha256(body.encode()).hexdigest(),
    }
    for key, value in fields.items():
        if not key or any(c.isspace() for c in key) or "\n" in value:
            raise ValueError(f"bad header field {key!r}")
    head = [FORMAT, *(f"{key} {value}" for key, value in fields.items()), "---"]
    return "\n".join(head) + "\n" + body


def loads(text: str, source: str = "the net", certified: bool = False) -> Network:
    """A Network from a net file's text; NetworkError (naming `source`) if it is not a whole,
    sound net. `certified` as for `Network`."""
    head, separator, body = text.partition("\n---\n")
    lines = head.split("\n")
    if lines[0] != FORMAT or not separator:
        raise NetworkError(f"{source} is not a cb-async net file (it should start with '{FORMAT}')")
    header: dict[str, str] = {}
    for line in lines[1:]:
        key, _, value = line.partition(" ")
        header[key] = value
    if hashlib.sha256(body.encode()).hexdigest() != header.get("sha256"):
        raise NetworkError(f"{source} is damaged or truncated (its SHA-256 does not match its header)")
    try:
        units = int(header["units"])
        rows_text = body.rstrip("\n").split("\n")
        gains = tuple(int(word) for word in rows_text[0].removeprefix("gains ").split())
        biases = tuple(int(word) for word in rows_text[1].removeprefix("biases ").split())
        rows = tuple(tuple(int(word) for word in line.split()) for line in rows_text[2:])
        weights = Weights(int(header["shift"]), int(header["clamp"]), int(header["positive"]), gains, biases, rows,
                          header.get("inputs", PLAIN))
    except (KeyError, ValueError) as error:
        raise NetworkError(f"{source} is not a sound net: {error}") from None
    if len(gains) != units or len(biases) != units:
        raise NetworkError(f"{source} is not a sound net: {units} units but {len(gains)} gains")
    try:
        return Network(weights, header, certified)
    except NetworkError as error:
        raise NetworkError(f"{source}: {error}") from None


def load(path: str | Path) -> Network:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise NetworkError(f"cannot read the net {path}: {getattr(error, 'strerror', None) or error}") from None
    return loads(text, str(path))


_default: Network | None = None


def default() -> Network:
    """The net shipped with the package (read once per process)."""
    global _default
    if _default is None:
        from importlib import resources  # here, not at import: the host never reads a net

        text = resources.files("cb_async").joinpath(f"data/{DEFAULT_NAME}").read_text(encoding="utf-8")
        _default = loads(text, f"the built-in net ({DEFAULT_NAME})", certified=True)
    return _default
