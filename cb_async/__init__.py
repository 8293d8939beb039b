"""cb-async: a chess engine daemon (UCI, XBoard/CECP v2, CNP) and an embeddable async library.

`cb_async.Engine` (async) and `cb_async.SimpleEngine` (blocking) embed the engine with
python-chess's `chess.engine` API. They are imported on first use, so that the stdio engine's
start-up does not pay for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cb_async.version import __version__

__all__ = ["Engine", "SimpleEngine", "__version__"]

if TYPE_CHECKING:
    from cb_async.embedded import Engine
    from cb_async.simple import SimpleEngine


def __getattr__(name: str) -> Any:
    if name == "Engine":
        from cb_async.embedded import Engine

        return Engine
    if name == "SimpleEngine":
        from cb_async.simple import SimpleEngine

        return SimpleEngine
    raise AttributeError(f"module 'cb_async' has no attribute {name!r}")
