"""A `Hash` the machine cannot give is reduced to what fits, with a message; never a crash."""

from __future__ import annotations

import resource
import subprocess
import sys
from typing import Any

import anyio
import pytest

from cb_async import memory
from cb_async.commands import Command, IsReady, Quit, SetOptions
from cb_async.events import Message, OptionsSet, Ready
from cb_async.session import Session
from fake_runner import FakeRunner


async def _set_hash(value: int) -> list[Any]:
    events: list[Any] = []

    def sink(event: Any) -> list[Command]:
        events.append(event)
        return []

    session = Session(FakeRunner(), sink)
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        session.submit(SetOptions((("Hash", str(value)),)))
        session.submit(IsReady())
        with anyio.fail_after(5):
            while not any(isinstance(event, Ready) for event in events):
                await anyio.sleep(0.001)
        session.submit(Quit())
    return events


async def test_a_hash_too_large_for_the_machine_is_reduced_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "hash_limit_mb", lambda: 700)
    events = await _set_hash(4096)
    assert [type(event) for event in events[:2]] == [Message, OptionsSet]
    assert events[0].text == "Hash 4096 MB is more than this machine can give now (about 700 MB): using 512 MB"
    assert events[1].values == {"Hash": 512}


async def test_a_hash_that_fits_is_kept_silently(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "hash_limit_mb", lambda: 700)
    events = await _set_hash(256)
    assert [type(event) for event in events[:1]] == [OptionsSet] and events[0].values == {"Hash": 256}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_the_address_space_limit_bounds_the_hash() -> None:
    """Under `ulimit -v` 1 GiB the limit is that, less what a worker needs besides its table."""
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, resource.RLIM_INFINITY)); "
            "from cb_async import memory; print(memory._address_space_room_mb(), memory.fitting_hash_mb(4096))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
    assert int(out[0]) == 1024 - memory.WORKER_BASE_MB
    assert out[1].strip() == f"(512, {min(1024 - memory.WORKER_BASE_MB, memory._available_mb() or 1 << 30)})"
    assert resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY  # this process is untouched
