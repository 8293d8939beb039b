"""Races: random interleavings of commands into the real engine, every answer checked.

The driver is `python3 dev.py stress` (see `devtools.stress` for the invariants); CI runs 600
commands per protocol, the benchmark run is `python3 dev.py stress --commands 10000`.
"""

from __future__ import annotations

import pytest

from devtools.stress import stress
from conformance.engine_process import engine_command


#: The answers each protocol gives in the order they were asked for: UCI's `readyok`s and
#: `bestmove`s (each in its own order: a `readyok` overtakes a search), XBoard's `pong`s and
#: moves. CNP's responses may overtake each other (a search answers when it ends); each comes once.
IN_ORDER = {"uci": ("readyok", "bestmove"), "xboard": ("pong", "move"), "cnp": ()}
#: What the run must have exercised for the test to mean something.
AT_LEAST = {"uci": {"readyok": 50, "bestmove": 20}, "xboard": {"pong": 50, "move": 10}, "cnp": {"response": 100}}


@pytest.mark.parametrize("protocol", ["uci", "xboard", "cnp"])
def test_random_interleavings_keep_every_invariant(protocol: str) -> None:
    driver = stress(protocol, 600, seed=7, command=engine_command())
    assert driver.sent >= 600
    # Every answer asked for came (or was withdrawn by the protocol's own rule), exactly once.
    assert not driver.owed
    came = [owed.number for owed in driver.answered]
    assert len(came) == len(set(came))
    assert sorted(came + [owed.number for owed in driver.withdrawn]) == list(range(len(driver.asked)))
    if protocol != "xboard":
        assert driver.withdrawn == []
    # ... in the order asked, for each kind the protocol orders.
    for kind in IN_ORDER[protocol]:
        asked = [owed.number for owed in driver.asked if owed.kind == kind and owed not in driver.withdrawn]
        assert [owed.number for owed in driver.answered if owed.kind == kind] == asked, kind
    for kind, least in AT_LEAST[protocol].items():
        assert sum(owed.kind == kind for owed in driver.answered) >= least, (kind, driver.stats)
