"""Races: random interleavings of commands into the real engine, every answer checked.

The driver is `python3 dev.py stress` (see `devtools.stress` for the invariants); CI runs 600
commands per protocol, the benchmark run is `python3 dev.py stress --commands 10000`.
"""

from __future__ import annotations

import pytest

from devtools.stress import stress
from conformance.engine_process import engine_command


@pytest.mark.parametrize("protocol", ["uci", "xboard", "cnp"])
def test_random_interleavings_keep_every_invariant(protocol: str) -> None:
    driver = stress(protocol, 600, seed=7, command=engine_command())
    assert driver.sent >= 600
    assert not driver.owed
    answered = sum(count for key, count in driver.stats.items()
                   if key.startswith(("bestmove", "move", "engine/search result")))
    assert answered >= 10, driver.stats  # the run did play, not only ping
