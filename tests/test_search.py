"""The search core: mates, draws, MultiPV, each limit, and the stop token.

No sleeps: searches are bounded by limits, and the helper threads wait on events the search
itself triggers through `on_info`.
"""

from __future__ import annotations

import threading
import time

import chess
import pytest

from cb_async.limits import MAX_DEPTH, Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.search import Searcher, StopToken, history_keys
from cb_async.search.eval_file import resolve as resolve_network
from cb_async.search.searcher import POLL_MASK, position_key
from cb_async.timeman import stop_token

MIDDLEGAME = "r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9"


def run(board: chess.Board | str, limits: Limits, history: tuple = (), stop: StopToken | None = None,
        infos: list[SearchInfo] | None = None) -> SearchResult:
    if isinstance(board, str):
        board = chess.Board(board)
    sink = infos.append if infos is not None else None
    return Searcher().search(board, history, limits, stop or stop_token(limits, board.turn), sink)


def assert_consistent(board: chess.Board, result: SearchResult) -> None:
    """best_move legal and first in the PV, PV legal, ponder legal after best."""
    assert result.best_move is not None
    assert board.is_legal(result.best_move)
    assert result.pv[0] == result.best_move
    copy = board.copy()
    for move in result.pv:
        assert copy.is_legal(move), (copy.fen(), move)
        copy.push(move)
    if result.ponder_move is not None:
        after = board.copy()
        after.push(result.best_move)
        assert after.is_legal(result.ponder_move)


# -- mates and terminal roots -----------------------------------------------------------------

MATES = [
    ("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", 1, "d1d8"),
    ("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", 2, "a1a6"),
    ("r1b2k1r/ppp1bppp/8/1B1Q4/5q2/2P5/PPP2PPP/R3R1K1 w - - 1 1", 2, "d5d8"),
    ("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", 3, "f6a6"),
]


@pytest.mark.parametrize(("fen", "moves", "best"), MATES)
def test_mate_is_found_with_its_distance(fen: str, moves: int, best: str) -> None:
    board = chess.Board(fen)
    result = run(board, Limits(depth=2 * moves + 1))
    assert result.best_move == chess.Move.from_uci(best)
    assert result.score == Score(mate=moves)
    assert_consistent(board, result)


@pytest.mark.parametrize("eval_file", ["", "none"])
def test_a_side_with_a_lone_minor_piece_is_not_given_a_null_move(eval_file: str) -> None:
    # After Ra6 Black, up a rook, has only a bishop and pawns, and every move it has loses:
    # bxa6 allows b7 mate, a bishop move Rxa7 mate. A pass would lose nothing, so a null move
    # there fails high and Ra6 is never searched: the learned evaluation, which rates Black's
    # position well enough to try it, missed this mate in two at every depth.
    board = chess.Board("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1")
    searcher = Searcher()
    searcher.network = resolve_network(eval_file)
    limits = Limits(depth=5)
    result = searcher.search(board, (), limits, stop_token(limits, board.turn), None)
    assert (result.best_move, result.score) == (chess.Move.from_uci("a1a6"), Score(mate=2))


@pytest.mark.parametrize(("fen", "moves", "best"), MATES)
def test_a_mate_stays_found_at_greater_depths(fen: str, moves: int, best: str) -> None:
    # Pruning that trusts a bound from a shallow search can hide a mate at every later
    # iteration (a capture that looked winning, with the mate behind it never searched again):
    # a deeper search must find what a shallower one did.
    for depth in range(2 * moves + 2, 2 * moves + 5):
        result = run(chess.Board(fen), Limits(depth=depth))
        assert (result.best_move, result.score) == (chess.Move.from_uci(best), Score(mate=moves)), depth


def test_being_mated_scores_negative_mate() -> None:
    # After 1.Ra6 every black move allows mate next move.
    result = run("kbK5/pp6/RP6/8/8/8/8/8 b - - 1 1", Limits(depth=4))
    assert result.score == Score(mate=-1)


def test_checkmated_root() -> None:
    result = run("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3", Limits(depth=3))
    assert result.best_move is None and result.ponder_move is None
    assert result.score == Score(mate=0)
    assert result.depth == 0


def test_stalemated_root() -> None:
    result = run("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", Limits(depth=3))
    assert result.best_move is None
    assert result.score == Score(cp=0)
    assert result.depth == 0


def test_stalemate_inside_the_tree_is_a_draw() -> None:
    # Black's queen sacrifice forces stalemate (...Qg2+ Kxg2 stalemate) or mate follows.
    result = run("7k/5Q2/5K2/8/8/8/8/6q1 b - - 0 1", Limits(depth=4))
    assert result.score.mate is None


# -- draws -----------------------------------------------------------------------------------

def test_fifty_move_rule_draws() -> None:
    assert run("8/8/8/4k3/8/8/8/R3K3 w - - 99 80", Limits(depth=4)).score == Score(cp=0)
    assert run("8/8/8/4k3/8/8/8/R3K3 w - - 0 80", Limits(depth=4)).score.cp > 300


def test_mate_on_the_hundredth_half_move_still_counts() -> None:
    assert run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 99 80", Limits(depth=3)).score == Score(mate=1)


def _shuffled_kings() -> chess.Board:
    """Black (a queen down) to move, after both kings shuffled twice: g8h8 repeats a third time."""
    board = chess.Board("6k1/8/8/8/8/8/3Q4/6K1 b - - 0 1")
    for uci in ["g8h8", "g1h1", "h8g8", "h1g1"] * 2:
        board.push_uci(uci)
    return board


def test_repetition_through_history_is_a_draw() -> None:
    board = _shuffled_kings()
    result = run(board, Limits(depth=4), history=history_keys(board))
    assert result.score == Score(cp=0)
    assert result.best_move == chess.Move.from_uci("g8h8")


def test_without_history_the_same_position_is_lost() -> None:
    assert run(_shuffled_kings(), Limits(depth=4)).score.cp < -500


def test_insufficient_material_is_a_draw() -> None:
    result = run("8/8/4k3/8/8/3NK3/8/8 w - - 0 1", Limits(depth=3))
    assert result.score == Score(cp=0)


def test_history_keys_stop_at_the_last_irreversible_move() -> None:
    board = chess.Board()
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6", "f3g1"]:
        board.push_uci(uci)
    keys = history_keys(board)
    assert len(keys) == board.halfmove_clock == 3
    replay = chess.Board()
    for uci in ["e2e4", "e7e5"]:
        replay.push_uci(uci)
    assert keys[0] == position_key(replay)


def test_the_callers_board_is_not_modified() -> None:
    board = chess.Board()
    board.push_uci("e2e4")
    before = (board.fen(), list(board.move_stack))
    run(board, Limits(depth=3))
    assert (board.fen(), list(board.move_stack)) == before


# -- MultiPV and search_moves ----------------------------------------------------------------

def test_multipv_lines_are_distinct_ordered_and_reported_together() -> None:
    infos: list[SearchInfo] = []
    board = chess.Board(MIDDLEGAME)
    result = run(board, Limits(depth=4, multipv=3), infos=infos)
    assert [info.multipv for info in infos] == [1, 2, 3] * 4
    assert [info.depth for info in infos] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]
    lines = result.lines
    assert [line.multipv for line in lines] == [1, 2, 3]
    assert len({line.pv[0] for line in lines}) == 3
    cps = [line.score.cp for line in lines]
    assert cps == sorted(cps, reverse=True)
    assert result.best_move == lines[0].pv[0]
    for line in lines:
        assert_consistent(board, SearchResult(line.pv[0], None, line.score, 4, 4, 0, 0, line.pv))


@pytest.mark.parametrize("fen", [MIDDLEGAME, "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"])
def test_every_depth_s_multipv_lines_come_best_first(fen: str) -> None:
    # A later line's search can outscore an earlier one's (the table and the reductions differ
    # from search to search); the lines are still reported best first at every depth.
    infos: list[SearchInfo] = []
    run(chess.Board(fen), Limits(depth=6, multipv=3), infos=infos)
    for depth in range(1, 7):
        cps = [info.score.cp for info in infos if info.depth == depth]
        assert len(cps) == 3 and None not in cps
        assert cps == sorted(cps, reverse=True), (depth, cps)  # type: ignore[type-var]


def test_multipv_is_clamped_to_the_legal_moves() -> None:
    result = run("7k/8/8/8/8/8/8/K7 w - - 0 1", Limits(depth=2, multipv=10))
    assert len(result.lines) == 3


def test_search_moves_restrict_the_root() -> None:
    allowed = (chess.Move.from_uci("a2a3"), chess.Move.from_uci("h2h3"))
    result = run(chess.Board(), Limits(depth=3, search_moves=allowed, multipv=2))
    assert result.best_move in allowed
    assert {line.pv[0] for line in result.lines} == set(allowed)


def test_infos_are_complete() -> None:
    infos: list[SearchInfo] = []
    run(chess.Board(MIDDLEGAME), Limits(depth=3), infos=infos)
    assert [info.depth for info in infos] == [1, 2, 3]
    assert all(info.seldepth >= info.depth and info.tbhits == 0 for info in infos)
    nodes = [info.nodes for info in infos]
    assert nodes == sorted(nodes) and nodes[0] > 0


# -- limits ----------------------------------------------------------------------------------

def test_depth_is_exact() -> None:
    infos: list[SearchInfo] = []
    result = run(chess.Board(MIDDLEGAME), Limits(depth=5), infos=infos)
    assert result.depth == 5
    assert infos[-1].depth == 5
    assert_consistent(chess.Board(MIDDLEGAME), result)


def test_nodes_limit_within_one_polling_interval() -> None:
    result = run(chess.Board(MIDDLEGAME), Limits(nodes=3000))
    assert 3000 <= result.nodes <= 3000 + POLL_MASK + 1
    assert_consistent(chess.Board(MIDDLEGAME), result)


def test_mate_limit_stops_once_the_mate_is_proven() -> None:
    result = run("r5rk/5p1p/5R2/4B3/8/8/7P/7K w - - 0 1", Limits(mate=3))
    assert result.score == Score(mate=3)
    assert result.depth < 12


def test_movetime_ends_the_search() -> None:
    start = time.monotonic()
    result = run(chess.Board(MIDDLEGAME), Limits(movetime=300))
    elapsed = time.monotonic() - start
    assert 0.15 <= elapsed < 0.6
    assert_consistent(chess.Board(MIDDLEGAME), result)


def test_the_search_keeps_the_clock_budget_on_its_token() -> None:
    limits = Limits(white_clock=3000, black_clock=3000)
    stop = stop_token(limits, chess.WHITE)
    start = time.monotonic()
    run(chess.Board(MIDDLEGAME), limits, stop=stop)
    assert stop.has_deadline
    assert time.monotonic() - start < 3.0 - 0.03


def test_without_deadlines_on_its_token_a_clock_is_no_time_limit() -> None:
    """Time belongs to the caller: the search core budgets nothing itself."""
    result = run(chess.Board(MIDDLEGAME), Limits(white_clock=1, black_clock=1, depth=3), stop=StopToken())
    assert result.depth == 3


def test_infinite_search_returns_at_the_maximum_depth() -> None:
    result = run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", Limits(infinite=True))
    assert result.depth == MAX_DEPTH
    assert result.score == Score(mate=1)


def test_pondering_limits_stop_at_their_depth() -> None:
    limits = Limits(movetime=10, white_clock=10, black_clock=10, depth=4).pondering()
    stop = StopToken()
    result = run(chess.Board(MIDDLEGAME), limits, stop=stop)
    assert result.depth == 4
    assert not stop.has_deadline


def test_stopped_before_depth_one_still_returns_a_legal_move() -> None:
    stop = StopToken()
    stop.set()
    board = chess.Board(MIDDLEGAME)
    result = run(board, Limits(), stop=stop)
    assert result.depth == 0
    assert result.best_move is not None and board.is_legal(result.best_move)
    assert result.pv == (result.best_move,)


def _stopped_from_a_thread(act: "callable[[StopToken], None]") -> tuple[SearchResult, float]:
    """Search without limit; once depth 3 is reported, `act` on the token from another thread.

    Returns the result and the seconds between the act and the search's return.
    """
    stop = StopToken()
    reached = threading.Event()
    acted_at: list[float] = []

    def on_info(info: SearchInfo) -> None:
        if info.depth >= 3:
            reached.set()

    def stopper() -> None:
        reached.wait(30)
        act(stop)
        acted_at.append(time.monotonic())

    thread = threading.Thread(target=stopper)
    thread.start()
    result = Searcher().search(chess.Board(MIDDLEGAME), (), Limits(), stop, on_info)
    returned_at = time.monotonic()
    thread.join()
    return result, returned_at - acted_at[0]


def test_stop_token_ends_the_search_within_milliseconds() -> None:
    result, latency = _stopped_from_a_thread(lambda stop: stop.set())
    assert latency < 0.05
    assert result.depth >= 3
    assert_consistent(chess.Board(MIDDLEGAME), result)


def test_hard_deadline_set_mid_search_stops_it() -> None:
    def deadline_now(stop: StopToken) -> None:
        now = time.monotonic()
        stop.set_deadlines(now, now)

    result, latency = _stopped_from_a_thread(deadline_now)
    assert latency < 0.05
    assert result.depth >= 3


def test_tt_persists_and_new_game_clears_it() -> None:
    searcher = Searcher(hash_mb=1)
    searcher.search(chess.Board(MIDDLEGAME), (), Limits(depth=4), StopToken())
    assert searcher.hashfull() > 0
    searcher.new_game()
    assert searcher.hashfull() == 0
    searcher.search(chess.Board(MIDDLEGAME), (), Limits(depth=3), StopToken())
    searcher.set_hash_size(2)
    assert searcher.hashfull() == 0


def test_chess960_castling_is_searched_as_king_takes_rook() -> None:
    board = chess.Board("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1", chess960=True)
    result = run(board, Limits(depth=3, multipv=40))
    castles = {line.pv[0] for line in result.lines if board.is_castling(line.pv[0])}
    assert castles == {chess.Move.from_uci("e1h1"), chess.Move.from_uci("e1a1")}
    assert_consistent(board, result)


# -- the search's own move making and capture generation ----------------------------------

def _random_positions(games: int, seed: int) -> "list[chess.Board]":
    import random

    rng = random.Random(seed)
    boards = []
    for game in range(games):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if game % 2 else chess.Board()
        board.chess960 = bool(game % 2)
        for _ in range(120):
            moves = list(board.legal_moves)
            if not moves:
                break
            boards.append(board.copy(stack=False))
            board.push(rng.choice(moves))
    return boards


def _state(board: chess.Board) -> tuple:
    return (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        tuple(board.occupied_co), board.occupied, board.promoted, board.turn, board.castling_rights,
        board.ep_square, board.halfmove_clock, board.fullmove_number,
    )


def test_castling_rights_the_position_cannot_use_change_nothing() -> None:
    """A FEN may grant rights with no rook or king on their squares. `push` cleans them before
    every move and `play` keeps what it is given, so the search cleans its root's once: it
    searches such a position exactly as the same position with its rights cleaned, and leaves
    the caller's board as it was."""
    fen = "r3k3/pppq4/8/8/8/8/3Q1PPP/4K3 w KQkq - 0 1"  # no white rooks, no black h-rook
    board = chess.Board(fen)
    cleaned = chess.Board(fen)
    cleaned.castling_rights = cleaned.clean_castling_rights()
    granted = board.castling_rights
    assert cleaned.castling_rights != granted
    for depth in (3, 5):
        dirty, clean = run(board, Limits(depth=depth)), run(cleaned, Limits(depth=depth))
        assert (dirty.best_move, dirty.score, dirty.nodes) == (clean.best_move, clean.score, clean.nodes)
        assert dirty.pv == clean.pv
        assert_consistent(board, dirty)
    assert board.castling_rights == granted


def test_play_matches_push_and_the_evaluation() -> None:
    from cb_async.search.evaluation import evaluate_from_scratch
    from cb_async.search.play import play

    for board in _random_positions(12, seed=7):
        before = _state(board)
        start = evaluate_from_scratch(board)
        for move in list(board.legal_moves):
            reference = board.copy(stack=False)
            reference.push(move)
            delta = play(board, move)
            assert _state(board) == _state(reference), (board.fen(), move)
            assert tuple(a + b for a, b in zip(start, delta)) == evaluate_from_scratch(board)
            board.pop()
            assert _state(board) == before


def test_quiescence_captures_match_python_chess() -> None:
    from cb_async.search.captures import captures
    from cb_async.search.searcher import ORDER_VALUE

    for board in _random_positions(12, seed=11):
        expected = {
            move for move in board.generate_pseudo_legal_captures()
            if not board.is_en_passant(move) and move.promotion in (None, chess.QUEEN)
        }
        found = captures(board, 0, ORDER_VALUE)
        assert {move for _, move, _, _ in found} == expected
        assert len(found) == len(expected)
        for _, move, attacker, victim in found:
            assert board.piece_type_at(move.from_square) == attacker
            assert board.piece_type_at(move.to_square) == victim
        keys = [key for key, _, _, _ in found]
        assert keys == sorted(keys, reverse=True)


def test_quiescence_captures_under_a_bound_are_those_worth_it_in_the_same_order() -> None:
    """The bound leaves out the victims worth less, promotions aside, and moves nothing else."""
    from cb_async.search.captures import captures
    from cb_async.search.searcher import ORDER_VALUE

    for board in _random_positions(12, seed=12):
        every = captures(board, 0, ORDER_VALUE)
        for bound in (101, 330, 331, 501, 951, 2001):
            expected = [item for item in every if ORDER_VALUE[item[3]] >= bound or item[1].promotion]
            assert captures(board, bound, ORDER_VALUE) == expected, (board.fen(), bound)


def test_the_attack_tests_answer_as_python_chess_does() -> None:
    from cb_async.search.attacks import attacked_by, is_check, was_into_check

    answers = set()
    for board in _random_positions(12, seed=19):
        assert is_check(board) == board.is_check(), board.fen()
        for colour in chess.COLORS:
            for square in chess.SQUARES:
                expected = board.is_attacked_by(colour, square)
                assert attacked_by(board, colour, square) == expected, (board.fen(), colour, square)
                answers.add(expected)
        # Pseudo-legal moves, some of which leave the king attacked.
        for move in list(board.generate_pseudo_legal_moves())[:10]:
            board.push(move)
            assert was_into_check(board) == board.was_into_check(), (board.fen(), move)
            answers.add(("into", board.was_into_check()))
            board.pop()
    assert answers == {True, False, ("into", True), ("into", False)}


def test_the_pinned_pieces_are_python_chess_s_slider_blockers() -> None:
    """The search's legality test skips the moves of pieces this leaves out: it must name every
    piece that stands alone between the king and an enemy slider, and nothing else."""
    from cb_async.search.attacks import pinned

    found = set()
    for board in _random_positions(12, seed=29):
        king = board.king(board.turn)
        assert king is not None
        expected = board._slider_blockers(king)
        assert pinned(board, king) == expected, board.fen()
        found.add(bool(expected))
    # Two pieces between the king and the rook: neither is pinned; one alone is.
    board = chess.Board("4r1k1/8/8/8/4N3/4B3/8/4K3 w - - 0 1")
    assert pinned(board, chess.E1) == 0
    board = chess.Board("4r1k1/8/8/8/8/4B3/8/4K3 w - - 0 1")
    assert pinned(board, chess.E1) == chess.BB_E3
    assert found == {True, False}


def _exchange_by_playing(board: chess.Board, target: int, values: tuple[int, ...]) -> int:
    """What the side to move can win on `target` by recapturing there, if it wants to: each
    recapture made on the board with the least valuable attacker python-chess names."""
    turn = board.turn
    attackers = board.attackers_mask(turn, target)
    if not attackers:
        return 0
    source = min(chess.SquareSet(attackers), key=lambda square: (board.piece_type_at(square), square))
    if board.piece_type_at(source) == chess.KING and board.is_attacked_by(not turn, target):
        return 0
    captured = values[board.piece_type_at(target)]
    board.push(chess.Move(source, target))
    try:
        return max(0, captured - _exchange_by_playing(board, target, values))
    finally:
        board.pop()


def test_the_exchange_evaluation_agrees_with_playing_the_recaptures_out() -> None:
    from cb_async.search.attacks import exchange
    from cb_async.search.searcher import ORDER_VALUE

    # Off the back ranks, where a pawn recapture would promote.
    middle = chess.SquareSet(chess.BB_ALL & ~(chess.BB_RANK_1 | chess.BB_RANK_8))
    seen = set()
    for board in _random_positions(12, seed=23):
        for move in board.generate_pseudo_legal_captures():
            if move.to_square not in middle or board.is_en_passant(move) or board.is_castling(move):
                continue
            captured = ORDER_VALUE[board.piece_type_at(move.to_square)]
            played = board.copy(stack=False)
            played.push(chess.Move(move.from_square, move.to_square))
            expected = captured - _exchange_by_playing(played, move.to_square, ORDER_VALUE)
            found = exchange(board, move.from_square, move.to_square, ORDER_VALUE)
            assert found == expected, (board.fen(), move.uci(), found, expected)
            seen.add((expected > 0, expected < 0))
    # Captures that win, that break even and that lose were all among them.
    assert seen == {(True, False), (False, False), (False, True)}


def test_the_ordering_lists_hold_python_chess_moves_in_its_order() -> None:
    # The search's equal-scored moves keep their generation order, so the node count (Bench)
    # depends on the lists being python-chess's moves in python-chess's order.
    import random

    from cb_async.search.quiets import scored_captures, scored_quiets
    from cb_async.search.searcher import ORDER_VALUE

    rng = random.Random(5)
    history = [rng.randrange(-500, 500) for _ in range(8192)]
    for board in _random_positions(12, seed=13):
        theirs = board.occupied_co[not board.turn]
        quiets = list(board.generate_pseudo_legal_moves(chess.BB_ALL, chess.BB_ALL & ~theirs))
        takes = list(board.generate_pseudo_legal_moves(chess.BB_ALL, theirs))
        pseudo = quiets + takes
        skip = rng.choice(pseudo) if pseudo and rng.random() < 0.7 else None
        codes = [m.from_square << 6 | m.to_square for m in quiets if not m.promotion]
        killers = [rng.choice(codes) if codes else -1, rng.choice(codes) if codes else -1]
        base = 4096 if board.turn else 0

        def quiet_score(move: chess.Move) -> int:
            code = move.from_square << 6 | move.to_square
            if move.promotion:
                return 900 + move.promotion
            if code == killers[0]:
                return 801
            if code == killers[1]:
                return 800
            return history[base | code]

        found = scored_quiets(board, history, base, skip, killers, 900, (801, 800))
        # Promotions first (they outscore every other quiet move), then python-chess's order.
        quiets.sort(key=lambda m: not m.promotion)
        assert found == [(quiet_score(m), m) for m in quiets if m != skip], board.fen()
        found_takes = scored_captures(board, skip, ORDER_VALUE)
        expected = [
            (ORDER_VALUE[board.piece_type_at(m.to_square)] * 8 - board.piece_type_at(m.from_square), m)  # type: ignore[index, operator]
            for m in takes if m != skip
        ]
        assert found_takes == expected, board.fen()


def test_every_check_is_in_the_search_s_cheap_superset() -> None:
    # The search asks the board whether a move gives check only for moves in this superset;
    # a check outside it would go unextended and unseen.
    from cb_async.search.searcher import _check_targets

    checks = 0
    for board in _random_positions(16, seed=17):
        squares, rays = _check_targets(board, board.turn)
        for move in board.legal_moves:
            if not board.gives_check(move):
                continue
            checks += 1
            piece = board.piece_type_at(move.from_square)
            assert (
                (squares[piece] >> move.to_square) & 1  # type: ignore[index]
                or (rays >> move.from_square) & 1
                or move.promotion
                or board.is_en_passant(move)
                or (piece == chess.KING and board.castling_rights)
            ), (board.fen(), move)
    assert checks > 100


def test_a_proven_mate_on_the_clock_is_played_at_once() -> None:
    start = time.monotonic()
    result = run("6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1", Limits(movetime=5000))
    assert result.score == Score(mate=1)
    assert time.monotonic() - start < 1.0


def test_history_scores_stay_within_their_bound_and_learn_both_ways() -> None:
    from cb_async.search.searcher import HISTORY_MAX

    searcher = Searcher()
    board = chess.Board(MIDDLEGAME)
    for _ in range(3):
        searcher.search(board, (), Limits(depth=6), StopToken())
    history = searcher._history
    assert all(-HISTORY_MAX <= value <= HISTORY_MAX for value in history)
    assert max(history) > 0 > min(history)  # cut-offs rewarded, the moves tried before them not
