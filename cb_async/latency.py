"""`cb-async latency`: how fast the engine answers, measured from outside like a GUI would.

Start-up to `uciok` (a new process each time), `isready` -> `readyok` while a search runs, and
`stop` -> `bestmove` during `go infinite`. Prints medians and the 99th percentile; pass
`--engine CMD` to measure another UCI engine (Stockfish, Sunfish) side by side in the same run.
"""

from __future__ import annotations

import argparse
import os
import queue
import shlex
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def default_engine() -> list[str]:
    script = Path(sys.executable).parent / "cb-async"
    return [str(script)] if script.exists() else [sys.executable, "-m", "cb_async"]


class Uci:
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, bufsize=0)
        self.lines: queue.Queue[tuple[str, float]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.put((raw.decode(errors="replace").strip(), time.perf_counter()))

    def send(self, line: str) -> float:
        assert self.process.stdin is not None
        start = time.perf_counter()
        self.process.stdin.write((line + "\n").encode())
        return start

    def wait_for(self, prefix: str, timeout: float = 30.0) -> float:
        deadline = time.monotonic() + timeout
        while True:
            line, at = self.lines.get(timeout=max(0.001, deadline - time.monotonic()))
            if line.startswith(prefix):
                return at

    def close(self) -> None:
        try:
            self.send("quit")
            self.process.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()


def start_up(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        engine = Uci(command)
        engine.send("uci")
        times.append(engine.wait_for("uciok") - started)
        engine.close()
    return times


def isready_while_searching(command: list[str], count: int) -> list[float]:
    engine = Uci(command)
    engine.send("uci")
    engine.wait_for("uciok")
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


def stop_latency(command: list[str], count: int, think: float) -> list[float]:
    engine = Uci(command)
    engine.send("uci")
    engine.wait_for("uciok")
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


def summary(name: str, seconds: list[float]) -> str:
    ms = sorted(t * 1000 for t in seconds)
    p99 = ms[min(len(ms) - 1, int(round(0.99 * (len(ms) - 1))))]
    return f"{name:<28} median {statistics.median(ms):8.2f} ms   p99 {p99:8.2f} ms   max {ms[-1]:8.2f} ms   (n={len(ms)})"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="cb-async latency", description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", action="append", metavar="CMD",
                        help="a UCI engine command line to measure (repeatable); default: this cb-async")
    parser.add_argument("--starts", type=int, default=10)
    parser.add_argument("--isready", type=int, default=200)
    parser.add_argument("--stops", type=int, default=100)
    parser.add_argument("--think", type=float, default=0.1, help="seconds each search runs before its stop")
    args = parser.parse_args(argv)
    commands = [shlex.split(c) for c in args.engine] if args.engine else [default_engine()]
    for command in commands:
        print(f"engine: {' '.join(command)}   (cores: {os.cpu_count()})")
        print(summary("start -> uciok", start_up(command, args.starts)))
        print(summary("isready -> readyok (search)", isready_while_searching(command, args.isready)))
        print(summary("stop -> bestmove (infinite)", stop_latency(command, args.stops, args.think)))
        sys.stdout.flush()
    return 0
