"""`cb-async match`: play engines against each other, like cutechess-cli, on python-chess's client.

    cb-async match --engine cmd=cb-async name=new --engine "cmd=python3 sunfish.py" name=sunfish \\
        --games 200 --tc 10+0.1 --pgn games.pgn --sprt elo0=0 elo1=10 alpha=0.05 beta=0.05

Colours alternate and each opening is played with both colours. The tool keeps the clocks
itself (wall time of each move, the increment added after it): a move that arrives after the
flag fell is a time forfeit, an illegal move or a crash loses, and a stalled engine (no move
long after its clock ran out) loses by stall. Each is written into the result and the PGN.
Pondering is off unless `--ponder` (in self-play both engines then share the cores).
`--rss` samples the resident memory of each engine process and its children (the search
worker) after every game: the soak checks that it stays flat.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import math
import os
import random
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import chess
import chess.engine
import chess.pgn
import chess.polyglot

from cb_async import cli
from cb_async.cli import UsageError

DEFAULT_OPENINGS = Path(__file__).parent.parent / "data" / "openings.epd"
STALL_GRACE_SECONDS = 5.0
#: An engine on a fixed node budget has no clock; one that has not answered after this long
#: has stalled.
FIXED_NODES_STALL_SECONDS = 60.0


# -- configuration ------------------------------------------------------------------------------

@dataclasses.dataclass
class EngineSpec:
    name: str
    command: list[str]
    protocol: str = "uci"
    options: dict[str, str] = dataclasses.field(default_factory=dict)
    #: A fixed node budget per move for this engine alone (`nodes=N`): it is sent `go nodes N`
    #: instead of the clocks, and no clock runs for it (a reference engine such as Stockfish
    #: at fixed nodes plays the same on any machine and under any load).
    nodes: int | None = None


def parse_engine(words: Sequence[str]) -> EngineSpec:
    """`cmd=... name=... proto=uci|xboard nodes=N option.Hash=64` (cutechess-cli's words)."""
    fields: dict[str, str] = {}
    options: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep:
            raise ValueError(f"expected key=value, got {word!r}")
        if key.startswith("option."):
            options[key[len("option."):]] = value
        else:
            fields[key] = value
    if "cmd" not in fields:
        raise ValueError("an engine needs cmd=...")
    protocol = fields.get("proto", "uci")
    if protocol not in ("uci", "xboard"):
        raise ValueError(f"proto must be uci or xboard, not {protocol!r}")
    nodes = None
    if "nodes" in fields:
        try:
            nodes = int(fields["nodes"])
        except ValueError:
            nodes = 0
        if nodes < 1:
            raise ValueError(f"nodes must be a positive whole number, not {fields['nodes']!r}")
    unknown = set(fields) - {"cmd", "name", "proto", "nodes"}
    if unknown:
        raise ValueError(f"unknown engine key {sorted(unknown)[0]!r} (cmd, name, proto, nodes, option.NAME)")
    command = shlex.split(fields["cmd"])
    if not command:
        raise ValueError("cmd= names no command")
    return EngineSpec(fields.get("name", Path(command[0]).name), command, protocol, options, nodes)


@dataclasses.dataclass(frozen=True)
class TimeControl:
    base: float | None = None  # seconds
    increment: float = 0.0
    movetime: float | None = None
    depth: int | None = None
    nodes: int | None = None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        base, _, inc = text.partition("+")
        return cls(base=float(base), increment=float(inc or 0))

    def describe(self) -> str:
        if self.base is not None:
            return f"{self.base:g}+{self.increment:g}"
        parts = [f"movetime {self.movetime:g}s" if self.movetime else "", f"depth {self.depth}" if self.depth else "",
                 f"nodes {self.nodes}" if self.nodes else ""]
        return ", ".join(p for p in parts if p) or "-"


@dataclasses.dataclass(frozen=True)
class Adjudication:
    resign_score: int | None = None  # centipawns; both engines agree for resign_moves moves
    resign_moves: int = 3
    draw_score: int | None = None
    draw_moves: int = 8
    draw_after: int = 40  # full moves before draw adjudication may start
    tablebases: str | None = None


@dataclasses.dataclass(frozen=True)
class Sprt:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05

    @property
    def bounds(self) -> tuple[float, float]:
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, wins: int, draws: int, losses: int) -> float:
        """The log-likelihood ratio of elo1 against elo0 (the trinomial GSPRT approximation)."""
        n = wins + draws + losses
        if n == 0 or wins == 0 or losses == 0:
            return 0.0
        w, d = wins / n, draws / n
        mean = w + d / 2
        variance = (w + d / 4) - mean ** 2
        if variance <= 0:
            return 0.0
        score0, score1 = _expected_score(self.elo0), _expected_score(self.elo1)
        return (score1 - score0) * (2 * mean - score0 - score1) / (2 * variance / n)

    def llr_penta(self, penta: Sequence[int]) -> float:
        """The log-likelihood ratio from game pairs (the same opening, each engine White once):
        `penta` counts the pairs that scored 0, 1/2, 1, 3/2 and 2 points for the first engine.
        A pair's two games share their opening's bias, so their outcomes are correlated; their
        mean varies less than two independent games do, and the test decides in fewer games
        (fastchess's and fishtest's pentanomial model, the same normal approximation)."""
        mean, variance, pairs = _pair_moments(penta)
        if pairs == 0 or variance <= 0:
            return 0.0
        score0, score1 = _expected_score(self.elo0), _expected_score(self.elo1)
        return (score1 - score0) * (2 * mean - score0 - score1) / (2 * variance / pairs)

    def verdict(self, llr: float) -> str | None:
        """"H1 accepted" or "H0 accepted" once the LLR has crossed a bound, else None."""
        lower, upper = self.bounds
        return "H1 accepted" if llr >= upper else "H0 accepted" if llr <= lower else None

    def state(self, wins: int, draws: int, losses: int, penta: Sequence[int] | None = None) -> str:
        llr = self.llr_penta(penta) if penta and sum(penta) else self.llr(wins, draws, losses)
        lower, upper = self.bounds
        verdict = self.verdict(llr) or "running"
        return f"LLR {llr:.2f} ({lower:.2f}, {upper:.2f}) [{self.elo0:g}, {self.elo1:g}] {verdict}"


#: A pair's score (its two games' mean) for each pentanomial count.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


def _pair_moments(penta: Sequence[int]) -> tuple[float, float, int]:
    """(mean, variance, number) of the pairs' scores."""
    pairs = sum(penta)
    if pairs == 0:
        return 0.5, 0.0, 0
    mean = sum(count * score for count, score in zip(penta, PAIR_SCORES)) / pairs
    variance = sum(count * (score - mean) ** 2 for count, score in zip(penta, PAIR_SCORES)) / pairs
    return mean, variance, pairs


def penta_summary(penta: Sequence[int]) -> tuple[float, float]:
    """(Elo, 95% half-interval) of the first engine from its game pairs."""
    mean, variance, pairs = _pair_moments(penta)
    if pairs == 0:
        return 0.0, 0.0
    spread = 1.959964 * math.sqrt(variance / pairs)
    margin = (_elo(min(0.999, mean + spread)) - _elo(max(0.001, mean - spread))) / 2 if variance > 0 else 0.0
    return _elo(mean), margin


def _expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


def elo_summary(wins: int, draws: int, losses: int) -> tuple[float, float, float]:
    """(Elo, 95% half-interval, LOS) of the first engine from its W/D/L."""
    n = wins + draws + losses
    if n == 0:
        return 0.0, 0.0, 0.5
    score = (wins + draws / 2) / n
    variance = (wins * (1 - score) ** 2 + draws * (0.5 - score) ** 2 + losses * score ** 2) / n
    elo = _elo(score)
    margin = 0.0
    if variance > 0 and 0 < score < 1:
        spread = 1.959964 * math.sqrt(variance / n)
        margin = (_elo(min(0.999, score + spread)) - _elo(max(0.001, score - spread))) / 2
    los = 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses)))) if wins + losses else 0.5
    return elo, margin, los


def _elo(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


# -- openings -----------------------------------------------------------------------------------

def load_openings(path: Path) -> list[chess.Board]:
    """Start positions from an EPD file (one position a line) or a PGN file (each game's moves)."""
    boards: list[chess.Board] = []
    if path.suffix.lower() == ".pgn":
        with path.open(encoding="utf-8") as handle:
            while (game := chess.pgn.read_game(handle)) is not None:
                boards.append(game.end().board())
    else:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and not line.startswith("#"):
                board = chess.Board()
                board.set_epd(line.strip())
                boards.append(board)
    if not boards:
        raise ValueError(f"no openings in {path}")
    return boards


# -- playing ------------------------------------------------------------------------------------

@dataclasses.dataclass
class GameResult:
    white: str
    black: str
    result: str  # "1-0", "0-1", "1/2-1/2"
    reason: str
    pgn: chess.pgn.Game


@dataclasses.dataclass(frozen=True)
class Fault:
    """`--fault every=N signal=STOP|KILL after=MS`: every N-th move of the first engine, MS
    milliseconds after its `go`, this signal goes to its search worker (a cb-async engine's
    child, found through /proc; Linux). What a stalled or crashed worker costs in a real game:
    the games lost on time or by forfeit show it."""

    every: int
    signal: int
    after: float  # seconds

    def describe(self) -> str:
        import signal as signals

        return (f"SIG{signals.Signals(self.signal).name.removeprefix('SIG')} into the search worker every "
                f"{self.every} moves, {self.after * 1000:.0f} ms into the move")


class Injector:
    """Sends a `Fault` to one engine's worker and counts the faults sent."""

    def __init__(self, fault: Fault, target: str) -> None:
        self.fault = fault
        self.target = target
        self.sent = 0
        self.missed = 0

    def arm(self, player: Player, moves_made: int) -> asyncio.TimerHandle | None:
        """For the move about to start: a timer that strikes `after` into it, if it is due."""
        if player.spec.name != self.target or moves_made % self.fault.every != self.fault.every - 1:
            return None
        if player.transport is None:
            return None
        pid = player.transport.get_pid()
        return asyncio.get_running_loop().call_later(self.fault.after, self._strike, pid)

    def _strike(self, engine_pid: int) -> None:
        from cb_async.tools.procinfo import search_worker

        worker = search_worker(engine_pid)
        try:
            if worker is None:
                raise ProcessLookupError
            os.kill(worker, self.fault.signal)
            self.sent += 1
        except ProcessLookupError:
            self.missed += 1  # between two workers: a restart was under way


class EngineStartFailed(chess.engine.EngineError):
    """An engine could not be started or refused its options (mid-match it loses the game)."""


class Player:
    """One engine process, started once and reused for many games."""

    def __init__(self, spec: EngineSpec) -> None:
        self.spec = spec
        self.engine: chess.engine.Protocol | None = None
        self.transport: asyncio.SubprocessTransport | None = None

    async def ensure_started(self) -> chess.engine.Protocol:
        if self.engine is None or self.engine.returncode.done():
            popen = chess.engine.popen_uci if self.spec.protocol == "uci" else chess.engine.popen_xboard
            try:
                transport, engine = await asyncio.wait_for(popen(self.spec.command), 60)
                self.transport, self.engine = transport, engine
                options = {name: value for name, value in self.spec.options.items()}
                if options:
                    await engine.configure(options)
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError, asyncio.TimeoutError) as error:
                await self.kill()
                raise EngineStartFailed(f"engine {self.spec.name} ({shlex.join(self.spec.command)}) did not start: "
                                        f"{error or type(error).__name__}") from error
            return engine
        return self.engine

    async def kill(self) -> None:
        if self.transport is not None:
            try:
                self.transport.kill()
            except ProcessLookupError:
                pass
        self._release()

    async def close(self) -> None:
        if self.engine is not None:
            try:
                await asyncio.wait_for(self.engine.quit(), 5)
            except (asyncio.TimeoutError, chess.engine.EngineError, chess.engine.EngineTerminatedError):
                await self.kill()
        self._release()

    def _release(self) -> None:
        """Close the process's transport (its pipes) now, not when it is garbage collected."""
        if self.transport is not None:
            self.transport.close()
        self.transport = None
        self.engine = None


async def play_game(white: Player, black: Player, opening: chess.Board, tc: TimeControl,
                    adjudication: Adjudication, game_number: int, tablebase: Any = None,
                    ponder: bool = False, injector: Injector | None = None) -> GameResult:
    board = opening.copy()
    players = {chess.WHITE: white, chess.BLACK: black}
    clocks = {chess.WHITE: tc.base, chess.BLACK: tc.base}
    scores: dict[chess.Color, list[int]] = {chess.WHITE: [], chess.BLACK: []}
    game_id = object()
    result, reason = "*", ""
    comments: list[str] = []
    moves_made = {chess.WHITE: 0, chess.BLACK: 0}
    for player in (white, black):
        await player.ensure_started()  # start-up is not on anybody's clock
    while True:
        over = game_over(board)
        if over is not None:
            result, reason = over
            break
        adjudicated = _adjudicate(board, scores, adjudication, tablebase)
        if adjudicated is not None:
            result, reason = adjudicated
            break
        side = board.turn
        player = players[side]
        fixed_nodes = player.spec.nodes
        limit = chess.engine.Limit(nodes=fixed_nodes) if fixed_nodes is not None else _limit(tc, clocks)
        try:
            engine = await player.ensure_started()
            started = time.monotonic()
            timeout = (clocks[side] or 0) + STALL_GRACE_SECONDS if tc.base is not None else None
            if tc.movetime is not None:
                timeout = tc.movetime + STALL_GRACE_SECONDS
            if fixed_nodes is not None:
                timeout = FIXED_NODES_STALL_SECONDS
            strike = injector.arm(player, moves_made[side]) if injector is not None else None
            try:
                play = await asyncio.wait_for(
                    engine.play(board, limit, game=game_id, info=chess.engine.INFO_SCORE, ponder=ponder), timeout)
            finally:
                if strike is not None:
                    strike.cancel()
            moves_made[side] += 1
        except asyncio.TimeoutError:
            await player.kill()
            result, reason = _loss(side), f"{player.spec.name} stalls"
            break
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError, OSError) as error:
            await player.kill()
            kind = "makes an illegal move" if "illegal" in str(error).lower() else "crashes"
            result, reason = _loss(side), f"{player.spec.name} {kind}: {error}"
            break
        used = time.monotonic() - started
        if tc.base is not None and fixed_nodes is None:
            remaining = clocks[side] - used  # type: ignore[operator]
            if remaining < 0:
                result, reason = _loss(side), f"{player.spec.name} loses on time"
                break
            clocks[side] = remaining + tc.increment
        move = play.move
        if move is None or move not in board.legal_moves:
            result, reason = _loss(side), f"{player.spec.name} makes an illegal move: {move}"
            break
        score = play.info.get("score")
        if score is not None:
            scores[side].append(score.pov(side).score(mate_score=100_000))
        comments.append(f"{_score_text(score, side)}/{used:.2f}s")
        board.push(move)
    return GameResult(white.spec.name, black.spec.name, result, reason,
                      _pgn(opening, board, white, black, result, reason, comments, tc, game_number))


def game_over(board: chess.Board) -> tuple[str, str] | None:
    """(result, reason) when the rules end the game. A threefold repetition or fifty moves end it
    when they have happened, as in engine matches; not when the side to move merely could claim
    them with its next move (python-chess's `claim_draw`), which would take a win from a side
    that is about to avoid the repetition."""
    outcome = board.outcome(claim_draw=False)
    if outcome is not None:
        return outcome.result(), outcome.termination.name.lower().replace("_", " ")
    if board.is_repetition(3):
        return "1/2-1/2", "threefold repetition"
    if board.halfmove_clock >= 100:
        return "1/2-1/2", "fifty moves"
    return None


def _limit(tc: TimeControl, clocks: dict[chess.Color, float | None]) -> chess.engine.Limit:
    if tc.base is not None:
        return chess.engine.Limit(white_clock=max(0.001, clocks[chess.WHITE] or 0), black_clock=max(0.001, clocks[chess.BLACK] or 0),
                                  white_inc=tc.increment, black_inc=tc.increment)
    return chess.engine.Limit(time=tc.movetime, depth=tc.depth, nodes=tc.nodes)


def _loss(side: chess.Color) -> str:
    return "0-1" if side == chess.WHITE else "1-0"


def _score_text(score: chess.engine.PovScore | None, side: chess.Color) -> str:
    if score is None:
        return "-"
    return str(score.pov(side))  # python-chess signs it: +46, -3, 0, #+3


def _adjudicate(board: chess.Board, scores: dict[chess.Color, list[int]], rules: Adjudication,
                tablebase: Any) -> tuple[str, str] | None:
    if tablebase is not None and chess.popcount(board.occupied) <= 5 and not board.castling_rights:
        try:
            wdl = tablebase.probe_wdl(board)
        except (KeyError, IndexError, ValueError):
            wdl = None
        if wdl is not None:
            if wdl > 0:
                return ("1-0" if board.turn == chess.WHITE else "0-1"), "tablebase win"
            if wdl < 0:
                return ("0-1" if board.turn == chess.WHITE else "1-0"), "tablebase win"
            return "1/2-1/2", "tablebase draw"
    white, black = scores[chess.WHITE], scores[chess.BLACK]
    n = rules.resign_moves
    if rules.resign_score is not None and len(white) >= n and len(black) >= n:
        if all(s <= -rules.resign_score for s in white[-n:]) and all(s >= rules.resign_score for s in black[-n:]):
            return "0-1", "adjudication: White's score says lost"
        if all(s <= -rules.resign_score for s in black[-n:]) and all(s >= rules.resign_score for s in white[-n:]):
            return "1-0", "adjudication: Black's score says lost"
    n = rules.draw_moves
    if (rules.draw_score is not None and board.fullmove_number > rules.draw_after
            and len(white) >= n and len(black) >= n
            and all(abs(s) <= rules.draw_score for s in white[-n:] + black[-n:])):
        return "1/2-1/2", "adjudication: both scores say drawn"
    return None


def _pgn(opening: chess.Board, board: chess.Board, white: Player, black: Player, result: str, reason: str,
         comments: list[str], tc: TimeControl, number: int) -> chess.pgn.Game:
    game = chess.pgn.Game()
    game.headers.update({
        "Event": "cb-async match", "Site": "local", "Date": datetime.date.today().strftime("%Y.%m.%d"),
        "Round": str(number), "White": white.spec.name, "Black": black.spec.name, "Result": result,
        "TimeControl": tc.describe(), "Termination": reason,
    })
    if opening != chess.Board():
        game.setup(opening)
    node: chess.pgn.GameNode = game
    for move, comment in zip(board.move_stack[len(opening.move_stack):], comments):
        node = node.add_variation(move, comment=comment)
    return game


# -- the match ----------------------------------------------------------------------------------

@dataclasses.dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0
    forfeits: list[str] = dataclasses.field(default_factory=list)
    #: Engine name -> resident KiB of its process tree after each game (with `--rss`).
    rss: dict[str, list[int]] = dataclasses.field(default_factory=dict)
    #: The SPRT's verdict where it was reached ("H1 accepted at game 984, W/D/L ..."): games
    #: already in flight still finish and are counted, and may move the LLR back inside its
    #: bounds, but the test stopped on this.
    decision: str | None = None
    #: Finished game pairs by the first engine's points in them: 0, 1/2, 1, 3/2, 2.
    penta: list[int] = dataclasses.field(default_factory=lambda: [0] * 5)
    #: The first engine's points in a pair's first finished game, until its other one ends.
    _half_pairs: dict[int, float] = dataclasses.field(default_factory=dict)

    def llr(self, sprt: Sprt) -> float:
        """The SPRT's LLR: pentanomial once a pair has finished, trinomial before."""
        if sum(self.penta):
            return sprt.llr_penta(self.penta)
        return sprt.llr(self.wins, self.draws, self.losses)

    def decide(self, sprt: Sprt) -> bool:
        """Whether the SPRT has decided, recording where the first time it does."""
        if self.decision is None:
            llr = self.llr(sprt)
            verdict = sprt.verdict(llr)
            if verdict is not None:
                self.decision = (f"{verdict} at game {self.games}, W/D/L {self.wins}/{self.draws}/{self.losses}, "
                                 f"LLR {llr:.2f}")
        return self.decision is not None

    def add(self, game: GameResult, first: str, pair: int | None = None) -> None:
        """Count a game; `pair` names the opening pair it belongs to (game numbers 2k and 2k+1)."""
        if game.result == "1/2-1/2":
            self.draws += 1
            points = 0.5
        elif (game.result == "1-0") == (game.white == first):
            self.wins += 1
            points = 1.0
        else:
            self.losses += 1
            points = 0.0
        if pair is not None:
            other = self._half_pairs.pop(pair, None)
            if other is None:
                self._half_pairs[pair] = points
            else:
                self.penta[round(2 * (points + other))] += 1
        if any(word in game.reason for word in ("on time", "illegal", "crashes", "stalls")):
            self.forfeits.append(game.reason)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def sample_rss(self, players: Sequence[Player]) -> None:
        from cb_async.tools.procinfo import tree_rss_kib

        for player in players:
            if player.transport is not None and player.engine is not None:
                kib = tree_rss_kib(player.transport.get_pid())
                if kib:
                    self.rss.setdefault(player.spec.name, []).append(kib)

    def rss_lines(self) -> list[str]:
        """Per engine: resident memory after its first game, the most and after its last."""
        return [f"memory {name}: first {kib[0] / 1024:.1f} MiB, max {max(kib) / 1024:.1f} MiB, "
                f"last {kib[-1] / 1024:.1f} MiB over {len(kib)} samples" for name, kib in self.rss.items()]


def progress_line(tally: Tally, total: int, names: tuple[str, str], sprt: Sprt | None) -> str:
    elo, margin, los = elo_summary(tally.wins, tally.draws, tally.losses)
    score = (tally.wins + tally.draws / 2) / tally.games if tally.games else 0.0
    line = (f"{names[0]} vs {names[1]}: {tally.games}/{total} games, W/D/L {tally.wins}/{tally.draws}/{tally.losses}, "
            f"score {score:.1%}, Elo {elo:+.1f} ± {margin:.1f}, LOS {los:.1%}, forfeits {len(tally.forfeits)}")
    if sum(tally.penta):
        penta_elo, penta_margin = penta_summary(tally.penta)
        line += f", penta {tally.penta} Elo {penta_elo:+.1f} ± {penta_margin:.1f}"
    if sprt is not None:
        line += ", " + sprt.state(tally.wins, tally.draws, tally.losses, tally.penta)
    return line


async def run_match(specs: tuple[EngineSpec, EngineSpec], games: int, openings: list[chess.Board], tc: TimeControl,
                    adjudication: Adjudication, concurrency: int, pgn_path: Path | None, sprt: Sprt | None,
                    seed: int, out: Any = sys.stdout, ponder: bool = False, rss: bool = False,
                    injector: Injector | None = None) -> Tally:
    rng = random.Random(seed)
    order = openings[:]
    rng.shuffle(order)
    tally = Tally()
    names = (specs[0].name, specs[1].name)
    tablebase = None
    if adjudication.tablebases:
        import chess.syzygy

        tablebase = chess.syzygy.open_tablebase(adjudication.tablebases)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for number in range(games):
        queue.put_nowait(number)
    stop = asyncio.Event()
    pgn_handle = pgn_path.open("a", encoding="utf-8") if pgn_path else None

    async def worker() -> None:
        players = (Player(specs[0]), Player(specs[1]))
        try:
            while not stop.is_set():
                try:
                    number = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                opening = order[(number // 2) % len(order)]
                first_is_white = number % 2 == 0
                white, black = (players[0], players[1]) if first_is_white else (players[1], players[0])
                game = await play_game(white, black, opening, tc, adjudication, number + 1, tablebase, ponder,
                                       injector)
                tally.add(game, names[0], number // 2)
                if rss:
                    tally.sample_rss(players)
                if pgn_handle is not None:
                    print(game.pgn, file=pgn_handle, end="\n\n", flush=True)
                print(f"game {number + 1}: {game.white} - {game.black} {game.result} ({game.reason})", file=out)
                print(progress_line(tally, games, names, sprt), file=out, flush=True)
                if sprt is not None and tally.decide(sprt):
                    stop.set()
        finally:
            for player in players:
                await player.close()

    try:
        await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    finally:
        if pgn_handle is not None:
            pgn_handle.close()
    return tally


def _key_values(option: str, words: Sequence[str], keys: Sequence[str]) -> dict[str, float]:
    """`--sprt elo0=0 elo1=5` and the like: each word KEY=NUMBER, with a known KEY."""
    values: dict[str, float] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in keys:
            raise UsageError(f"{option}: expected {' '.join(f'{k}=N' for k in keys)}, not {word!r}")
        try:
            values[key] = float(value)
        except ValueError:
            raise UsageError(f"{option}: {key} must be a number, not {value!r}") from None
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = __doc__.split("\n\n", 2)[0] + "\n\n" + __doc__.split("\n\n", 2)[1]
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("--engine", nargs="+", action="append", required=True, metavar="KEY=VALUE",
                        help="cmd=COMMAND [name=NAME] [proto=uci|xboard] [nodes=N] [option.NAME=VALUE ...]; give it twice. "
                             "nodes=N plays that engine at N nodes per move with no clock (the other keeps --tc)")
    parser.add_argument("--games", type=cli.whole_number(1), default=2)
    parser.add_argument("--openings", type=cli.readable_file, default=DEFAULT_OPENINGS,
                        help="EPD or PGN file of start positions (default: the 64 built-in openings)")
    control = parser.add_mutually_exclusive_group()
    control.add_argument("--tc", help="base+increment in seconds, e.g. 10+0.1")
    control.add_argument("--movetime", type=cli.number(0.001), help="seconds per move")
    parser.add_argument("--depth", type=cli.whole_number(1))
    parser.add_argument("--nodes", type=cli.whole_number(1))
    parser.add_argument("--concurrency", type=cli.whole_number(1), default=1)
    parser.add_argument("--pgn", type=cli.appendable_file, help="append every game to this PGN file")
    parser.add_argument("--resign", nargs="+", metavar="KEY=VALUE", help="score=CP moves=N")
    parser.add_argument("--draw", nargs="+", metavar="KEY=VALUE", help="score=CP moves=N after=FULLMOVES")
    parser.add_argument("--tb", metavar="DIR", type=cli.existing_folder, help="adjudicate with Syzygy tablebases in DIR")
    parser.add_argument("--sprt", nargs="+", metavar="KEY=VALUE", help="elo0=0 elo1=5 alpha=0.05 beta=0.05")
    parser.add_argument("--seed", type=int, default=1, help="shuffles the openings reproducibly")
    parser.add_argument("--ponder", action="store_true", help="the engines ponder on the opponent's time")
    parser.add_argument("--fault", nargs="+", metavar="KEY=VALUE",
                        help="every=N signal=STOP|KILL after=MS: signal the first engine's search worker every "
                             "N-th of its moves, MS ms into it (cb-async engines, Linux)")
    parser.add_argument("--rss", action="store_true",
                        help="sample each engine's resident memory (with its children) after every game (Linux)")


def _fault(words: Sequence[str]) -> Fault:
    import signal as signals

    if not sys.platform.startswith("linux"):
        raise UsageError("--fault finds the search worker through /proc: Linux only")
    fields: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or key not in ("every", "signal", "after"):
            raise UsageError(f"--fault: expected every=N, signal=STOP|KILL or after=MS, not {word!r}")
        fields[key] = value
    name = fields.get("signal", "STOP").upper().removeprefix("SIG")
    if name not in ("STOP", "KILL"):
        raise UsageError(f"--fault: signal must be STOP or KILL, not {fields.get('signal')!r}")
    try:
        every, after = int(fields.get("every", "10")), float(fields.get("after", "50"))
    except ValueError:
        raise UsageError("--fault: every and after are numbers") from None
    if every < 1 or after < 0:
        raise UsageError("--fault: every must be at least 1 and after at least 0")
    return Fault(every, int(getattr(signals, f"SIG{name}")), after / 1000)


def _time_control(args: argparse.Namespace) -> TimeControl:
    if args.tc:
        try:
            tc = TimeControl.parse(args.tc)
        except ValueError:
            raise UsageError(f"--tc takes base+increment in seconds, e.g. 10+0.1, not {args.tc!r}") from None
        if not (tc.base is not None and tc.base > 0 and tc.increment >= 0):
            raise UsageError(f"--tc needs a base above 0 and an increment of at least 0, not {args.tc!r}")
        return tc
    if args.movetime or args.depth or args.nodes:
        return TimeControl(movetime=args.movetime, depth=args.depth, nodes=args.nodes)
    raise UsageError("give --tc, --movetime, --depth or --nodes")


def run(args: argparse.Namespace) -> int:
    if len(args.engine) != 2:
        raise UsageError(f"give exactly two --engine, not {len(args.engine)}")
    try:
        specs = (parse_engine(args.engine[0]), parse_engine(args.engine[1]))
    except ValueError as error:
        raise UsageError(f"--engine: {error}") from None
    for spec in specs:
        if shutil.which(spec.command[0]) is None:
            raise UsageError(f"--engine: no such program: {spec.command[0]}")
    if specs[0].name == specs[1].name:
        specs[1].name += "-2"
    tc = _time_control(args)
    resign = _key_values("--resign", args.resign or [], ("score", "moves"))
    draw = _key_values("--draw", args.draw or [], ("score", "moves", "after"))
    adjudication = Adjudication(
        resign_score=int(resign["score"]) if "score" in resign else None, resign_moves=int(resign.get("moves", 3)),
        draw_score=int(draw["score"]) if "score" in draw else None, draw_moves=int(draw.get("moves", 8)),
        draw_after=int(draw.get("after", 40)), tablebases=args.tb,
    )
    sprt = None
    if args.sprt:
        values = _key_values("--sprt", args.sprt, ("elo0", "elo1", "alpha", "beta"))
        sprt = Sprt(values.get("elo0", 0.0), values.get("elo1", 5.0), values.get("alpha", 0.05), values.get("beta", 0.05))
        if not (0 < sprt.alpha < 1 and 0 < sprt.beta < 1 and sprt.elo0 < sprt.elo1):
            raise UsageError("--sprt needs elo0 < elo1 and alpha, beta between 0 and 1")
    injector = Injector(_fault(args.fault), specs[0].name) if args.fault else None
    try:
        openings = load_openings(Path(args.openings))
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"--openings {args.openings}: {error}") from None
    started = time.monotonic()
    try:
        tally = asyncio.run(run_match(specs, args.games, openings, tc, adjudication, args.concurrency,
                                      Path(args.pgn) if args.pgn else None, sprt,
                                      args.seed, ponder=args.ponder, rss=args.rss, injector=injector))
    except EngineStartFailed as error:
        raise UsageError(str(error)) from None
    print(f"Finished in {time.monotonic() - started:.0f} s. "
          + progress_line(tally, tally.games, (specs[0].name, specs[1].name), sprt))
    if tally.decision is not None:
        print(f"SPRT: {tally.decision}")
    if injector is not None:
        print(f"faults: {injector.sent} sent to {injector.target} ({injector.fault.describe()}), "
              f"{injector.missed} missed (no worker at that moment)")
    for reason in tally.forfeits:
        print(f"forfeit: {reason}")
    for line in tally.rss_lines():
        print(line)
    return 0
