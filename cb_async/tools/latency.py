"""`cb-async latency`: how fast the engine answers, measured from outside like a GUI would.

Start-up to `uciok` (a new process each time), `isready` -> `readyok` while a search runs, and
`stop` -> `bestmove` during `go infinite`. Prints medians and the 99th percentile; pass
`--engine CMD` to measure another UCI engine (Stockfish, Sunfish) side by side in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from cb_async.cli import UsageError, number, whole_number
from cb_async.tools.gui_habits.driver import CheckFailed, EngineDriver


def default_engine() -> list[str]:
    script = Path(sys.executable).parent / "cb-async"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cb_async"]


class NoAnswer(Exception):
    """The engine did not write the line waited for in time."""


class Uci(EngineDriver):
    """A UCI engine driven by lines (the one driver of an engine subprocess,
    `cb_async.tools.gui_habits.driver`): each line stamped on arrival, `send` stamped as written."""

    def wait_for(self, prefix: str, timeout: float = 30.0) -> float:
        """When the next line starting with `prefix` arrived."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.read(deadline - time.monotonic())
            if line is None:
                raise NoAnswer(f"no {prefix!r} within {timeout} s")
            if line.text.startswith(prefix):
                return line.at

    def close(self) -> None:
        try:
            self.send("quit")
        except CheckFailed:
            pass  # it has exited already
        self.wait_exit(5)
        super().close()


def start_up(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.monotonic()  # the driver stamps lines with time.monotonic()
        engine = Uci(command)
        engine.send("uci")
        times.append(engine.wait_for("uciok") - started)
        engine.close()
    return times


def handshake(engine: Uci, options: Sequence[tuple[str, str]]) -> None:
    """`uci`, then the options asked for with `--option` (a `setoption` each)."""
    engine.send("uci")
    engine.wait_for("uciok")
    for name, value in options:
        engine.send(f"setoption name {name} value {value}")


def isready_while_searching(command: list[str], count: int, options: Sequence[tuple[str, str]] = ()) -> list[float]:
    engine = Uci(command)
    handshake(engine, options)
    engine.send("position startpos moves e2e4 e7e5 g1f3 b8c6")
    engine.send("go infinite")
    time.sleep(0.5)  # let the search get going: we measure answers *during* a search
    times = []
    for _ in range(count):
        sent = engine.send("isready")
        times.append(engine.wait_for("readyok") - sent)
        time.sleep(0.005)
    engine.send("stop")
    engine.wait_for("bestmove")
    engine.close()
    return times


def stop_latency(command: list[str], count: int, think: float, options: Sequence[tuple[str, str]] = ()) -> list[float]:
    engine = Uci(command)
    handshake(engine, options)
    times = []
    for i in range(count):
        engine.send("position startpos" + (" moves e2e4" if i % 2 else ""))
        engine.send("go infinite")
        engine.send("isready")
        engine.wait_for("readyok")
        time.sleep(think)  # the search must be deep in its work when the stop comes
        sent = engine.send("stop")
        times.append(engine.wait_for("bestmove") - sent)
    engine.close()
    return times


def search_answer(command: list[str], which: int) -> list[float]:
    """A fresh engine's `which`-th (1 or 2) `go depth 3`, each on its own position, `go` to
    `bestmove`, after the handshake a GUI makes (`uci`, `isready`): the first search pays for
    anything the engine did not load or warm up before it said it was ready."""
    engine = Uci(command)
    engine.send("uci")
    engine.wait_for("uciok")
    engine.send("isready")
    engine.wait_for("readyok")
    answer = 0.0
    for position in ("startpos moves d2d4", "startpos moves e2e4")[:which]:  # the second is not in the hash
        engine.send(f"position {position}")
        sent = engine.send("go depth 3")
        answer = engine.wait_for("bestmove") - sent
    engine.close()
    return [answer]


def orphan_exit(command: list[str], count: int) -> list[float]:
    """How long the search worker outlives its engine killed with SIGKILL mid-search (Linux)."""
    import signal

    from cb_async.tools.procinfo import children

    times = []
    for _ in range(count):
        engine = Uci(command)
        engine.send("go infinite")
        engine.wait_for("info depth 9")  # deep: the next info, and with it a broken pipe, is seconds away
        workers = children(engine.process.pid)
        killed = time.perf_counter()
        engine.process.kill()
        engine.process.wait()
        while any(_alive(pid) for pid in workers):
            time.sleep(0.001)
        times.append(time.perf_counter() - killed)
        engine.close()
    return times


def _alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return not stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def summary(name: str, seconds: list[float], width: int = 28) -> str:
    ms = sorted(t * 1000 for t in seconds)
    p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
    return f"{name:<{width}} median {statistics.median(ms):8.2f} ms   p99 {p99:8.2f} ms   max {ms[-1]:8.2f} ms   (n={len(ms)})"


async def _ticker_lag(seconds: float, work: Awaitable[object]) -> list[float]:
    """Lag of a 1 ms ticker: how late each `sleep(0.001)` wakes, while `work` runs."""
    lags = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        before = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(max(0.0, time.perf_counter() - before - 0.001))
    await work
    return lags


async def embedded_lag(seconds: float) -> tuple[list[float], list[float]]:
    """The host loop's lag during a search: cb_async.Engine (worker process) against the same
    search in a thread of the host, the anchor."""
    import chess
    import chess.engine

    from cb_async.embedded import Engine
    from cb_async.limits import Limits
    from cb_async.search import Searcher, StopToken

    board = chess.Board("r1bq1rk1/2p1bppp/p1np1n2/1p2p3/4P3/1BP2N2/PP1P1PPP/RNBQR1K1 w - - 1 9")
    async with Engine() as engine:
        await engine.ping()
        play = asyncio.ensure_future(engine.play(board, chess.engine.Limit(time=seconds + 0.2)))
        process_lags = await _ticker_lag(seconds, play)
    token = StopToken()
    token.set_deadlines(time.monotonic() + seconds + 0.2, time.monotonic() + seconds + 0.2)
    loop = asyncio.get_running_loop()
    thread = loop.run_in_executor(None, Searcher().search, board, (), Limits(), token, None)
    thread_lags = await _ticker_lag(seconds, thread)
    return process_lags, thread_lags


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:
        return -1


def _child_processes() -> int:
    try:
        children = 0
        me = str(os.getpid())
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    with open(f"/proc/{pid}/stat") as stat:
                        if stat.read().rsplit(")", 1)[1].split()[1] == me:
                            children += 1
                except OSError:
                    pass
        return children
    except OSError:
        return -1


async def open_close_cycles(cycles: int) -> tuple[list[tuple[int, int, int]], list[float]]:
    """Over `cycles` engines opened, asked for a depth-1 move and closed: (cycle, open fds,
    child processes) every so often, and each engine's time from opening to its first answer."""
    import chess
    import chess.engine

    from cb_async.embedded import Engine

    samples = [(0, _open_fds(), _child_processes())]
    first_answers = []
    for cycle in range(1, cycles + 1):
        opened = time.perf_counter()
        async with Engine() as engine:
            await engine.play(chess.Board(), chess.engine.Limit(depth=1))
            first_answers.append(time.perf_counter() - opened)
        if cycle % max(1, cycles // 10) == 0:
            samples.append((cycle, _open_fds(), _child_processes()))
    return samples, first_answers


async def play_latency(plays: int) -> dict[str, list[float]]:
    """`await engine.play(board, limit)` through the embedded library, timed whole: the first
    call of an open engine, then `plays` calls each of a depth-1 search (nearly all hand-offs,
    almost no search) and of a 5,000-node search."""
    import chess
    import chess.engine

    from cb_async.embedded import Engine

    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3")
    times: dict[str, list[float]] = {"first play() depth 1": [], "play() depth 1": [], "play() 5000 nodes": []}
    async with Engine() as engine:
        started = time.perf_counter()
        await engine.play(board, chess.engine.Limit(depth=1))
        times["first play() depth 1"].append(time.perf_counter() - started)
        for name, limit in (("play() depth 1", chess.engine.Limit(depth=1)),
                            ("play() 5000 nodes", chess.engine.Limit(nodes=5000))):
            for _ in range(plays):
                started = time.perf_counter()
                await engine.play(board, limit)
                times[name].append(time.perf_counter() - started)
    return times


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--engine", action="append", metavar="CMD",
                        help="a UCI engine command line to measure (repeatable, measured side by side); "
                             "default: this cb-async")
    parser.add_argument("--starts", type=whole_number(0), default=10, help="engine starts to time (0 skips)")
    parser.add_argument("--isready", type=whole_number(0), default=200, help="isready during a search (0 skips)")
    parser.add_argument("--stops", type=whole_number(0), default=100, help="stops of an infinite search (0 skips)")
    parser.add_argument("--think", type=number(0), default=0.1, help="seconds each search runs before its stop")
    parser.add_argument("--searches", type=whole_number(0), default=0,
                        help="fresh engines whose first and second `go depth 3` are timed (0 skips)")
    parser.add_argument("--orphans", type=whole_number(0), default=0,
                        help="kill the engine (SIGKILL) mid-search this many times and time its worker's exit (Linux)")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", type=_option,
                        help="set a UCI option before the isready and stop measures (repeatable), e.g. Threads=2")
    parser.add_argument("--embedded", action="store_true",
                        help="measure the embedded library instead: host loop lag during a search, "
                             "play() of a depth-1 and a 5,000-node search, and open/close cycles")
    parser.add_argument("--seconds", type=number(0.01), default=2.0, help="--embedded: how long the search runs")
    parser.add_argument("--cycles", type=whole_number(1), default=1000, help="--embedded: engine open/close cycles")
    parser.add_argument("--plays", type=whole_number(1), default=100,
                        help="--embedded: play() calls timed at depth 1 and at 5,000 nodes")


def run(args: argparse.Namespace) -> int:
    if args.embedded:
        process_lags, thread_lags = asyncio.run(embedded_lag(args.seconds))
        print(f"host loop lag of a 1 ms ticker during a {args.seconds:g} s search (cores: {os.cpu_count()})")
        print(summary("cb_async.Engine (process)", process_lags))
        print(summary("anchor: search in a thread", thread_lags))
        for name, values in asyncio.run(play_latency(args.plays)).items():
            print(summary(name, values))
        cycles, first_answers = asyncio.run(open_close_cycles(args.cycles))
        print(summary("open -> first answer", first_answers))
        print(f"open/close cycles: {', '.join(f'{c}: {fds} fds {kids} children' for c, fds, kids in cycles)}")
        return 0
    commands = [_engine_command(text) for text in args.engine] if args.engine else [default_engine()]
    # Interleaved: each round measures every engine once, so load on the machine falls on all alike.
    measures: list[tuple[str, int, Callable[[list[str]], list[float]]]] = [
        ("start -> uciok", args.starts, lambda command: start_up(command, 1)),
        ("isready -> readyok (search)", args.isready,
         lambda command: isready_while_searching(command, args.isready, args.option)),
        ("stop -> bestmove (infinite)", args.stops, lambda command: stop_latency(command, args.stops, args.think, args.option)),
        ("first go depth 3 -> bestmove", args.searches, lambda command: search_answer(command, 1)),
        ("second go depth 3 -> bestmove", args.searches, lambda command: search_answer(command, 2)),
        ("engine killed -> worker gone", args.orphans, lambda command: orphan_exit(command, args.orphans)),
    ]
    print(f"cores: {os.cpu_count()}")
    for name, count, measure in measures:
        if count == 0:
            continue
        rounds = count if name.startswith(("start", "first", "second")) else 1
        samples: dict[int, list[float]] = {index: [] for index in range(len(commands))}
        failed: set[int] = set()
        for _ in range(rounds):
            for index, command in enumerate(commands):
                if index in failed:
                    continue
                try:
                    samples[index].extend(measure(command))
                except NoAnswer:
                    failed.add(index)
        labels = [f"{name} [{' '.join(command)}]" if len(commands) > 1 else name for command in commands]
        width = max(28, *(len(label) for label in labels))
        for index, label in enumerate(labels):
            if index in failed:
                print(f"{label:<{width}} no answer within 30 s")
            else:
                print(summary(label, samples[index], width))
        sys.stdout.flush()
    return 0


def _option(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()


def _engine_command(text: str) -> list[str]:
    """The words of an --engine command line, checked: a command that cannot start is a UsageError."""
    try:
        command = shlex.split(text)
    except ValueError as error:
        raise UsageError(f"--engine {text!r}: {error}") from None
    if not command:
        raise UsageError("--engine needs a command")
    if shutil.which(command[0]) is None:
        raise UsageError(f"--engine {text!r}: no such program: {command[0]}")
    return command
