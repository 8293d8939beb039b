"""The real `cb-async` binary under test: start it, write lines, read every line it writes.

A reader thread stamps each output line; `expect` waits on that queue with a deadline, so no
test sleeps and hopes.
"""

from __future__ import annotations

import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def engine_command() -> list[str]:
    """The installed `cb-async` script next to this Python, else `python -m cb_async`."""
    script = Path(sys.executable).parent / ("cb-async.exe" if os.name == "nt" else "cb-async")
    if script.exists():
        return [str(script)]
    found = shutil.which("cb-async")
    return [found] if found else [sys.executable, "-m", "cb_async"]


class ProtocolError(AssertionError):
    """The engine wrote something it should not have, or nothing in time."""


@dataclass
class OutputLine:
    text: str
    at: float


#: The engine shows every deprecation and resource warning on stderr, and `close` fails on one
#: (os.fork's warning about a threaded process among them).
WARNINGS = "always::DeprecationWarning,always::ResourceWarning"


class EngineProcess:
    def __init__(self, *args: str, stderr_to: int | None = None) -> None:
        self.process = subprocess.Popen(
            [*engine_command(), *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr_to is None else stderr_to, bufsize=0,
            env={**os.environ, "PYTHONWARNINGS": WARNINGS},
        )
        self.lines: queue.Queue[OutputLine | None] = queue.Queue()
        self.transcript: list[str] = []
        self.stderr_lines: list[str] = []
        self._readers = [threading.Thread(target=self._read, daemon=True)]
        if stderr_to is None:
            self._readers.append(threading.Thread(target=self._read_stderr, daemon=True))
        for reader in self._readers:
            reader.start()
        self.eof = False

    def _read(self) -> None:
        assert self.process.stdout is not None
        try:
            for raw in self.process.stdout:
                self.lines.put(OutputLine(raw.decode("utf-8", "replace").rstrip("\r\n"), time.monotonic()))
        except (OSError, ValueError):
            pass  # closed by close()
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            for raw in self.process.stderr:
                self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))
        except (OSError, ValueError):
            pass

    # -- input ------------------------------------------------------------------------------

    def send_raw(self, data: bytes) -> float:
        assert self.process.stdin is not None
        self.transcript.append(f"> {data!r}")
        self.process.stdin.write(data)
        self.process.stdin.flush()
        return time.monotonic()

    def send(self, line: str, ending: str = "\n") -> float:
        return self.send_raw((line + ending).encode("utf-8"))

    def close_input(self) -> None:
        assert self.process.stdin is not None
        self.transcript.append("> <end of input>")
        self.process.stdin.close()

    def signal(self, sig: int) -> None:
        self.transcript.append(f"> <signal {sig}>")
        self.process.send_signal(sig)

    # -- output -----------------------------------------------------------------------------

    def read_line(self, timeout: float) -> OutputLine | None:
        """The next line, or None at end of output; ProtocolError after `timeout` seconds."""
        if self.eof:
            return None
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise self.error(f"no output within {timeout * 1000:.0f} ms") from None
        if line is None:
            self.eof = True
            return None
        self.transcript.append(f"< {line.text}")
        return line

    def expect(self, pattern: str, timeout: float = 5.0, skip: str | None = None) -> OutputLine:
        """The next line must fully match `pattern`; lines fully matching `skip` may come first."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.read_line(max(0.0, deadline - time.monotonic()))
            if line is None:
                raise self.error(f"end of output, expected /{pattern}/")
            if re.fullmatch(pattern, line.text):
                return line
            if skip is not None and re.fullmatch(skip, line.text):
                continue
            raise self.error(f"expected /{pattern}/, got {line.text!r}")

    def wait_exit(self, timeout: float = 5.0) -> int:
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise self.error(f"still running {timeout} s after it should have exited") from None
        return code

    def remaining_output(self, timeout: float = 5.0) -> list[str]:
        """Everything written after the last expectation, up to end of output."""
        rest: list[str] = []
        while (line := self.read_line(timeout)) is not None:
            rest.append(line.text)
        return rest

    def error(self, message: str) -> ProtocolError:
        tail = "\n".join(self.transcript[-40:])
        errors = "\n".join(self.stderr_lines[-10:])
        return ProtocolError(f"{message}\n--- transcript (last lines) ---\n{tail}\n--- stderr ---\n{errors}")

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        # Let the readers see end of output before their pipes are closed: a reader still
        # between two reads when its descriptor is closed would read from whatever pipe gets the
        # same number next, and steal the first byte of the next engine's output.
        for reader in self._readers:
            reader.join(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        warned = [line for line in self.stderr_lines if "DeprecationWarning" in line or "ResourceWarning" in line]
        if warned:
            raise ProtocolError("the engine warned:\n" + "\n".join(warned))

    def __enter__(self) -> EngineProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT}
