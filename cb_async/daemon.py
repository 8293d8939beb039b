"""The stdio engine: one event loop, a stdin reader thread, the session actor, one writer.

```
stdin (raw fd) -> StdinReader -> adapter.receive -> Command -> Session -> SearchRunner (worker)
stdout <- Writer <- adapter.on_event <- Event <-------------------------------------+
```
The protocol is chosen by `--protocol`, or with `auto` by the first non-blank line: `{`
selects CNP, `protover` XBoard; `xboard` selects XBoard provisionally and, if the next line is
`uci` (Arena's autodetect), UCI; anything else selects UCI and is read as a UCI command.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TextIO

from cb_async.runner import SearchRunner

if TYPE_CHECKING:
    import asyncio

    from cb_async.commands import Command
    from cb_async.framing import TooLong
    from cb_async.session import Session

PROTOCOLS = ("uci", "xboard", "cnp")


class UnsupportedProtocol(Exception):
    pass


class TranscriptLog:
    """`--log FILE`: every line in and out, timestamped, for diagnosing GUI problems."""

    def __init__(self, path: str) -> None:
        self._file: TextIO = open(path, "a", encoding="utf-8", buffering=1)
        self._start = time.monotonic()

    def write(self, direction: str, line: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        self._file.write(f"{stamp} {time.monotonic() - self._start:10.3f} {direction} {line}\n")

    def close(self) -> None:
        self._file.close()


class Writer:
    """The single stdout writer. Lines go out whole and at once (no buffering to flush)."""

    def __init__(self, fd: int, log: TranscriptLog | None) -> None:
        self._fd = fd
        self._log = log
        self.broken = False

    def write_lines(self, lines: Iterable[str]) -> None:
        lines = list(lines)
        if not lines or self.broken:
            return
        data = ("\n".join(lines) + "\n").encode("utf-8")
        try:
            while data:
                written = os.write(self._fd, data)
                data = data[written:]
        except (BrokenPipeError, OSError):
            self.broken = True
            return
        if self._log is not None:
            for line in lines:
                self._log.write(">>", line)


def make_adapter(protocol: str, max_time_ms: int | None = None) -> Any:
    if protocol == "uci":
        from cb_async.adapters.uci import UciAdapter

        return UciAdapter()
    if protocol == "xboard":
        try:
            from cb_async.adapters.xboard import XBoardAdapter  # type: ignore[import-not-found]
        except ImportError:
            raise UnsupportedProtocol("the XBoard protocol is not available yet") from None
        return XBoardAdapter()
    if protocol == "cnp":
        try:
            from cb_async.adapters.cnp import CnpAdapter  # type: ignore[import-not-found]
        except ImportError:
            raise UnsupportedProtocol("the CNP protocol is not available yet") from None
        return CnpAdapter(max_time_ms=max_time_ms)
    raise UnsupportedProtocol(f"unknown protocol {protocol!r}")


def run(protocol: str = "auto", log_path: str | None = None, max_time_ms: int | None = None) -> int:
    """Serve one engine on stdin/stdout until `quit`, end of input or SIGTERM; the exit status."""
    runner = SearchRunner()
    runner.start()  # first: a clean fork (no threads yet), and the worker warms up in parallel
    log = TranscriptLog(log_path) if log_path else None
    import asyncio

    try:
        return asyncio.run(_serve(runner, protocol, log, max_time_ms))
    except UnsupportedProtocol as error:
        print(f"cb-async: {error}", file=sys.stderr)
        return 2
    finally:
        runner.close()
        if log is not None:
            log.close()


async def _serve(runner: SearchRunner, protocol: str, log: TranscriptLog | None, max_time_ms: int | None) -> int:
    # Imported here, after the worker has forked, so that both processes load in parallel.
    import asyncio

    from cb_async.framing import StdinReader, TooLong
    from cb_async.session import Session

    loop = asyncio.get_running_loop()
    runner.attach(loop)
    inbox: asyncio.Queue[tuple[str | TooLong | None, float]] = asyncio.Queue()

    def deliver(line: str | TooLong | None, received_at: float) -> None:
        try:
            loop.call_soon_threadsafe(inbox.put_nowait, (line, received_at))
        except RuntimeError:
            pass  # the loop has closed: the engine is leaving, the input no longer matters

    StdinReader(sys.stdin.fileno(), deliver).start()
    writer = Writer(sys.stdout.fileno(), log)

    def note_input(line: str | TooLong | None) -> None:
        if log is not None:
            log.write("<<", "<end of input>" if line is None else f"<line of {line.size} bytes>" if isinstance(line, TooLong) else line)

    first_lines, protocol = await _choose_protocol(inbox, protocol, note_input)
    adapter = make_adapter(protocol, max_time_ms)

    def translate(item: Any) -> list[Command]:
        if not isinstance(item, tuple):
            return [item]  # a command of the daemon's own (SIGTERM)
        line, received_at = item
        if line is None:
            return adapter.end_of_input()
        return adapter.receive(line, received_at)

    drain_notes = getattr(adapter, "drain_notes", None)  # an adapter's notes for stderr (CNP)

    def sink(event: Any) -> list[Command]:
        lines, followups = adapter.on_event(event)
        writer.write_lines(lines)
        if drain_notes is not None:
            for note in drain_notes():
                print(f"cb-async: {note}", file=sys.stderr, flush=True)
        return followups

    session = Session(runner, sink, translate)
    for item in first_lines:
        session.submit(item)
    _install_signals(loop, session, protocol)

    async def forward() -> None:
        while True:
            item = await inbox.get()
            note_input(item[0])
            session.submit(item)
            if item[0] is None:
                return

    forwarder = asyncio.create_task(forward())
    try:
        await session.run()
    finally:
        forwarder.cancel()
    return 0


async def _choose_protocol(inbox: asyncio.Queue[Any], protocol: str, note_input: Any) -> tuple[list[Any], str]:
    """Read just enough input to decide the protocol; those lines are then processed by it."""
    if protocol != "auto":
        return [], protocol
    taken: list[Any] = []
    provisional_xboard = False
    while True:
        item = await inbox.get()
        note_input(item[0])
        taken.append(item)
        line = item[0]
        if line is None:
            return taken, "xboard" if provisional_xboard else "uci"
        if not isinstance(line, str):
            continue  # an over-long line decides nothing
        text = line.strip()
        if not text:
            continue
        if text.startswith("{"):
            return taken, "uci" if provisional_xboard else "cnp"
        word = text.split()[0]
        if provisional_xboard:
            if word == "uci":
                return taken[-1:], "uci"
            return taken, "xboard"
        if word == "protover":
            return taken, "xboard"
        if word == "xboard":
            provisional_xboard = True
            continue
        return taken, "uci"


def _install_signals(loop: asyncio.AbstractEventLoop, session: Session, protocol: str) -> None:
    """SIGTERM ends the engine cleanly (status 0). SIGINT never kills an XBoard engine (some
    GUIs send it to interrupt thinking); elsewhere it quits like SIGTERM."""
    from cb_async.commands import Quit

    quit_now = lambda: session.submit(Quit())  # noqa: E731
    try:
        loop.add_signal_handler(signal.SIGTERM, quit_now)
        if protocol == "xboard":
            loop.add_signal_handler(signal.SIGINT, lambda: None)
        else:
            loop.add_signal_handler(signal.SIGINT, quit_now)
    except (NotImplementedError, RuntimeError, AttributeError):
        if protocol == "xboard":
            signal.signal(signal.SIGINT, signal.SIG_IGN)
