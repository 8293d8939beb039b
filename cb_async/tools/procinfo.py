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
