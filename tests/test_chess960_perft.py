"""perft on a set of Chess960 positions with their published node counts.

The positions are the first of the well-known Chess960 perft suite (the same list Stockfish
and python-chess test with): castling rights in Shredder-FEN, rooks and king off their usual
files, so king-takes-rook castling and its legality are exercised at every depth.
"""

from __future__ import annotations

import pytest

from cb_async.tools.perft import parse_position, perft

CHESS960 = [
    ("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", (21, 528, 12189)),
    ("2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 1 9", (21, 807, 18002)),
    ("b1q1rrkb/pppppppp/3nn3/8/P7/1PPP4/4PPPP/BQNNRKRB w GE - 1 9", (20, 479, 10471)),
    ("qbbnnrkr/2pp2pp/p7/1p2pp2/8/P3PP2/1PPP1KPP/QBBNNR1R w hf - 0 9", (22, 593, 13440)),
    ("1nbbnrkr/p1p1ppp1/3p4/1p3P1p/3Pq2P/8/PPP1P1P1/QNBBNRKR w HFhf - 0 9", (28, 1120, 31058)),
]


@pytest.mark.parametrize("fen,counts", CHESS960, ids=[f"960-{i + 1}" for i in range(len(CHESS960))])
def test_chess960_perft(fen: str, counts: tuple[int, ...]) -> None:
    board = parse_position(fen)
    assert board.chess960
    assert tuple(perft(board, depth) for depth in range(1, len(counts) + 1)) == counts
