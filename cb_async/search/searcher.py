"""The search: iterative deepening PVS over python-chess boards.

Why python-chess's `Board` and not a board of our own: its bitboard move generation is faster
than what a pure-Python mailbox reaches (the pseudo-legal moves of a middlegame in 15 us), and
it is the rules reference, so there is no second move generator to keep correct (perft checks
the one we use). Where its general-purpose calls were the bottleneck we go around them on its
own bitboards: `play` makes ordinary moves three times faster than `Board.push`, `captures`
builds the quiescence moves already ordered, `quiets` the main search's captures and quiet
moves with their ordering scores in one pass, the evaluation sums are passed down the tree
(`evaluation`), and legality is tested after the push only for moves that can expose the king.

The hot functions are closures over the search state (one `_SearchRun` per search) so that the
board, the tables and the counters are fast local or cell reads rather than attribute lookups.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Sequence
from operator import itemgetter
from typing import TYPE_CHECKING

import chess
from chess import (
    BB_DIAG_ATTACKS, BB_DIAG_MASKS, BB_FILE_ATTACKS, BB_FILE_MASKS, BB_KNIGHT_ATTACKS, BB_PAWN_ATTACKS,
    BB_RANK_ATTACKS, BB_RANK_MASKS,
)

from cb_async.limits import MAX_DEPTH, Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.search.attacks import attacked_by, exchange, is_check, piece_attacks, pinned, was_into_check
from cb_async.search.captures import captures
from cb_async.search.control import StopToken
from cb_async.search.evaluation import MAX_PHASE, TEMPO, blend, evaluate_from_scratch
from cb_async.search.eval_file import DEFAULT_EVAL_FILE
from cb_async.search.eval_file import resolve as resolve_network
from cb_async.search.network import Network
from cb_async.search.pacing import Pacing
from cb_async.search.play import play, play_known
from cb_async.search.quiets import scored_captures, scored_quiets
from cb_async.search.scores import (
    INFINITY,
    MATE,
    MATE_BOUND,
    MAX_PLY,
    TB_BOUND,
    TB_WIN,
    is_mate_score,
    mate_moves,
    to_score,
)
from cb_async.search.structure import PASSER_PHASE, passer_kings
from cb_async.search.tt import EXACT, LOWER, UPPER, SharedSlots, TranspositionTable

if TYPE_CHECKING:
    from cb_async.search.tablebase import Tables

#: The stop token and the node limit are checked when `nodes & POLL_MASK == 0`: every 64
#: nodes is about a millisecond at this engine's speed, well inside the 2 ms a stop may take.
POLL_MASK = 63
#: Nodes at least this deep with no move from the table are searched one ply shallower.
IIR_DEPTH = 4
#: Half-width of the first aspiration window, in centipawns.
ASPIRATION = 35
#: Value of a captured piece for move ordering and delta pruning (index by piece type).
ORDER_VALUE = (0, 100, 320, 330, 500, 950, 2000)
#: History scores stay within +-HISTORY_MAX (well below the killer bonus): each update moves a
#: score towards the bound by a share of the distance left ("gravity"), so old successes fade
#: as new ones come in, and moves that failed are pushed down as the good one is pushed up.
HISTORY_MAX = 16_384

_CAPTURE_BASE = 1_000_000
_PROMOTION_BASE = 900_000
_KILLER_1 = 800_001
_KILLER_2 = 800_000

_LMR = [[0] * 64 for _ in range(64)]
for _depth in range(1, 64):
    for _count in range(1, 64):
        _LMR[_depth][_count] = int(0.75 + math.log(_depth) * math.log(_count) / 2.25)


#: [square]: every line through it (its empty-board queen rays).
_RAYS = tuple(
    BB_DIAG_ATTACKS[square][0] | BB_FILE_ATTACKS[square][0] | BB_RANK_ATTACKS[square][0] for square in range(64)
)
_NO_CHECKS = ((0,) * 7, 0)


def _check_targets(board: chess.Board, us: bool) -> tuple[tuple[int, ...], int]:
    """Where each of our piece types would give check, and the lines through their king.

    ([piece type] -> squares checking their king, rays): a quiet move gives a direct check
    only by landing on its type's squares, and a discovered check only by leaving a ray.
    """
    king = (board.kings & board.occupied_co[not us]).bit_length() - 1
    if king < 0:
        return _NO_CHECKS
    occupied = board.occupied
    diagonal = BB_DIAG_ATTACKS[king][BB_DIAG_MASKS[king] & occupied]
    straight = (
        BB_FILE_ATTACKS[king][BB_FILE_MASKS[king] & occupied] | BB_RANK_ATTACKS[king][BB_RANK_MASKS[king] & occupied]
    )
    squares = (0, BB_PAWN_ATTACKS[not us][king], BB_KNIGHT_ATTACKS[king], diagonal, straight, diagonal | straight, 0)
    return squares, _RAYS[king]


class SearchAborted(Exception):
    """Raised from inside the tree when the stop token or the node limit ends the search."""


def position_key(board: chess.Board) -> tuple[int, ...]:
    """What identifies a position for repetitions and the transposition table.

    Only ints: python-chess's own `_transposition_key()` holds None when there is no en passant
    square, and in CPython 3.11 `hash(None)` depends on the process's memory layout, which
    would make the table's slots, and so the bench node count, differ from run to run. The
    search hashes the same fields inline (`alphabeta`); keep the two in step.
    """
    occupied_co = board.occupied_co
    return (
        board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
        occupied_co[0], occupied_co[1], board.turn, board.castling_rights, board.ep_square or 0,
    )


def history_keys(board: chess.Board) -> tuple[Hashable, ...]:
    """Repetition keys of the positions before `board`'s current one (from board.move_stack,
    back to the last irreversible move), in the form `search` expects as `history`.

    The keys are plain tuples of ints (`position_key`): they pickle and compare the same in
    every process, unlike their `hash()`, which the search computes on its side.
    """
    copy = board.copy()
    keys: list[Hashable] = []
    for _ in range(min(board.halfmove_clock, len(copy.move_stack))):
        copy.pop()
        keys.append(position_key(copy))
    keys.reverse()
    return tuple(keys)


class Searcher:
    """Owns what outlives one search: the transposition table, killers and history."""

    def __init__(self, hash_mb: int = 16) -> None:
        #: Open Syzygy tables for the WDL probes inside the tree, or None.
        self.tablebase: Tables | None = None
        #: The learned correction added to the hand-written evaluation, or None for none.
        self.network: Network | None = resolve_network(DEFAULT_EVAL_FILE)
        self._tt = TranspositionTable(hash_mb)
        self._history = [0] * 8192
        self._killers: list[list[int]] = [[-1, -1] for _ in range(MAX_PLY + 2)]

    def set_hash_size(self, mb: int) -> None:
        """Resize the transposition table (which clears it)."""
        self._tt.resize(mb)

    def share_table(self, slots: SharedSlots) -> None:
        """Search with a table that other search processes share (Lazy SMP)."""
        self._tt.share(slots)

    def new_game(self) -> None:
        """Forget everything learnt from earlier positions."""
        self._tt.clear()
        self._history = [0] * 8192
        self._killers = [[-1, -1] for _ in range(MAX_PLY + 2)]

    def hashfull(self) -> int:
        return self._tt.hashfull()

    def search(
        self,
        position: chess.Board,
        history: Sequence[Hashable],
        limits: Limits,
        stop: StopToken,
        on_info: Callable[[SearchInfo], None] | None = None,
        helper: int = 0,
    ) -> SearchResult:
        """Search `position` (never modified) until a limit or `stop` ends it.

        Time is the caller's: the search reads its deadlines from `stop` alone (the session
        computes them; `cb_async.timeman.stop_token` does it for code without a session).

        `helper` > 0 makes this a Lazy SMP helper of a main search on a shared table: it
        deepens until stopped (the main search decides when to answer), and odd helpers search
        each iteration a ply deeper than the main one, so that the two fill the table with
        different work."""
        start = time.monotonic()
        board = position.copy(stack=False)
        # As `push` would before a move: `play_known` keeps the rights it is given.
        board.castling_rights = board.clean_castling_rights()
        # Killers are only meaningful for the position they were found in.
        self._killers = [[-1, -1] for _ in range(MAX_PLY + 2)]
        run = _SearchRun(self._tt, self._history, self._killers, board, history, limits, stop, on_info, start,
                         self.tablebase, helper, self.network)
        return run.execute()


class _SearchRun:
    """One search: its board copy, counters, and the iterative deepening loop."""

    def __init__(
        self,
        tt: TranspositionTable,
        history_table: list[int],
        killers: list[list[int]],
        board: chess.Board,
        history: Sequence[Hashable],
        limits: Limits,
        stop: StopToken,
        on_info: Callable[[SearchInfo], None] | None,
        start: float,
        tables: Tables | None = None,
        helper: int = 0,
        network: Network | None = None,
    ) -> None:
        self.tt = tt
        self.history_table = history_table
        self.killers = killers
        self.board = board
        self.history = [hash(key) for key in history]
        self.limits = limits
        self.stop = stop
        self.on_info = on_info
        self.start = start
        self.nodes = 0
        self.seldepth = 0
        self.tables = tables
        self.tbhits = 0
        self.helper = helper
        self.network = network

    # -- the driver -------------------------------------------------------------------------

    def execute(self) -> SearchResult:
        board = self.board
        limits = self.limits
        legal = list(board.generate_legal_moves())
        if not legal:
            score = Score(mate=0) if board.is_check() else Score(cp=0)
            return SearchResult(None, None, score, 0, 0, 0, self._elapsed_ms(), hashfull=self.tt.hashfull())
        root_moves = self._restrict(legal, limits.search_moves)
        root_moves = self._order_root(root_moves)
        multipv = min(limits.multipv, len(root_moves))
        max_depth = limits.depth if limits.depth is not None else MAX_DEPTH
        node_limit = limits.nodes if limits.nodes is not None else 1 << 62

        search_root = self._build(node_limit)
        completed: list[tuple[int, tuple[chess.Move, ...]]] = []
        completed_depth = 0
        infos: list[SearchInfo] = []
        previous = 0
        pacing = Pacing(self.stop, self.start, flexible=limits.movetime is None)
        helper = self.helper
        for iteration in range(1, max_depth + 1):
            if helper:
                if self.stop.should_stop():
                    break
                depth = min(iteration + (helper & 1), max_depth)
            else:
                if not pacing.keep_going():
                    break
                depth = iteration
            try:
                lines: list[tuple[int, tuple[chess.Move, ...]]] = []
                chosen: set[chess.Move] = set()
                for index in range(multipv):
                    candidates = [move for move in root_moves if move not in chosen]
                    if index == 0 and multipv == 1 and depth >= 4 and not is_mate_score(previous):
                        value, pv = self._aspirate(search_root, depth, candidates, previous)
                    else:
                        value, pv = search_root(-INFINITY, INFINITY, depth, candidates)
                    lines.append((value, pv))
                    chosen.add(pv[0])
            except SearchAborted:
                break
            # Each line is the best move left after the lines before it, but a later search can
            # find a better score than an earlier one (the table and the reductions differ from
            # search to search): a GUI reads multipv 1 as the best, so the lines go best first.
            lines.sort(key=itemgetter(0), reverse=True)
            completed, completed_depth = lines, depth
            previous = lines[0][0]
            line_moves = [pv[0] for _, pv in lines]
            root_moves = line_moves + [move for move in root_moves if move not in chosen]
            infos = self._report(depth, lines)
            pacing.completed(lines[0][1][0], previous)
            moves = mate_moves(previous)
            if moves is not None:
                if limits.mate is not None and moves <= limits.mate:
                    break
                # On the clock, a mate proven with depth to spare will not get shorter: play it.
                if not limits.infinite and self.stop.has_deadline and depth >= 2 * moves + 4:
                    break
            if self.nodes >= node_limit:
                break
        return self._result(completed, completed_depth, infos, root_moves)

    def _aspirate(
        self,
        search_root: Callable[[int, int, int, list[chess.Move]], tuple[int, tuple[chess.Move, ...]]],
        depth: int,
        moves: list[chess.Move],
        previous: int,
    ) -> tuple[int, tuple[chess.Move, ...]]:
        """Search a narrow window around the last score, widening it on a fail."""
        delta = ASPIRATION
        alpha = max(previous - delta, -INFINITY)
        beta = min(previous + delta, INFINITY)
        while True:
            value, pv = search_root(alpha, beta, depth, moves)
            if value <= alpha:
                alpha = max(value - delta, -INFINITY)
            elif value >= beta:
                beta = min(value + delta, INFINITY)
                moves = [pv[0]] + [move for move in moves if move != pv[0]]
            else:
                return value, pv
            delta *= 2
            if delta > 1000:
                alpha, beta = -INFINITY, INFINITY

    def _restrict(self, legal: list[chess.Move], wanted: tuple[chess.Move, ...]) -> list[chess.Move]:
        """The root moves allowed by `search_moves` (all of them when none is legal)."""
        if not wanted:
            return legal
        legal_set = set(legal)
        chosen: list[chess.Move] = []
        for move in wanted:
            if move not in legal_set:
                try:
                    move = self.board.parse_uci(move.uci())
                except ValueError:
                    continue
            if move in legal_set and move not in chosen:
                chosen.append(move)
        return chosen or legal

    def _order_root(self, moves: list[chess.Move]) -> list[chess.Move]:
        """TT move first, then captures by victim value, then the rest in generation order."""
        board = self.board
        tt_move = self.tt.best_move(hash(position_key(board)))

        def key(move: chess.Move) -> int:
            if move == tt_move:
                return 1 << 20
            victim = board.piece_type_at(move.to_square)
            if victim and board.color_at(move.to_square) != board.turn:
                return 1000 + ORDER_VALUE[victim]
            return 0

        return sorted(moves, key=key, reverse=True)

    def _elapsed_ms(self) -> int:
        return int((time.monotonic() - self.start) * 1000)

    def _report(self, depth: int, lines: list[tuple[int, tuple[chess.Move, ...]]]) -> list[SearchInfo]:
        elapsed = time.monotonic() - self.start
        millis = int(elapsed * 1000)
        nps = int(self.nodes / elapsed) if elapsed > 0 else 0
        hashfull = self.tt.hashfull()
        infos = [
            SearchInfo(
                depth=depth,
                seldepth=max(self.seldepth, depth),
                multipv=index + 1,
                score=to_score(value),
                nodes=self.nodes,
                nps=nps,
                time=millis,
                pv=pv,
                hashfull=hashfull,
                tbhits=self.tbhits,
            )
            for index, (value, pv) in enumerate(lines)
        ]
        if self.on_info is not None:
            for info in infos:
                self.on_info(info)
        return infos

    def _result(
        self,
        completed: list[tuple[int, tuple[chess.Move, ...]]],
        depth: int,
        infos: list[SearchInfo],
        root_moves: list[chess.Move],
    ) -> SearchResult:
        board = self.board
        if completed:
            value, pv = completed[0]
            score = to_score(value)
        else:
            pv = (root_moves[0],)
            mg, eg, phase = evaluate_from_scratch(board)
            score = Score(cp=blend(board, mg, eg, phase) + (self.network.evaluate(board) if self.network else 0))
        best = pv[0]
        ponder = pv[1] if len(pv) > 1 else None
        if ponder is None:
            after = board.copy(stack=False)
            after.push(best)
            candidate = self.tt.best_move(hash(position_key(after)))
            if candidate is not None and after.is_legal(candidate):
                ponder = candidate
        elapsed = time.monotonic() - self.start
        return SearchResult(
            best_move=best,
            ponder_move=ponder,
            score=score,
            depth=depth,
            seldepth=max(self.seldepth, depth),
            nodes=self.nodes,
            time=int(elapsed * 1000),
            pv=pv,
            lines=tuple(infos),
            hashfull=self.tt.hashfull(),
            tbhits=self.tbhits,
        )

    # -- the tree ---------------------------------------------------------------------------

    def _build(self, node_limit: int) -> Callable[[int, int, int, list[chess.Move]], tuple[int, tuple[chess.Move, ...]]]:
        """Make the root, PVS and quiescence functions as closures over this run's state.

        The counters live in this frame (`nonlocal`) and are copied to `self` on every return
        from the root, so the driver reads them even after an abort.
        """
        run = self
        board = self.board
        push = board.push
        pop = board.pop
        # `Board.pop` inlined where the tree takes moves back: one Python call fewer per move.
        state_pop = board._stack.pop
        move_pop = board.move_stack.pop
        occupied_co = board.occupied_co
        gen_captures = captures
        gen_quiets = scored_quiets
        gen_scored_captures = scored_captures
        gen_attacks = piece_attacks
        killer_scores = (_KILLER_1, _KILLER_2)
        should_stop = self.stop.should_stop
        tt_entries = self.tt.entries
        tt_mask = self.tt.mask
        history_table = self.history_table
        killers = self.killers
        bb_squares = chess.BB_SQUARES
        BB_ALL = chess.BB_ALL
        null_move = chess.Move.null()
        lmr = _LMR
        order_value = ORDER_VALUE
        first = itemgetter(0)
        base = len(self.history)
        keys: list[int] = self.history + [0] * (MAX_PLY + 2)
        pv_table: list[tuple[chess.Move, ...]] = [()] * (MAX_PLY + 2)
        nodes = 0
        seldepth = 0
        mg0, eg0, phase0 = evaluate_from_scratch(board)
        # The learned correction: its accumulator is passed down the tree beside the sums and
        # updated per move from the moving and the captured piece's rows, of the table its
        # state (the bits above the lanes: which half each king is in) names; promotions, en
        # passant, castling and, with mirrored inputs, a king crossing between the d- and
        # e-files (all rare) build the child's from scratch.
        network = self.network
        rows_by_state = network.rows_by_state if network is not None else ()
        state_shift = network.state_shift if network is not None else 0
        king_halves = 4 if network is not None and network.mirrored else 0
        net_value = network.white_value if network is not None else None
        net_clamp = network.clamp if network is not None else 0
        accumulate = network.accumulate if network is not None else None
        acc0 = network.accumulate(board) if network is not None else 0
        # WDL probes: only with tables, at nodes right after a capture or pawn move (the
        # tables assume a fresh fifty-move count) with at most their pieces and no castling.
        tables = self.tables
        tb_pieces = tables.max_pieces if tables is not None else 0
        tb_wdl = tables.wdl if tables is not None else None
        tbhits = 0

        def poll() -> None:
            run.nodes = nodes
            run.seldepth = seldepth
            run.tbhits = tbhits
            if nodes >= node_limit or should_stop():
                raise SearchAborted

        def qsearch(alpha: int, beta: int, ply: int, mg: int, eg: int, phase: int, acc: int) -> int:
            nonlocal nodes, seldepth
            nodes += 1
            if not nodes & POLL_MASK:
                poll()
            if ply > seldepth:
                seldepth = ply
            p = phase if phase < MAX_PHASE else MAX_PHASE
            value = (mg * p + (eg if p >= PASSER_PHASE else eg + passer_kings(board)) * (MAX_PHASE - p)) // MAX_PHASE
            turn = board.turn
            stand = (value if turn else -value) + TEMPO
            if net_value is not None:
                # The correction is clipped to +-net_clamp: when even its worst cannot bring the
                # stand-pat below beta, the node fails high without it (a lower bound).
                if stand - net_clamp >= beta:
                    return stand - net_clamp
                correction = net_value(acc)
                stand += correction if turn else -correction
            if stand >= beta or ply >= MAX_PLY:
                return stand
            if stand > alpha:
                alpha = stand
            best = stand
            them = not turn
            victim_bits = occupied_co[them]
            for _, move, attacker, victim in gen_captures(board, alpha - stand - 200, order_value):
                # A capture by a more valuable piece of a defended one loses material unless
                # the exchange that follows on its square wins it back.
                if (
                    order_value[attacker] > order_value[victim] + 50
                    and attacked_by(board, them, move.to_square)
                    and exchange(board, move.from_square, move.to_square, order_value, attacker, victim) < 0
                ):
                    continue
                d_mg, d_eg, d_phase = play_known(board, move, attacker, victim)
                if was_into_check(board):
                    state_pop().restore(board)
                    move_pop()
                    continue
                if accumulate is None:
                    c_acc = 0
                elif move.promotion or (attacker == 1 and not victim_bits & bb_squares[move.to_square]) or (
                    attacker == 6 and (move.from_square ^ move.to_square) & king_halves
                ):
                    # Promotion, en passant (a pawn capture onto a square they did not hold), or
                    # a king changing half under mirrored inputs.
                    c_acc = accumulate(board)
                else:
                    to_square = move.to_square
                    net_rows = rows_by_state[acc >> state_shift]
                    mover = net_rows[turn][attacker]
                    c_acc = acc + mover[to_square] - mover[move.from_square] - net_rows[them][victim][to_square]
                value = -qsearch(-beta, -alpha, ply + 1, mg + d_mg, eg + d_eg, phase + d_phase, c_acc)
                state_pop().restore(board)
                move_pop()
                if value > best:
                    best = value
                    if value > alpha:
                        if value >= beta:
                            return value
                        alpha = value
            return best

        def alphabeta(
            alpha: int, beta: int, depth: int, ply: int, mg: int, eg: int, phase: int, acc: int,
            in_check: bool, pv_node: bool, null_ok: bool,
        ) -> int:
            nonlocal nodes, seldepth, tbhits
            if depth <= 0:
                return qsearch(alpha, beta, ply, mg, eg, phase, acc)
            nodes += 1
            if not nodes & POLL_MASK:
                poll()
            if ply > seldepth:
                seldepth = ply
            key = hash((
                board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings,
                occupied_co[0], occupied_co[1], board.turn, board.castling_rights, board.ep_square or 0,
            ))
            here = base + ply
            keys[here] = key
            # Draws: fifty moves, repetition (once inside the tree, twice before the root).
            halfmoves = board.halfmove_clock
            if halfmoves >= 4:
                if halfmoves >= 100:
                    if in_check and not any(board.generate_legal_moves()):
                        return -MATE + ply
                    return 0
                index = here - 4
                last = here - halfmoves
                if last < 0:
                    last = 0
                seen = 0
                while index >= last:
                    if keys[index] == key:
                        if index >= base:
                            return 0
                        seen += 1
                        if seen >= 2:
                            return 0
                    index -= 2
            if board.occupied.bit_count() <= 4 and board.is_insufficient_material():
                return 0
            if (
                tb_pieces and not halfmoves and not board.castling_rights
                and board.occupied.bit_count() <= tb_pieces
            ):
                wdl = tb_wdl(board)  # type: ignore[misc]
                if wdl is not None:
                    tbhits += 1
                    # A cursed win or blessed loss is a draw under the fifty-move rule.
                    return TB_WIN - ply if wdl > 1 else -TB_WIN + ply if wdl < -1 else 0
            # Mate distance pruning: no line from here beats a mate already found nearer.
            if alpha < -MATE + ply:
                alpha = -MATE + ply
            if beta > MATE - ply - 1:
                beta = MATE - ply - 1
            if alpha >= beta:
                return alpha
            if ply >= MAX_PLY:
                correction = net_value(acc) if net_value is not None else 0
                return blend(board, mg, eg, phase) + (correction if board.turn else -correction)

            turn = board.turn
            tt_move = None
            tt_value = 0
            tt_bound = -1  # no entry
            entry = tt_entries[key & tt_mask]
            if entry is not None and entry[0] == key:
                tt_move = entry[4]
                if entry[1] >= depth - 1:
                    tt_bound = entry[2]
                    tt_value = entry[3]
                if not pv_node and entry[1] >= depth:
                    value = entry[3]
                    if value >= TB_BOUND:
                        value -= ply
                    elif value <= -TB_BOUND:
                        value += ply
                    bound = entry[2]
                    if bound == EXACT or (bound == LOWER and value >= beta) or (bound == UPPER and value <= alpha):
                        return value
                if tt_move is not None and not (occupied_co[turn] >> tt_move.from_square) & 1:
                    tt_move = None
            # Internal iterative reduction: a node deep enough to matter that the table knows
            # nothing of is searched one ply shallower (its move ordering is a guess anyway);
            # the next iteration finds it in the table and searches it whole.
            if tt_move is None and depth >= IIR_DEPTH:
                depth -= 1

            p = phase if phase < MAX_PHASE else MAX_PHASE
            value = (mg * p + (eg if p >= PASSER_PHASE else eg + passer_kings(board)) * (MAX_PHASE - p)) // MAX_PHASE
            # The static evaluation serves only the pruning of non-PV nodes out of check: only
            # those pay for the learned correction.
            if net_value is not None and not pv_node and not in_check:
                value += net_value(acc)
            static = (value if turn else -value) + TEMPO
            if not pv_node and not in_check:
                # Reverse futility: far above beta near the horizon, a quiet move won't undo it.
                # A searched value from the table says more than the static evaluation where its
                # bound allows (mate scores aside), but only from a search nearly as deep as this
                # one: the node returns without a search or a store, so a lower bound from a
                # shallow search (a capture that missed the mate behind it) would prune it at
                # every iteration, never searched again.
                judged = static
                if tt_bound >= 0 and -TB_BOUND < tt_value < TB_BOUND and (
                    tt_bound == EXACT or (tt_bound == LOWER and tt_value > static)
                    or (tt_bound == UPPER and tt_value < static)
                ):
                    judged = tt_value
                if depth <= 6 and judged - 80 * depth >= beta and beta < MATE_BOUND:
                    return judged
                # Null move: if passing still fails high, a real move will too. Not for a side
                # whose only piece is a knight or a bishop: there a pass is often its best move
                # (zugzwang), and the null move would call its every position good; with a
                # rook, a queen or two pieces it seldom is.
                if (
                    null_ok and depth >= 3 and static >= beta
                    and ((pieces := occupied_co[turn] & ~(board.pawns | board.kings)) & (board.rooks | board.queens)
                         or pieces & (pieces - 1))
                ):
                    reduction = 3 if depth < 7 else 4
                    push(null_move)
                    board.halfmove_clock = 0  # no repetition or fifty-move count across a pass
                    value = -alphabeta(-beta, 1 - beta, depth - 1 - reduction, ply + 1, mg, eg, phase, acc, False, False, False)
                    state_pop().restore(board)
                    move_pop()
                    if value >= beta:
                        return beta if value >= MATE_BOUND else value

            theirs = occupied_co[not turn]
            killer_pair = killers[ply]
            history_base = 4096 if turn else 0
            old_alpha = alpha
            best = -INFINITY
            best_move = None
            legal = 0
            # Stages: 0 the TT move, 1 captures (MVV-LVA) but those the exchange evaluation says
            # lose, 2 the rest (killers, then history), 3 the losing captures.
            # A cut-off in an early stage saves generating the later ones.
            stage = 0
            moves: list[chess.Move] | tuple[chess.Move, ...] = (tt_move,) if tt_move is not None else ()
            child_pv = ply + 1
            # Legality is checked after the push, and only where a move can be illegal: out of
            # check, only king moves, moves of pinned pieces and en passant can expose the king.
            if in_check:
                unsafe = BB_ALL
            else:
                king_bb = board.kings & occupied_co[turn]
                unsafe = pinned(board, king_bb.bit_length() - 1) | king_bb
            ep_square = board.ep_square
            # Quiet moves near the horizon: all of them are futile when the static evaluation
            # is far below alpha, and only the first few are worth trying (late-move pruning).
            prune_quiets = not pv_node and not in_check and depth <= 3
            futile = prune_quiets and depth <= 2 and static + 150 * depth <= alpha
            late_limit = 3 + 3 * depth * depth
            # Whether a move gives check is asked of the board after the push only when it can:
            # when the piece lands on a square from which its type attacks their king, leaves a
            # line through their king, promotes, takes en passant or castles.
            check_squares, check_rays = _check_targets(board, turn)
            may_castle = board.castling_rights
            # The node's pieces, to tell a move's piece and victim without a method call (the
            # board is the same after every `pop`).
            pawns_here = board.pawns
            knights_here = board.knights
            bishops_here = board.bishops
            rooks_here = board.rooks
            queens_here = board.queens
            ours_here = occupied_co[turn]
            quiets_tried: list[int] = []
            losing_captures: list[chess.Move] = []
            while True:
                for move in moves:
                    from_square = move.from_square
                    to_square = move.to_square
                    bit = bb_squares[from_square]
                    piece = (
                        1 if bit & pawns_here else 2 if bit & knights_here else 3 if bit & bishops_here
                        else 4 if bit & rooks_here else 5 if bit & queens_here else 6
                    )
                    direct_or_discovered = (check_squares[piece] >> to_square) & 1 or (check_rays >> from_square) & 1
                    # Pruned unless it gives check: the cheap superset first, the exact test
                    # after the push.
                    must_check = (
                        stage >= 2 and prune_quiets and legal and best > -MATE_BOUND and not move.promotion
                        and (futile or legal > late_limit)
                    )
                    if must_check and not direct_or_discovered:
                        continue
                    promotion = move.promotion
                    bit = bb_squares[to_square]
                    if theirs & bit:
                        captured = (
                            1 if bit & pawns_here else 2 if bit & knights_here else 3 if bit & bishops_here
                            else 4 if bit & rooks_here else 5 if bit & queens_here else 6
                        )
                        quiet = False
                    else:
                        captured = 0
                        quiet = not promotion
                    d_mg, d_eg, d_phase = play_known(board, move, piece, captured)
                    if ((unsafe >> from_square) & 1 or to_square == ep_square) and was_into_check(board):
                        state_pop().restore(board)
                        move_pop()
                        continue
                    legal += 1
                    if (
                        direct_or_discovered or promotion or (piece == 1 and to_square == ep_square)
                        or (piece == 6 and may_castle)
                    ):
                        gives = is_check(board)
                    else:
                        gives = False
                    if must_check and not gives:
                        legal -= 1
                        state_pop().restore(board)
                        move_pop()
                        continue
                    if quiet:
                        quiets_tried.append(from_square << 6 | to_square)
                    new_depth = depth - 1 + gives
                    c_mg = mg + d_mg
                    c_eg = eg + d_eg
                    c_phase = phase + d_phase
                    if accumulate is None:
                        c_acc = 0
                    elif promotion or (piece == 1 and to_square == ep_square) or (
                        piece == 6 and (abs(to_square - from_square) == 2 or ours_here & bit
                                        or (from_square ^ to_square) & king_halves)
                    ):
                        c_acc = accumulate(board)
                    else:
                        net_rows = rows_by_state[acc >> state_shift]
                        mover = net_rows[turn][piece]
                        c_acc = acc + mover[to_square] - mover[from_square]
                        if captured:
                            c_acc -= net_rows[not turn][captured][to_square]
                    if legal == 1:
                        if pv_node:
                            pv_table[child_pv] = ()
                        value = -alphabeta(-beta, -alpha, new_depth, child_pv, c_mg, c_eg, c_phase, c_acc, gives, pv_node, True)
                    else:
                        reduction = 0
                        if depth >= 3 and (quiet or stage == 3) and not gives and not in_check:
                            reduction = lmr[depth if depth < 64 else 63][legal if legal < 64 else 63]
                            if pv_node and reduction:
                                reduction -= 1
                            code = move.from_square << 6 | to_square
                            if reduction and (code == killer_pair[0] or code == killer_pair[1]):
                                reduction -= 1
                            if reduction >= new_depth:
                                reduction = new_depth - 1
                        value = -alphabeta(-alpha - 1, -alpha, new_depth - reduction, child_pv, c_mg, c_eg, c_phase, c_acc, gives, False, True)
                        if value > alpha and reduction:
                            value = -alphabeta(-alpha - 1, -alpha, new_depth, child_pv, c_mg, c_eg, c_phase, c_acc, gives, False, True)
                        if pv_node and alpha < value < beta:
                            pv_table[child_pv] = ()
                            value = -alphabeta(-beta, -alpha, new_depth, child_pv, c_mg, c_eg, c_phase, c_acc, gives, True, True)
                        elif pv_node:
                            pv_table[child_pv] = ()
                    state_pop().restore(board)
                    move_pop()
                    if value > best:
                        best = value
                        if value > alpha:
                            best_move = move
                            if pv_node:
                                pv_table[ply] = (move,) + pv_table[child_pv]
                            if value >= beta:
                                if quiet:
                                    code = quiets_tried.pop()
                                    if killer_pair[0] != code:
                                        killer_pair[1] = killer_pair[0]
                                        killer_pair[0] = code
                                    bonus = depth * depth if depth < 20 else 400
                                    index = history_base | code
                                    history_table[index] += bonus - history_table[index] * bonus // HISTORY_MAX
                                    # The quiet moves tried before it did not cut: push them down.
                                    for code in quiets_tried:
                                        index = history_base | code
                                        history_table[index] -= bonus + history_table[index] * bonus // HISTORY_MAX
                                break
                            alpha = value
                else:
                    if stage == 3:
                        break
                    stage += 1
                    if stage == 3:
                        if not losing_captures:
                            break
                        moves = losing_captures
                        continue
                    if stage == 1:
                        # Where our pieces attack, for the captures and again for the quiet moves.
                        attacks = gen_attacks(board, occupied_co[turn])
                        scored = gen_scored_captures(board, tt_move, order_value, attacks)
                    else:
                        scored = gen_quiets(board, history_table, history_base, tt_move, killer_pair,
                                            _PROMOTION_BASE, killer_scores, attacks)
                    if len(scored) > 1:
                        scored.sort(key=first, reverse=True)
                    if stage == 1:
                        moves = []
                        for score, move in scored:
                            # A capture by a piece worth more than its victim, on a square they
                            # defend, that the exchange there says loses: after the quiet moves.
                            # The score is the victim's value times 8 less the attacker's type
                            # (1 to 6), so both come back out of it without a board lookup.
                            attacker = -score & 7
                            if (
                                order_value[attacker] > ((score + attacker) >> 3) + 50
                                and attacked_by(board, not turn, move.to_square)
                                and exchange(board, move.from_square, move.to_square, order_value, attacker) < 0
                            ):
                                losing_captures.append(move)
                            else:
                                moves.append(move)
                    else:
                        moves = [move for _, move in scored]
                    continue
                break

            if legal == 0:
                return -MATE + ply if in_check else 0
            if best >= beta:
                bound = LOWER
            elif best > old_alpha:
                bound = EXACT
            else:
                bound = UPPER
            slot = key & tt_mask
            old = tt_entries[slot]
            if old is None or old[0] != key or depth >= old[1] or bound == EXACT:
                stored = best + ply if best >= TB_BOUND else best - ply if best <= -TB_BOUND else best
                tt_entries[slot] = (key, depth, bound, stored, best_move or tt_move)
            return best

        def search_root(alpha: int, beta: int, depth: int, moves: list[chess.Move]) -> tuple[int, tuple[chess.Move, ...]]:
            nonlocal nodes
            try:
                nodes += 1
                key = hash(position_key(board))
                keys[base] = key
                best = -INFINITY
                original_alpha = alpha
                best_pv: tuple[chess.Move, ...] = (moves[0],)
                for index, move in enumerate(moves):
                    d_mg, d_eg, d_phase = play(board, move)
                    gives = is_check(board)
                    new_depth = depth - 1 + gives
                    c_mg = mg0 + d_mg
                    c_eg = eg0 + d_eg
                    c_phase = phase0 + d_phase
                    c_acc = accumulate(board) if accumulate is not None else 0
                    pv_table[1] = ()
                    if index == 0:
                        value = -alphabeta(-beta, -alpha, new_depth, 1, c_mg, c_eg, c_phase, c_acc, gives, True, True)
                    else:
                        value = -alphabeta(-alpha - 1, -alpha, new_depth, 1, c_mg, c_eg, c_phase, c_acc, gives, False, True)
                        if alpha < value < beta:
                            pv_table[1] = ()
                            value = -alphabeta(-beta, -alpha, new_depth, 1, c_mg, c_eg, c_phase, c_acc, gives, True, True)
                    pop()
                    if value > best:
                        best = value
                        if value > alpha:
                            best_pv = (move,) + pv_table[1]
                            alpha = value
                            if value >= beta:
                                break
                bound = LOWER if best >= beta else EXACT if best > original_alpha else UPPER
                # At the root, ply 0, a mate score needs no adjustment.
                tt_entries[key & tt_mask] = (key, depth, bound, best, best_pv[0])
                return best, best_pv
            finally:
                run.nodes = nodes
                run.seldepth = seldepth
                run.tbhits = tbhits
                # An abort leaves moves on the stack: take the board back to the root.
                while len(board.move_stack):
                    pop()

        return search_root
