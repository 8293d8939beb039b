"""The options a search needs besides its limits: book, tablebases and strength level.

The session builds one from its options for every search; it travels to the worker process
inside the `SearchRequest` (small and picklable), where `cb_async.search.sources` decides
whether the book, the tablebases or the search answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SearchSettings:
    own_book: bool = False
    book_file: str = ""
    book_best_move: bool = False
    syzygy_path: str = ""
    limit_strength: bool = False
    elo: int = 1500
    #: Search processes (Lazy SMP): the main search and `threads - 1` helpers.
    threads: int = 1

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> SearchSettings:
        return cls(
            own_book=bool(options.get("OwnBook", False)),
            book_file=options.get("BookFile", "") or "",
            book_best_move=bool(options.get("BookBestMove", False)),
            syzygy_path=options.get("SyzygyPath", "") or "",
            limit_strength=bool(options.get("UCI_LimitStrength", False)),
            elo=int(options.get("UCI_Elo", 1500)),
            threads=int(options.get("Threads", 1)),
        )
