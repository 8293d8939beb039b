"""The fork charge of the quiescence search's stand-pat (`threats.forked`)."""

from __future__ import annotations

import chess

from cb_async.search.threats import MOST, VALUE, SHARE, forked


def test_a_pawn_fork_of_two_minor_pieces_costs_the_side_to_move_a_share_of_one() -> None:
    board = chess.Board("4k3/8/8/3n1b2/4P3/8/8/4K3 b - - 0 1")
    assert forked(board) == VALUE[chess.KNIGHT] // SHARE
    # The same position with White to move: the fork is White's, no charge for White.
    board.turn = chess.WHITE
    assert forked(board) == 0


def test_one_threatened_piece_or_an_even_attacker_costs_nothing() -> None:
    assert forked(chess.Board("4k3/8/8/3n4/4P3/8/8/4K3 b - - 0 1")) == 0
    # A knight attacking a knight and a bishop: not worth less than either.
    assert forked(chess.Board("4k3/8/2n5/8/3N4/8/2b5/4K3 b - - 0 1")) == 0


def test_a_knight_fork_of_queen_and_rook_charges_for_the_rook_and_mirrors() -> None:
    board = chess.Board("4k3/2q1r3/8/3N4/8/8/8/4K3 b - - 0 1")
    assert forked(board) == VALUE[chess.ROOK] // SHARE <= MOST
    assert forked(board.mirror()) == forked(board)


def test_a_rook_attacks_a_queen_but_not_a_rook() -> None:
    board = chess.Board("4k3/8/8/8/1r2q3/8/1Q6/1R2K3 w - - 0 1")
    # The rook on b4 attacks the queen on b2; their queen attacks the rook on b1, but a queen
    # is worth more than a rook: one threat, no charge.
    assert forked(board) == 0
    board = chess.Board("4k3/8/8/1r6/8/3p4/1Q2N3/4K3 w - - 0 1")
    # The pawn on d3 takes the knight on e2 and the rook on b5 the queen on b2.
    assert forked(board) == VALUE[chess.KNIGHT] // SHARE
