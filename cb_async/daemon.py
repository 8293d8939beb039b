"""The stdio engine: a stdin reader thread, the session actor and one writer, on one event loop.

```
stdin (raw fd) -> StdinReader -> Inbox -> Session -> adapter.receive -> Command -> (session) -> SearchRunner
stdout <- Writer <- adapter.on_event <- Event <------------------------------------------------+
```
The protocol is chosen by `--protocol`, or with `auto` by the first non-blank line: `{`
selects CNP, `protover` XBoard; `xboard` selects XBoard provisionally and, if the next line is
`uci` (Arena's autodetect), UCI; anything else selects UCI and is read as a UCI command.

Start-up is ordered for speed. The worker process is forked first, before any thread exists
and before python-chess is loaded, so that it loads the search in parallel; then the stdin
thread starts, and the protocol is chosen on the main thread. A GUI's first `uci` is answered
at once, from the option table alone; only then are the event loop, the session and the
adapter loaded, while the GUI reads the options.
"""

from __future__ import annotations

import collections
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TextIO, Union

from cb_async.framing import StdinReader, TooLong
from cb_async.runner import ProcessRunner

if TYPE_CHECKING:
    from cb_async.adapters import Adapter
    from cb_async.commands import Command
    from cb_async.events import AdapterEvent, Event
    from cb_async.session import EndOfInput, InputLine, Session

PROTOCOLS = ("uci", "xboard", "cnp")

#: What the stdin thread hands over: a line (or a discarded over-long one) and when it arrived;
#: None as the line is the end of input.
Arrival = tuple[Union[str, TooLong, None], float]


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

    def note_input(self, line: str | TooLong | None) -> None:
        self.write("<<", "<end of input>" if line is None else
                   f"<line of {line.size} bytes>" if isinstance(line, TooLong) else line)

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
        except OSError:
            self.broken = True
            return
        if self._log is not None:
            for line in lines:
                self._log.write(">>", line)


class Inbox:
    """The hand-off from the stdin thread: kept here until the event loop exists, then passed
    straight to it. Arrivals keep their order across the switch."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._early: collections.deque[Arrival] = collections.deque()
        self._deliver: Callable[[Arrival], None] | None = None

    def put(self, line: str | TooLong | None, received_at: float) -> None:
        """On the stdin thread."""
        with self._lock:
            deliver = self._deliver
            if deliver is None:
                self._early.append((line, received_at))
                self._lock.notify()
                return
        deliver((line, received_at))

    def take(self) -> Arrival:
        """Before the loop: the next arrival, waiting for it."""
        with self._lock:
            while not self._early:
                self._lock.wait()
            return self._early.popleft()

    def connect(self, deliver: Callable[[Arrival], None]) -> list[Arrival]:
        """From now on hand arrivals to `deliver`; returns those that came before, in order
        (submit them before yielding to the loop, and the order holds)."""
        with self._lock:
            self._deliver = deliver
            early = list(self._early)
            self._early.clear()
        return early


def make_adapter(protocol: str, max_time_ms: int | None = None) -> Adapter:
    if protocol == "uci":
        from cb_async.adapters.uci import UciAdapter

        return UciAdapter()
    if protocol == "xboard":
        from cb_async.adapters.xboard import XBoardAdapter

        return XBoardAdapter()
    if protocol == "cnp":
        from cb_async.adapters.cnp import CnpAdapter

        return CnpAdapter(max_time_ms=max_time_ms)
    raise UnsupportedProtocol(f"unknown protocol {protocol!r}")


def run(protocol: str = "auto", log_path: str | None = None, max_time_ms: int | None = None) -> int:
    """Serve one engine on stdin/stdout until `quit`, end of input or SIGTERM; the exit status."""
    runner = ProcessRunner()
    runner.start()  # first: a clean fork (no threads yet), and the worker warms up in parallel
    log = TranscriptLog(log_path) if log_path else None
    try:
        inbox = Inbox()
        StdinReader(sys.stdin.fileno(), inbox.put).start()
        writer = Writer(sys.stdout.fileno(), log)
        first, protocol = _choose_protocol(inbox, protocol, log)
        if protocol == "uci" and first and isinstance(first[-1][0], str) and first[-1][0].strip() == "uci":
            first.pop()
            writer.write_lines(_uci_identity())  # the GUI reads the options while the rest loads
        import anyio

        return anyio.run(_serve, runner, inbox, first, writer, make_adapter(protocol, max_time_ms), log)
    finally:
        runner.close()
        if log is not None:
            log.close()


def _uci_identity() -> list[str]:
    from cb_async.adapters.uci_identity import identity_lines
    from cb_async.options import OPTIONS
    from cb_async.version import ENGINE_AUTHOR, ENGINE_NAME, __version__

    return identity_lines(ENGINE_NAME, __version__, ENGINE_AUTHOR, OPTIONS)


def _choose_protocol(inbox: Inbox, protocol: str, log: TranscriptLog | None) -> tuple[list[Arrival], str]:
    """Read just enough input to decide the protocol; those lines are then processed by it."""
    if protocol != "auto":
        return [], protocol
    taken: list[Arrival] = []
    provisional_xboard = False
    while True:
        arrival = inbox.take()
        if log is not None:
            log.note_input(arrival[0])
        taken.append(arrival)
        line = arrival[0]
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


async def _serve(runner: ProcessRunner, inbox: Inbox, first: list[Arrival], writer: Writer, adapter: Adapter,
                 log: TranscriptLog | None) -> int:
    import anyio
    import anyio.from_thread
    import anyio.lowlevel

    from cb_async.session import Session

    await runner.attach()

    def sink(event: Event | AdapterEvent) -> list[Command]:
        lines, followups = adapter.on_event(event)
        writer.write_lines(lines)
        for note in adapter.drain_notes():
            print(f"cb-async: {note}", file=sys.stderr, flush=True)
        return followups

    session = Session(runner, sink, reader=lambda item: adapter.receive(item.text, item.received_at))
    token = anyio.lowlevel.current_token()

    def arrive(arrival: Arrival) -> None:
        line, received_at = arrival
        if log is not None:
            log.note_input(line)
        session.submit(_mailbox_item(line, received_at))

    def deliver(arrival: Arrival) -> None:  # on the stdin thread
        try:
            anyio.from_thread.run_sync(arrive, arrival, token=token)
        except Exception:
            pass  # the loop has closed: the engine is leaving, the input no longer matters

    for line, received_at in first:
        session.submit(_mailbox_item(line, received_at))
    for arrival in inbox.connect(deliver):
        arrive(arrival)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_signals, session, adapter.name)
        await session.run()
        tasks.cancel_scope.cancel()
    return 0


def _mailbox_item(line: str | TooLong | None, received_at: float) -> InputLine | EndOfInput:
    from cb_async.session import EndOfInput, InputLine

    return EndOfInput() if line is None else InputLine(line, received_at)


async def _signals(session: Session, protocol: str) -> None:
    """SIGTERM ends the engine cleanly (status 0). SIGINT never kills an XBoard engine (some
    GUIs send it to interrupt thinking); elsewhere it quits like SIGTERM."""
    import anyio

    from cb_async.commands import Quit

    wanted = [signal.SIGTERM]
    if protocol == "xboard":
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    else:
        wanted.append(signal.SIGINT)
    try:
        with anyio.open_signal_receiver(*wanted) as received:
            async for _ in received:
                session.submit(Quit())
    except NotImplementedError:
        pass  # no signal handlers on this platform's event loop: the defaults stay
