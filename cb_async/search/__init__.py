"""The synchronous search core: `Searcher.search(position, history, limits, stop, on_info)`.

Single-threaded and free of asyncio, so that the session can run it in a thread or a worker
process alike; the only way in while it runs is the `StopToken`.

`Searcher` and `history_keys` load on first use: the daemon imports `search.control` on its
start-up path, and the search itself is only needed in the worker process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cb_async.search.control import StopToken

if TYPE_CHECKING:
    from cb_async.search.searcher import Searcher, history_keys

__all__ = ["Searcher", "StopToken", "history_keys"]


def __getattr__(name: str) -> Any:
    if name in ("Searcher", "history_keys"):
        from cb_async.search import searcher

        return getattr(searcher, name)
    raise AttributeError(f"module 'cb_async.search' has no attribute {name!r}")
