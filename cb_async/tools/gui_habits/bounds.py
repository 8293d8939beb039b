"""How long a check waits, and why: each bound is one a real GUI or client enforces.

They are the clients' own timeouts (a GUI gives up or forfeits the engine after them), so they
are generous for a loaded 2-core machine: a conforming engine answers far inside them, and one
that misses them would have been killed, forfeited or timed out by that client.
"""

#: python-chess's `SimpleEngine` default timeout for `initialize()` (`uci`/`uciok`, `protover`
#: up to `done=1`) and for every command answer (`isready`/`readyok`, `ping`/`pong`). cutechess
#: allows 35 s to start and 15 s for a ping; Scid kills an engine 5 s after `uci`.
ANSWER = 10.0

#: XBoard and python-chess wait 2 s for `feature ... done=1` unless `done=0` came first.
FEATURES = 2.0

#: cutechess kills an engine that has not exited 5 s after `quit`; python-chess and asyncio
#: kill a child that has not exited when the transport closes.
EXIT = 5.0

#: After `stop` (or `?`), the answer must come at once; cutechess declares a "stalled
#: connection" after 15 s, python-chess's timeout is 10 s. A stopped search answers far sooner.
STOP = ANSWER

#: Room on top of a clock or movetime for pipes, scheduling and a loaded machine: a move that
#: comes later than its clock plus this would have lost on time on any server (Lichess's lag
#: compensation is smaller than this).
SLACK = 1.0

#: How long a check watches for something that must NOT happen (a `bestmove` during `go
#: ponder`, a `move` after `force`): long enough for an engine that breaks the rule at its
#: first chance (a depth-1 search, a mate found at once) to have done so.
WATCH = 0.5


def scale(factor: float) -> None:
    """Multiply the answer, stop and exit bounds by `factor`, like cutechess's `timeoutscale`:
    above 1 for a slow engine on a loaded machine, below 1 for a test engine that answers at
    once. XBoard's 2 s feature wait, the clocks and WATCH stay as they are: they are rules."""
    global ANSWER, EXIT, STOP
    ANSWER, EXIT, STOP = (value * factor for value in _BASE)


_BASE = (ANSWER, EXIT, STOP)
