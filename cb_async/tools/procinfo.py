"""What `/proc` says about an engine process: its children (the search worker) and resident memory.

The soak measures that a long-running engine's memory stays flat, and the signal tests kill the
search worker, which is the engine's child. Linux only: elsewhere these return nothing.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")


def children(pid: int) -> list[int]:
    """The ids of `pid`'s direct children (every thread's list, so none is missed)."""
    found: set[int] = set()
    try:
        for task in (PROC / str(pid) / "task").iterdir():
            try:
                found.update(int(word) for word in (task / "children").read_text().split())
            except OSError:
                continue
    except OSError:
        return []
    return sorted(found)


def command_line(pid: int) -> str:
    """The command line of `pid`, its arguments joined by spaces ("" if it is gone)."""
    try:
        return (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def search_worker(engine_pid: int) -> int | None:
    """The search worker of a cb-async engine: its forked child at first; after a restart, the
    child of the forkserver that the engine started for restarts. None while there is none."""
    for pid in children(engine_pid):
        command = command_line(pid)
        if "resource_tracker" in command:
            continue
        if "forkserver" in command:
            workers = children(pid)
            if workers:
                return workers[0]
            continue
        return pid
    return None


def rss_kib(pid: int) -> int | None:
    """Resident memory of one process (VmRSS) in KiB, or None if it is gone."""
    try:
        for line in (PROC / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def tree_rss_kib(pid: int) -> int:
    """Resident memory of `pid` and its children, in KiB (0 if it is gone): the engine and its
    search worker together."""
    return sum(rss_kib(p) or 0 for p in [pid, *children(pid)])
