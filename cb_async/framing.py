"""Line framing: bytes in, lines out. Owns `\\n` and `\\r\\n`, the line cap and end of input.

`LineFramer` is sans-IO (feed it bytes, take lines); `StdinReader` is the thin thread that
reads the raw file descriptor and hands each line, stamped with its arrival time, to the event
loop. A thread (rather than `loop.add_reader`) works for pipes on every OS, Windows included,
and the stamp lets the clock of a `go` count from when it really arrived.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

#: The longest line read, `\r` included; a longer one is discarded unread.
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class TooLong:
    """A line over MAX_LINE_BYTES was discarded; `size` is how many bytes it had."""

    size: int


class LineFramer:
    """Splits a byte stream into text lines; invalid UTF-8 is replaced, never fatal."""

    def __init__(self, max_line_bytes: int = MAX_LINE_BYTES) -> None:
        self._max = max_line_bytes
        self._buffer = bytearray()
        self._discarding = 0  # bytes of an over-long line seen so far, while skipping it

    def feed(self, data: bytes) -> list[str | TooLong]:
        out: list[str | TooLong] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            chunk = data[start:] if newline < 0 else data[start:newline]
            if self._discarding:
                self._discarding += len(chunk)
            elif len(self._buffer) + len(chunk) > self._max:
                self._discarding = len(self._buffer) + len(chunk)
                self._buffer.clear()
            else:
                self._buffer += chunk
            if newline < 0:
                return out
            if self._discarding:
                out.append(TooLong(self._discarding))
                self._discarding = 0
            else:
                out.append(_decode(bytes(self._buffer)))
                self._buffer.clear()
            start = newline + 1

    def close(self) -> list[str | TooLong]:
        """End of input: a last line without its newline still counts."""
        if self._discarding:
            size, self._discarding = self._discarding, 0
            return [TooLong(size)]
        if self._buffer:
            line = _decode(bytes(self._buffer))
            self._buffer.clear()
            return [line]
        return []


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", errors="replace")


LineHandler = Callable[["str | TooLong | None", float], None]


class StdinReader:
    """Reads `fd` on a daemon thread; calls `deliver(line, received_at)`, then `deliver(None, t)`
    at end of input. `deliver` is called on the reader thread: it must hand over thread-safely
    (the daemon uses `loop.call_soon_threadsafe`)."""

    def __init__(self, fd: int, deliver: LineHandler, chunk_size: int = 65536) -> None:
        self._fd = fd
        self._deliver = deliver
        self._chunk_size = chunk_size
        self._thread = threading.Thread(target=self._run, name="cb-async-stdin", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        framer = LineFramer()
        while True:
            try:
                data = os.read(self._fd, self._chunk_size)
            except InterruptedError:
                continue
            except OSError:
                data = b""
            now = time.monotonic()
            if not data:
                for line in framer.close():
                    self._deliver(line, now)
                self._deliver(None, now)
                return
            for line in framer.feed(data):
                self._deliver(line, now)
