"""One engine process under test: write lines, read every line it writes, keep the transcript.

A reader thread stamps each output line as it arrives, so a check waits on a queue with a
deadline (never sleeps and hopes) and a bound is measured from when a line was written to when
the answer was read. Every line sent and received goes into the transcript with its time, which
is what a report shows around a failure.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Self


class CheckFailed(AssertionError):
    """The engine broke the rule a check stands for; the message says how."""


class Skipped(Exception):
    """The check does not apply: the engine does not claim the feature it needs."""


@dataclass(frozen=True)
class Line:
    """One line of the transcript: `>` sent, `<` received, `!` something that happened."""

    direction: str
    text: str
    at: float


#: A line the engine wrote (with its arrival time), or None once its output has ended.
Output = Line | None

Matcher = str | Callable[[str], bool]


def _matches(matcher: Matcher, text: str) -> bool:
    if isinstance(matcher, str):
        return re.fullmatch(matcher, text) is not None
    return matcher(text)


class EngineDriver:
    """The engine started from `command`; stdout is read line by line, stderr kept aside."""

    def __init__(self, command: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.command = list(command)
        self.started_at = time.monotonic()
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                env=env,
            )
        except OSError as error:
            raise CheckFailed(f"cannot start the engine {self.command!r}: {error}") from None
        self.transcript: list[Line] = []
        self.stderr_lines: list[str] = []
        self._lines: queue.Queue[Output] = queue.Queue()
        self._lock = threading.Lock()
        self.ended = False
        self._readers = [threading.Thread(target=self._read_stdout, daemon=True),
                         threading.Thread(target=self._read_stderr, daemon=True)]
        for reader in self._readers:
            reader.start()

    # -- the readers ---------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        try:
            for raw in self.process.stdout:
                text = raw.decode("utf-8", "replace").rstrip("\n")
                if text.endswith("\r"):
                    text = text[:-1]  # python-chess and cutechess strip one CR: so do we
                self._lines.put(Line("<", text, time.monotonic()))
        except (OSError, ValueError):
            pass
        self._lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        try:
            for raw in self.process.stderr:
                self.stderr_lines.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def note(self, text: str) -> None:
        with self._lock:
            self.transcript.append(Line("!", text, time.monotonic()))

    # -- input ---------------------------------------------------------------------------------

    def send_raw(self, data: bytes, shown: str | None = None) -> float:
        """Write `data` at once; return when it was written (the start of any bound)."""
        assert self.process.stdin is not None
        at = time.monotonic()
        with self._lock:
            for part in (shown if shown is not None else data.decode("utf-8", "replace")).splitlines() or [""]:
                self.transcript.append(Line(">", part, at))
        try:
            self.process.stdin.write(data)
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise CheckFailed("the engine closed its input (did it exit?)") from None
        return at

    def send(self, *lines: str, ending: str = "\n") -> float:
        """Write the lines in one write, each ended by `ending`."""
        data = "".join(line + ending for line in lines)
        shown = "\n".join(line + ("\\r" if ending == "\r\n" else "") for line in lines)
        return self.send_raw(data.encode("utf-8"), shown)

    def close_input(self) -> float:
        assert self.process.stdin is not None
        self.note("end of input")
        try:
            self.process.stdin.close()
        except OSError:
            pass
        return time.monotonic()

    def signal(self, number: int) -> None:
        self.note(f"signal {signal.Signals(number).name}")
        self.process.send_signal(number)

    # -- output --------------------------------------------------------------------------------

    def read(self, timeout: float) -> Line | None:
        """The next line; None at end of output, or if nothing came within `timeout` seconds
        (`self.ended` tells the two apart)."""
        if self.ended:
            return None
        try:
            line = self._lines.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None
        if line is None:
            self.ended = True
            self.note("end of output")
            return None
        with self._lock:
            self.transcript.append(line)
        return line

    def read_until(self, matcher: Matcher, timeout: float, what: str, *,
                   allow: Matcher | None = None, forbid: Matcher | None = None) -> tuple[Line, list[Line]]:
        """Read until a line matches; return it and the lines before it.

        `allow`: if given, every line before the match must match it. `forbid`: no line before
        the match may match it. Either broken, or no match within `timeout`, fails the check.
        """
        deadline = time.monotonic() + timeout
        before: list[Line] = []
        while True:
            line = self.read(deadline - time.monotonic())
            if line is None:
                if self.ended:
                    raise CheckFailed(f"the engine's output ended while waiting for {what}{self.exit_note()}")
                raise CheckFailed(f"no {what} within {timeout:g} s")
            if _matches(matcher, line.text):
                return line, before
            if forbid is not None and _matches(forbid, line.text):
                raise CheckFailed(f"{line.text!r} while waiting for {what}")
            if allow is not None and not _matches(allow, line.text):
                raise CheckFailed(f"unexpected {line.text!r} while waiting for {what}")
            before.append(line)

    def lines_within(self, window: float) -> list[Line]:
        """Every line written in the next `window` seconds (a quiet period to watch)."""
        deadline = time.monotonic() + window
        lines: list[Line] = []
        while (remaining := deadline - time.monotonic()) > 0:
            line = self.read(remaining)
            if line is None:
                if self.ended:
                    break
                continue
            lines.append(line)
        return lines

    def quiet(self, window: float, forbidden: re.Pattern[str], what: str) -> list[Line]:
        """Watch `window` seconds in which no line matching `forbidden` may come, nor the end
        of the output; the lines that did come."""
        lines = self.lines_within(window)
        for line in lines:
            if forbidden.fullmatch(line.text):
                raise CheckFailed(f"{line.text!r} {what}")
        if self.ended:
            raise CheckFailed(f"the engine's output ended {what}{self.exit_note()}")
        return lines

    def wait_exit(self, timeout: float) -> int | None:
        """The exit status, or None if still running after `timeout` seconds."""
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self.note(f"exited with status {code}")
        return code

    def exit_note(self) -> str:
        code = self.process.poll()
        return "" if code is None else f" (the engine exited with status {code})"

    def close(self) -> None:
        """Kill the engine if it still runs, and let the readers finish."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for reader in self._readers:
            reader.join(5)
        # Lines written just before the end: keep them for the report.
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.transcript.append(line)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
