"""Sans-IO protocol adapters: lines in, typed commands out; events in, lines out.

No asyncio, no threads, no stdout here (`tests/test_adapters_sans_io.py` checks the imports).
Every adapter is an `Adapter`; the daemon drives whichever the first line chose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cb_async.commands import Command
    from cb_async.events import AdapterEvent, Event
    from cb_async.framing import TooLong


class Adapter(Protocol):
    """One protocol's words for the session's commands and events."""

    name: str

    def receive(self, line: str | TooLong, received_at: float) -> list[Command]:
        """One input line (or a discarded over-long one), stamped with its arrival time
        (`time.monotonic()`), as commands for the session. The session calls it only when the
        line's turn comes, after every earlier command has been handled and its events formatted."""
        ...

    def on_event(self, event: Event | AdapterEvent) -> tuple[list[str], list[Command]]:
        """One session event as output lines, plus any follow-up commands the adapter needs run
        next (XBoard's ponder search after its own move)."""
        ...

    def drain_notes(self) -> list[str]:
        """Notes for the log (stderr) gathered since the last call: things said to nobody on
        stdout, such as a CNP notification that was not run."""
        ...
