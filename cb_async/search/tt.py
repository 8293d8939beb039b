"""The transposition table: a fixed-size array of slots indexed by the low bits of the position hash.

Each entry is `(key, depth, bound, score, move)` where `key` is the full hash, checked on every
probe. Replacement is always-replace except that a shallower result never overwrites a deeper
one for the same position. Mate scores are stored relative to the node (see `score_to_tt`).

Two ways to hold the slots, one interface (`Slots`: index, assign, len), so the search reads
both the same way:
- a list of tuples (`TranspositionTable`), private to one process: a slot read is one index.
  Its size is set once from the Hash option (a dict would grow without bound or need an
  eviction policy).
- `SharedSlots`, the table of several search processes (Lazy SMP, `Threads` > 1): two 64-bit
  words per slot in shared memory, one the packed entry and one the key XORed with it, so
  that a slot written by two processes at once reads as a miss, never as a wrong entry
  (no locks). A read decodes the words into the same tuple.
"""

from __future__ import annotations

from typing import Protocol

import chess

from cb_async.search.moves import PLAIN_MOVES

EXACT = 0
LOWER = 1
UPPER = 2

#: Rough CPython cost of one filled slot: the tuple, the key int, the score int, the list slot.
BYTES_PER_ENTRY = 160
#: A shared slot: two 64-bit words.
SHARED_BYTES_PER_ENTRY = 16

Entry = tuple[int, int, int, int, "chess.Move | None"]


class Slots(Protocol):
    """What the search needs of the table's storage: read, write and count slots."""

    def __getitem__(self, slot: int, /) -> Entry | None: ...

    def __setitem__(self, slot: int, entry: Entry | None, /) -> None: ...

    def __len__(self) -> int: ...


def slot_count(megabytes: int, bytes_per_entry: int) -> int:
    """The power of two of slots that fits in `megabytes` (at least 1024)."""
    wanted = max(1, megabytes) * 1024 * 1024 // bytes_per_entry
    return 1 << max(10, wanted.bit_length() - 1)


class TranspositionTable:
    """Positions already searched: bound, depth, score and best move, by hash."""

    __slots__ = ("entries", "mask")

    def __init__(self, megabytes: int) -> None:
        self.entries: Slots = self._empty(0)
        self.mask = 0
        self.resize(megabytes)

    def resize(self, megabytes: int) -> None:
        """Allocate for `megabytes` (rounded down to a power of two of slots); clears."""
        size = slot_count(megabytes, BYTES_PER_ENTRY)
        self.entries = self._empty(size)
        self.mask = size - 1

    @staticmethod
    def _empty(size: int) -> list[Entry | None]:
        return [None] * size

    def share(self, slots: SharedSlots) -> None:
        """Use a table held in shared memory from now on (its size is the owner's)."""
        self.entries = slots
        self.mask = len(slots) - 1

    def clear(self) -> None:
        entries = self.entries
        if isinstance(entries, SharedSlots):
            entries.clear()
        else:
            self.entries = self._empty(len(entries))

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
        entries = self.entries
        sample = min(1000, len(entries))
        return sum(1 for slot in range(sample) if entries[slot] is not None) * 1000 // sample


# -- the shared layout ------------------------------------------------------------------------
# A packed entry (a positive int below 2**46; 0 is an empty slot):
#   bit 0 set | bound << 1 (2 bits) | depth << 3 (8 bits) | score + SCORE_OFFSET << 11 (18 bits)
#   | move << 29 (16 bits: 1 << 15 | promotion << 12 | to << 6 | from, or 0 for none)
SCORE_OFFSET = 1 << 17
_SCORE_MASK = (1 << 18) - 1
_MOVE_PRESENT = 1 << 15


def _decoded_moves() -> list[chess.Move | None]:
    """[move code]: the move it stands for (None for 0, no move); every plain move is the
    search's own (`PLAIN_MOVES`), and every promotion from a seventh rank to a last one.

    A slot is read at nearly every node of a search on a shared table: one list index there
    costs a fraction of building or looking up the move through a function call."""
    moves: list[chess.Move | None] = [None] * (1 << 16)
    for code, move in enumerate(PLAIN_MOVES):
        moves[_MOVE_PRESENT | (code & 63) << 6 | code >> 6] = move
    for from_rank, to_rank in ((6, 7), (1, 0)):
        for from_file in range(8):
            for to_file in range(max(0, from_file - 1), min(8, from_file + 2)):
                source = chess.square(from_file, from_rank)
                target = chess.square(to_file, to_rank)
                for promotion in (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
                    moves[_MOVE_PRESENT | promotion << 12 | target << 6 | source] = chess.Move(source, target, promotion)
    return moves


_MOVES = _decoded_moves()


class SharedSlots:
    """The slots of a table in a buffer that several processes map (a `SharedMemory`'s)."""

    __slots__ = ("_words", "_count")

    def __init__(self, buffer: memoryview) -> None:
        self._words = buffer.cast("q")
        self._count = len(self._words) // 2

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, slot: int) -> Entry | None:
        words = self._words
        data: int = words[2 * slot + 1]
        if not data:
            return None
        return (
            words[2 * slot] ^ data,
            data >> 3 & 0xFF,
            data >> 1 & 3,
            (data >> 11 & _SCORE_MASK) - SCORE_OFFSET,
            _MOVES[data >> 29],
        )

    def __setitem__(self, slot: int, entry: Entry | None) -> None:
        words = self._words
        if entry is None:
            words[2 * slot + 1] = 0
            return
        key, depth, bound, score, move = entry
        data = 1 | bound << 1 | (depth if depth < 255 else 255) << 3 | (score + SCORE_OFFSET) << 11
        if move is not None:
            data |= (_MOVE_PRESENT | (move.promotion or 0) << 12 | move.to_square << 6 | move.from_square) << 29
        # The entry first, then the key that makes it readable.
        words[2 * slot + 1] = data
        words[2 * slot] = key ^ data

    def clear(self) -> None:
        words = self._words
        zero = memoryview(bytes(min(len(words), 1 << 16) * 8)).cast("q")
        for start in range(0, len(words), len(zero)):
            end = min(start + len(zero), len(words))
            words[start:end] = zero[: end - start]

    def release(self) -> None:
        """Let go of the buffer (its owner can then close the shared memory)."""
        self._words.release()
