"""The transposition table: a fixed-size list indexed by the low bits of the position hash.

A list of tuples rather than a dict: its size is set once from the Hash option (a dict would
grow without bound or need an eviction policy), and a slot read is one index. Each entry is
`(key, depth, bound, score, move)` where `key` is the full hash, checked on every probe.
Replacement is always-replace except that a shallower result never overwrites a deeper one
for the same position. Mate scores are stored relative to the node (see `score_to_tt`).
"""

from __future__ import annotations

import chess

EXACT = 0
LOWER = 1
UPPER = 2

#: Rough CPython cost of one filled slot: the tuple, the key int, the score int, the list slot.
BYTES_PER_ENTRY = 160

Entry = tuple[int, int, int, int, "chess.Move | None"]


class TranspositionTable:
    """Positions already searched: bound, depth, score and best move, by hash."""

    __slots__ = ("entries", "mask")

    def __init__(self, megabytes: int) -> None:
        self.entries: list[Entry | None] = []
        self.mask = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        """Allocate for `megabytes` (rounded down to a power of two of slots); clears."""
        wanted = max(1, megabytes) * 1024 * 1024 // BYTES_PER_ENTRY
        size = 1 << max(10, wanted.bit_length() - 1)
        self.entries = [None] * size
        self.mask = size - 1

    def clear(self) -> None:
        self.entries = [None] * len(self.entries)

    def probe(self, key: int) -> Entry | None:
        entry = self.entries[key & self.mask]
        if entry is not None and entry[0] == key:
            return entry
        return None

    def best_move(self, key: int) -> chess.Move | None:
        entry = self.probe(key)
        return entry[4] if entry is not None else None

    def hashfull(self) -> int:
        """Per mille of the first thousand slots in use (the UCI convention: a sample)."""
        sample = self.entries[:1000]
        return sum(1 for entry in sample if entry is not None) * 1000 // len(sample)
