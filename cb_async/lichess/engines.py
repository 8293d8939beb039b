"""The engine a provider serves: cb-async embedded, or any UCI engine through python-chess.

Both speak python-chess's API (`configure`, `analysis(board, limit, multipv=, game=)`,
`options`, `id`), so one class drives either: `game=` carries the job's sessionId, so a new
session is a new game (cb-async clears its hash; python-chess sends `ucinewgame`); `Threads` and
`Hash` are set only when a job asks for other values; the board is in Chess960 mode, so
castling is king takes rook both ways.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import chess.engine

from cb_async.lichess.work import LICHESS_VARIANTS, Work


class RunningSearch(Protocol):
    """python-chess's `AnalysisResult` and cb-async's `Analysis` alike."""

    def stop(self) -> None: ...

    async def wait(self) -> chess.engine.BestMove: ...

    def __aiter__(self) -> AsyncIterator[chess.engine.InfoDict]: ...


class ServedEngine:
    """One engine for every job, started once."""

    def __init__(self, engine: Any, close: Callable[[], Awaitable[None]], name: str) -> None:
        self.engine = engine
        self._close = close
        self.name = name
        self._applied: dict[str, int] = {}

    @property
    def variants(self) -> tuple[str, ...]:
        """chess, and the Lichess variants the engine lists in UCI_Variant."""
        option = self.engine.options.get("UCI_Variant")
        offered = set(option.var or []) if option is not None else set()
        return ("chess",) + tuple(name for name in LICHESS_VARIANTS if name != "chess" and name in offered)

    def most(self, option: str, fallback: int) -> int:
        """The engine's maximum for a spin option (`Threads`, `Hash`), or `fallback`."""
        spec = self.engine.options.get(option)
        return int(spec.max) if spec is not None and spec.max is not None else fallback

    async def configure(self, options: dict[str, Any]) -> None:
        await self.engine.configure(options)

    async def start(self, work: Work) -> RunningSearch:
        wanted = {name: value for name, value in (("Threads", work.threads), ("Hash", work.hash_mb))
                  if name in self.engine.options and self._applied.get(name) != value}
        for name, value in list(wanted.items()):
            wanted[name] = max(1, min(value, self.most(name, value)))
        if wanted:
            await self.engine.configure(wanted)
            self._applied.update(wanted)
        search: RunningSearch = await self.engine.analysis(work.board, work.limit, multipv=work.multipv,
                                                           game=work.session_id)
        return search

    async def aclose(self) -> None:
        await self._close()


async def open_engine(command: str | None) -> ServedEngine:
    """cb-async embedded (`command` None), or the UCI engine `command` (split like a shell
    line; a path, or a name on the PATH such as `stockfish`)."""
    if command is None:
        from cb_async.embedded import Engine
        from cb_async.version import ENGINE_NAME, __version__

        engine = await Engine().start()
        return ServedEngine(engine, engine.aclose, f"{ENGINE_NAME} {__version__}")
    words = shlex.split(command, posix=os.name != "nt")
    transport, protocol = await chess.engine.popen_uci(words)

    async def close() -> None:
        try:
            await protocol.quit()
        finally:
            transport.close()

    name = protocol.id.get("name") or os.path.basename(words[0])
    return ServedEngine(protocol, close, name)
