"""Every plain move (no promotion), built once and shared by the search's move lists.

A `chess.Move` is a dataclass: building one runs its generated `__init__`, about 0.2 us, and
the search's move lists build one for each move they find, most of which are never tried (a
cut-off, late-move pruning). A list lookup costs a tenth of that. The moves are never changed
once built, so one object per from-and-to pair serves every list, the table and the principal
variation alike; promotions, rarer, are still built where they are found.
"""

from __future__ import annotations

import chess

#: [from << 6 | to]: the plain move between those squares.
PLAIN_MOVES: tuple[chess.Move, ...] = tuple(chess.Move(code >> 6, code & 63) for code in range(64 * 64))
