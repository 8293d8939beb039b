"""The options a search needs besides its limits: book, tablebases, strength level, evaluation.

The session builds one from its options for every search; it travels to the worker process
inside the `SearchRequest` (small and picklable), where `cb_async.search.sources` decides
whether the book, the tablebases or the search answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cb_async.search.eval_file import DEFAULT_EVAL_FILE

from cb_async.search.levels import DEFAULT_ELO, MAX_ELO, MIN_ELO


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
    #: The learned evaluation's net file: "" for the built-in net, "none" for none.
    eval_file: str = DEFAULT_EVAL_FILE

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> SearchSettings:
        return cls(
            own_book=bool(options.get("OwnBook", False)),
            book_file=options.get("BookFile", "") or "",
            book_best_move=bool(options.get("BookBestMove", False)),
            syzygy_path=options.get("SyzygyPath", "") or "",
            limit_strength=bool(options.get("UCI_LimitStrength", False)),
            elo=level_elo(options),
            threads=int(options.get("Threads", 1)),
            eval_file=options.get("EvalFile", DEFAULT_EVAL_FILE) or "",
        )


def opponent_rating(uci_opponent: str) -> int | None:
    """The rating in a `UCI_Opponent` value (`GM 2800 human Magnus`, `none none computer X`),
    or None when it has none or the text is not of that shape."""
    words = uci_opponent.split()
    if len(words) < 2 or not words[1].isdigit():
        return None
    return int(words[1])


def level_elo(options: dict[str, Any]) -> int:
    """The level a search with UCI_LimitStrength plays at: UCI_Elo, or with Level Follows
    Opponent the opponent's rating when it is known, kept within the calibrated range."""
    elo = int(options.get("UCI_Elo", DEFAULT_ELO))
    if options.get("Level Follows Opponent"):
        rating = opponent_rating(options.get("UCI_Opponent", "") or "")
        if rating is not None:
            elo = max(MIN_ELO, min(MAX_ELO, rating))
    return elo
