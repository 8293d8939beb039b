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
from typing import TYPE_CHECKING, BinaryIO, Union

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


def note(text: str) -> None:
    """One line on stderr, for the user; never fatal. A closed or full stderr loses the line
    (whoever closed it did not want to read it), and with no stderr at all nothing is written:
    `print(file=None)` would write to stdout, which carries protocol only."""
    try:
        os.write(2, f"cb-async: {text}\n".encode("utf-8", errors="replace"))
    except OSError:
        pass


class TranscriptLog:
    """`--log FILE`: every line in and out, timestamped, for diagnosing GUI problems.

    A log is never worth the game: the first write that fails (a full disk, a device that
    refuses, a file system gone read-only) turns the log off with one line on stderr, and the
    engine plays on. Unbuffered, so a failed line is never retried by a later flush or close."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: BinaryIO | None = open(path, "ab", buffering=0)
        self._start = time.monotonic()

    @property
    def on(self) -> bool:
        return self._file is not None

    def write(self, direction: str, line: str) -> None:
        file = self._file
        if file is None:
            return
        stamp = time.strftime("%H:%M:%S")
        try:
            file.write(f"{stamp} {time.monotonic() - self._start:10.3f} {direction} {line}\n".encode())
        except OSError as error:
            self.close()
            note(f"the log {self.path} is off: {error.strerror or error}; the engine plays on")

    def note_input(self, line: str | TooLong | None) -> None:
        self.write("<<", "<end of input>" if line is None else
                   f"<line of {line.size} bytes>" if isinstance(line, TooLong) else line)

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            try:
                file.close()
            except OSError:
                pass


class Writer:
    """The single stdout writer. Lines go out whole and at once (no buffering to flush).

    When the output is closed (the GUI died, `cb-async | head`, a wrapper closed its read end),
    the engine has no one to answer and ends, like any Unix program: a failed write, or on a
    pipe or socket the watch thread (`watch_output`) which sees the reader go even while no
    line is written (a long `go infinite` iteration), calls the `when_closed` callback once."""

    def __init__(self, fd: int, log: TranscriptLog | None) -> None:
        self._fd = fd
        self._log = log
        self._lock = threading.Lock()
        self._on_closed: Callable[[], None] | None = None
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
            self.output_closed()
            return
        if self._log is not None:
            for line in lines:
                self._log.write(">>", line)

    def output_closed(self) -> None:
        """The output has gone (on any thread): write nothing more, and say so once."""
        with self._lock:
            if self.broken:
                return
            self.broken = True
            callback = self._on_closed
        if callback is not None:
            callback()

    def when_closed(self, callback: Callable[[], None]) -> None:
        """Call `callback` once when the output closes (at once if it has already)."""
        with self._lock:
            self._on_closed = callback
            closed = self.broken
        if closed:
            callback()


def watch_output(fd: int, writer: Writer) -> None:
    """Tell `writer` when the reader of `fd` goes away, on a thread of its own. Only pipes and
    sockets (where `poll` reports the reader's end as an error with no event asked for) and
    only where `poll` exists; elsewhere a failed write is how the engine learns it."""
    import select
    import stat

    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return
    if not hasattr(select, "poll") or not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return

    def watch() -> None:
        poller = select.poll()
        poller.register(fd, 0)  # no event asked: only POLLERR, POLLHUP, POLLNVAL wake it
        while True:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            except OSError:
                return
            if any(revents & (select.POLLERR | select.POLLHUP | select.POLLNVAL) for _, revents in events):
                writer.output_closed()
                return

    threading.Thread(target=watch, name="cb-async-output-watch", daemon=True).start()


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
    _fill_standard_descriptors()
    runner = ProcessRunner()
    runner.start()  # first: a clean fork (no threads yet), and the worker warms up in parallel
    log = _open_log(log_path) if log_path else None
    try:
        inbox = Inbox()
        StdinReader(sys.stdin.fileno(), inbox.put).start()
        writer = Writer(sys.stdout.fileno(), log)
        watch_output(sys.stdout.fileno(), writer)
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


def _fill_standard_descriptors() -> None:
    """A standard descriptor closed when the engine started (`2>&-`) is opened on the null
    device: else the next file or pipe opened would take its number, and a note meant for
    stderr would land in the worker's pipe or the log."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            opened = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if opened != fd:
                os.dup2(opened, fd)
                os.close(opened)


def _open_log(path: str) -> TranscriptLog | None:
    try:
        return TranscriptLog(path)
    except OSError as error:
        note(f"no log: cannot write to {path}: {error.strerror or error}; the engine plays on")
        return None


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
        for text in adapter.drain_notes():
            note(text)
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

    loop_thread = threading.get_ident()

    def output_closed() -> None:  # on the loop, or on the watch thread
        from cb_async.commands import Quit

        if threading.get_ident() == loop_thread:
            note("the output was closed: ending")
            session.submit(Quit())
            return
        try:
            anyio.from_thread.run_sync(output_closed, token=token)
        except Exception:
            pass  # the loop has closed: the engine is leaving anyway

    writer.when_closed(output_closed)
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
