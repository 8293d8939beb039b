"""How much memory the machine can give the hash table, so that `Hash` is never a crash.

A `Hash` of 4096 MB on a machine (or under a `ulimit -v`) that cannot give it would fail in
the worker: at once when the table's slot list is made, or later, search after search, as the
table fills. The session asks here when `Hash` is set and reduces a value that cannot fit,
saying so; what is left (another process taking the memory later) fails one search with a
clear message instead of the engine.

What can be given is the least of: the memory the kernel says is available (`MemAvailable`,
Linux), and the room a worker leaves under the address-space limit (`RLIMIT_AS`, `ulimit -v`)
once it has loaded the search. Where neither can be read, nothing
is refused.
"""

from __future__ import annotations

import sys

#: What a worker maps besides its table (the interpreter, python-chess, the search, its thread
#: stacks): a worker's VmSize with an empty 16 MB table is about 104 MB on 64-bit Linux; with
#: a margin for what a search allocates as it runs.
WORKER_BASE_MB = 160


def hash_limit_mb() -> int | None:
    """The largest table in MB that fits now, or None when the machine does not say."""
    limits = [limit for limit in (_available_mb(), _address_space_room_mb()) if limit is not None]
    return max(1, min(limits)) if limits else None


def fitting_hash_mb(wanted: int) -> tuple[int, int | None]:
    """(the Hash to use, the limit that reduced it or None): `wanted` when it fits, else the
    largest power of two of MB that does."""
    limit = hash_limit_mb()
    if limit is None or wanted <= limit:
        return wanted, None
    return 1 << (limit.bit_length() - 1), limit


def _available_mb() -> int | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _address_space_room_mb() -> int | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return soft // (1024 * 1024) - WORKER_BASE_MB
