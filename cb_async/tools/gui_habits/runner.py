"""Run checks: each one against a fresh engine process, so no check inherits another's damage.

A check is a function of a `Context`, which starts engines for it and kills them afterwards. A
check passes by returning, fails by raising `CheckFailed`, and is skipped by raising `Skipped`
(the engine does not claim the feature it tests). Anything else a check raises is a fault of
the check, reported as a failure that says so.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from cb_async.tools.gui_habits.driver import CheckFailed, EngineDriver, Line, Skipped
from cb_async.tools.gui_habits.registry import Check

Status = Literal["PASS", "FAIL", "SKIP"]

#: After a failure, what the engine writes in this many seconds is kept for the report.
AFTERMATH = 0.3


@dataclass
class Result:
    check: Check
    status: Status
    message: str = ""
    seconds: float = 0.0
    transcript: list[Line] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)
    started_at: float = 0.0


class Context:
    """What a check gets: a way to start the engine under test (as often as it needs)."""

    def __init__(self, command: Sequence[str]) -> None:
        self.command = list(command)
        self.drivers: list[EngineDriver] = []

    def start(self) -> EngineDriver:
        driver = EngineDriver(self.command)
        self.drivers.append(driver)
        return driver

    def close(self) -> None:
        for driver in self.drivers:
            driver.close()


def run_check(check: Check, command: Sequence[str]) -> Result:
    context = Context(command)
    started = time.monotonic()
    status: Status = "PASS"
    message = ""
    try:
        check.run(context)
    except Skipped as skip:
        status, message = "SKIP", str(skip)
    except CheckFailed as failure:
        status, message = "FAIL", str(failure)
        for driver in context.drivers:
            if driver.process.poll() is None or not driver.ended:
                driver.lines_within(AFTERMATH)
    except Exception as error:  # a bug in the check itself: say so, never hide it
        status = "FAIL"
        message = f"the check itself failed: {error!r}\n{traceback.format_exc(limit=4)}"
    finally:
        context.close()
    last = context.drivers[-1] if context.drivers else None
    return Result(check, status, message, time.monotonic() - started,
                  list(last.transcript) if last else [], list(last.stderr_lines) if last else [],
                  last.started_at if last else started)


def run_checks(checks: Sequence[Check], command: Sequence[str], jobs: int = 1,
               on_result: Callable[[Result], None] | None = None) -> list[Result]:
    """Run `checks` (up to `jobs` at once); `on_result` sees each result in the checks' order."""
    results: list[Result] = []
    for result in _in_order(checks, command, jobs):
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


def _in_order(checks: Sequence[Check], command: Sequence[str], jobs: int) -> Iterator[Result]:
    if jobs <= 1:
        for check in checks:
            yield run_check(check, command)
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures: list[Future[Result]] = [pool.submit(run_check, check, command) for check in checks]
        for future in futures:
            yield future.result()
