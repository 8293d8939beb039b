"""Every worker process of ours is one `WorkerProcess`, and behaves the same: the search worker
(`ProcessRunner`), a Lazy SMP helper (`HelperPool`) and an analysis worker (`LocalPool`).

For each: it ends with its host even when the host is killed (the orphan watch), and starting
and ending it leaves no descriptor open behind. The restart rule (`QuickDeaths`) is one object
shared by the runner and the helpers.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import chess
import pytest

from cb_async.analysis.local import LocalPool
from cb_async.lazy_smp_helpers import HelperPool
from cb_async.limits import Limits
from cb_async.runner import ProcessRunner
from cb_async.search.settings import SearchSettings
from cb_async.worker_process import QUICK_DEATHS_TO_GIVE_UP, START_METHOD_VARIABLE, QuickDeaths, WorkerProcess

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and signals: Linux")

USERS = ("search worker", "lazy smp helper", "analysis worker")

#: A host that starts one kind of worker, prints the worker's pid, and waits to be killed.
HOST = """
import sys, time
import anyio, chess

KIND = sys.argv[1]

async def main():
    if KIND == "analysis worker":
        from cb_async.analysis.local import LocalPool
        pool = LocalPool(1)
        await pool.start()
        pids = pool.pids()
    else:
        from cb_async.limits import Limits
        from cb_async.runner import ProcessRunner
        from cb_async.search.settings import SearchSettings
        runner = ProcessRunner()
        await runner.attach()
        await runner.wait_ready()
        pids = [runner._process.pid]
        if KIND == "lazy smp helper":
            handle = runner.begin(chess.Board(), Limits(depth=1), hash_mb=1, settings=SearchSettings(threads=2),
                                  deadlines=None, on_info=lambda info: None, on_end=lambda search_id: None)
            await handle.result()
            await runner.wait_helpers()
            pids = [helper.worker.pid for helper in runner._pool._helpers]
    print(*pids, flush=True)
    await anyio.sleep(3600)

if __name__ == "__main__":
    anyio.run(main)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return not stat.read().split(") ")[1].startswith("Z")
    except OSError:
        return False


@pytest.mark.parametrize("user", USERS)
def test_a_worker_ends_with_its_killed_host(user: str, tmp_path: Path) -> None:
    script = tmp_path / "host.py"
    script.write_text(HOST)
    host = subprocess.Popen([sys.executable, str(script), user], stdout=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        pids = [int(word) for word in host.stdout.readline().split()]
        assert pids and all(_alive(pid) for pid in pids)
        host.send_signal(signal.SIGKILL)
        host.wait(5)
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not any(_alive(pid) for pid in pids), f"the {user} outlived its host"
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()


#: A host whose worker is busy in its own code and never reads its pipe (a search, a game): the
#: end of the pipe cannot tell it that the host is gone, only the orphan watch can.
BUSY_HOST = """
import time
from cb_async.worker_process import WorkerProcess, start_context

def busy(conn):
    conn.send("busy")
    time.sleep(3600)

if __name__ == "__main__":
    worker = WorkerProcess(start_context(), busy, (), "busy worker")
    worker.start()
    assert worker.conn is not None and worker.conn.recv() == "busy"
    print(worker.pid, flush=True)
    time.sleep(3600)
"""


@pytest.mark.parametrize("method", ["fork", "spawn", "forkserver"])
def test_a_busy_worker_ends_with_its_killed_host_whatever_the_start_method(method: str, tmp_path: Path) -> None:
    """Under `forkserver` the worker's parent is the server, not the host, and the server lives
    as long as any of its workers does: the watch follows the host itself."""
    script = tmp_path / "host.py"
    script.write_text(BUSY_HOST)
    host = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, START_METHOD_VARIABLE: method})
    pid = 0
    try:
        assert host.stdout is not None
        pid = int(host.stdout.readline())
        host.send_signal(signal.SIGKILL)
        host.wait(5)
        deadline = time.monotonic() + 5
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(pid), f"a busy worker started by {method} outlived its host"
    finally:
        host.kill()
        host.wait()
        if host.stdout is not None:
            host.stdout.close()
        if pid and _alive(pid):
            os.kill(pid, signal.SIGKILL)


def _descriptors() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


async def _cycle(user: str) -> WorkerProcess:
    """Start one worker of `user`, make it work once, end it; the `WorkerProcess` it used."""
    if user == "analysis worker":
        pool = LocalPool(1)
        workers = await pool.start()
        await pool.close()
        return workers[0].worker
    runner = ProcessRunner(restart_context=None)
    await runner.attach()
    await runner.wait_ready()
    worker = runner._worker
    if user == "lazy smp helper":
        handle = runner.begin(chess.Board(), Limits(depth=1), hash_mb=1, settings=SearchSettings(threads=2),
                              deadlines=None, on_info=lambda info: None, on_end=lambda search_id: None)
        await handle.result()
        await runner.wait_helpers()
        assert runner._pool is not None
        worker = runner._pool._helpers[0].worker
    await anyio.to_thread.run_sync(runner.close)
    assert worker is not None
    return worker


@pytest.mark.parametrize("user", USERS)
async def test_starting_and_ending_a_worker_leaves_no_descriptor_open(user: str) -> None:
    await _cycle(user)  # the first start of a kind may open what lives on (a forkserver's socket)
    before = _descriptors()
    with anyio.fail_after(60):
        worker = await _cycle(user)
    assert isinstance(worker, WorkerProcess) and worker.process is None  # ended, its object closed
    deadline = time.monotonic() + 5
    while _descriptors() - before and time.monotonic() < deadline:
        await anyio.sleep(0.02)
    assert _descriptors() - before == set()


def test_the_restart_rule_is_one_object_for_every_kind() -> None:
    deaths = QuickDeaths()
    now = time.monotonic()
    assert [deaths.died(now) for _ in range(QUICK_DEATHS_TO_GIVE_UP)] == [False] * (QUICK_DEATHS_TO_GIVE_UP - 1) + [True]
    assert not QuickDeaths().died(now - 60)  # a death long after its start is not quick
    assert isinstance(ProcessRunner()._deaths, QuickDeaths)
    assert isinstance(HelperPool(None, None, lambda function, argument: False)._deaths, QuickDeaths)  # type: ignore[arg-type]
