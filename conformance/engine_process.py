"""The real `cb-async` binary under test: start it, write lines, read every line it writes.

The process, its reader threads and the transcript belong to the conformance tool's driver
(`cb_async.tools.gui_habits.driver`); this adds what cb-async's own black-box tests want on
top: `cb-async` as the command, an `expect` that fails with the transcript's tail, and exit
checks that raise. No test sleeps and hopes: every wait has a deadline.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cb_async.tools.gui_habits.driver import EngineDriver


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


class EngineProcess(EngineDriver):
    """`cb-async ARGS...`, read line by line."""

    def __init__(self, *args: str, prefix: tuple[str, ...] = ()) -> None:
        """`prefix` runs before the engine's command (a shell that sets a limit, then `exec`s it)."""
        super().__init__([*prefix, *engine_command(), *args], env={**os.environ, "PYTHONWARNINGS": WARNINGS})

    def read_line(self, timeout: float) -> OutputLine | None:
        """The next line, or None at end of output; ProtocolError after `timeout` seconds."""
        line = self.read(timeout)
        if line is None:
            if self.ended:
                return None
            raise self.error(f"no output within {timeout * 1000:.0f} ms")
        return OutputLine(line.text, line.at)

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

    def wait_exit(self, timeout: float = 5.0) -> int:  # type: ignore[override]  # raises instead of None
        code = super().wait_exit(timeout)
        if code is None:
            raise self.error(f"still running {timeout} s after it should have exited")
        return code

    def remaining_output(self, timeout: float = 5.0) -> list[str]:
        """Everything written after the last expectation, up to end of output."""
        rest: list[str] = []
        while (line := self.read_line(timeout)) is not None:
            rest.append(line.text)
        return rest

    def close(self) -> None:
        super().close()
        warned = [line for line in self.stderr_lines if "DeprecationWarning" in line or "ResourceWarning" in line]
        if warned:
            raise ProtocolError("the engine warned:\n" + "\n".join(warned))

    def error(self, message: str) -> ProtocolError:
        tail = "\n".join(f"{line.direction} {line.text}" for line in self.transcript[-40:])
        errors = "\n".join(self.stderr_lines[-10:])
        return ProtocolError(f"{message}\n--- transcript (last lines) ---\n{tail}\n--- stderr ---\n{errors}")


SIGNALS = {"TERM": signal.SIGTERM, "INT": signal.SIGINT}
