"""Sans-IO protocol adapters: lines in, typed commands out; events in, lines out.

No asyncio, no threads, no stdout here (`tests/test_adapters_sans_io.py` checks the imports).
Each adapter has the same two faces:

- `receive(line, received_at) -> list[Command]`: one input line (or `TooLong`), stamped with
  its arrival time (`time.monotonic()`), becomes commands for the session.
- `on_event(event) -> tuple[list[str], list[Command]]`: one session event becomes output lines,
  plus any follow-up commands the adapter needs run next (XBoard's ponder search after its own
  move).
- `end_of_input() -> list[Command]`: what end of input means (a quiet quit).
"""
