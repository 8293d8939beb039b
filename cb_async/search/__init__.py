"""The synchronous search core: `Searcher.search(position, history, limits, stop, on_info)`.

Single-threaded and free of asyncio, so that the session can run it in a thread or a worker
process alike; the only way in while it runs is the `StopToken`.
"""

from cb_async.search.control import StopToken
from cb_async.search.searcher import Searcher, history_keys

__all__ = ["Searcher", "StopToken", "history_keys"]
