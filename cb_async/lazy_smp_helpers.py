"""Lazy SMP, host side: the helper search processes of `Threads` > 1 and their shared hash table.

With `Threads` N the runner's main worker searches as always and N - 1 helper workers search
the same position at the same time on one hash table in shared memory; the helpers answer
nothing, and help only through the table, where the main search finds their results (that is
all Lazy SMP is; the worker's side is `cb_async.search.worker`). The helpers read the main
search's control block, so a stop, a ponder hit or a deadline reaches every one of them in the
same poll, and the runner stops them when the main search has answered.

The table lives in a `multiprocessing.shared_memory` segment that this pool creates, names in
each `SearchRequest` and unlinks when it is replaced (Hash changed), no longer needed (Threads
back to 1) or the runner closes. multiprocessing's resource tracker, which the workers share,
removes it if the host dies without that.

The pool never blocks the event loop: a helper starts on a thread of its own (the library's
start method: the host has threads by now, so never `fork`; the first forkserver start loads
the search) and joins the searches that begin after it is ready. A helper that dies is started
again at the next search, up to the quick-death limit of every worker (`cb_async.worker_process`).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Callable
from multiprocessing import shared_memory
from typing import TYPE_CHECKING, Any

from cb_async.search.worker import (
    HELPER_NICENESS, DoneReply, NewGameRequest, PrepareRequest, QuitRequest, ReadyReply, Reply, SearchRequest,
    worker_main,
)
from cb_async.worker_process import QuickDeaths, WorkerProcess

if TYPE_CHECKING:
    import multiprocessing.connection
    import multiprocessing.context

    import anyio

#: Bytes per slot of the shared table (`cb_async.search.tt.SHARED_BYTES_PER_ENTRY`; the host
#: does not import the search).
SHARED_BYTES_PER_ENTRY = 16

#: Runs a function with its argument on the runner's event loop; False once the loop is gone.
ToLoop = Callable[[Callable[[Any], None], Any], bool]


def shared_table_bytes(megabytes: int) -> int:
    """The size of a shared table of `megabytes`: a power of two of slots, as the search's own."""
    wanted = max(1, megabytes) * 1024 * 1024 // SHARED_BYTES_PER_ENTRY
    return (1 << max(10, wanted.bit_length() - 1)) * SHARED_BYTES_PER_ENTRY


class _Helper:
    """One helper process (a `WorkerProcess`) and the thread that starts it."""

    def __init__(self, pool: HelperPool, number: int, eval_file: str) -> None:
        import anyio

        self.pool = pool
        #: Set when the helper is ready to search, or has died trying.
        self.settled = anyio.Event()
        self.number = number
        self.ready = False
        self.dead = False
        self.retired = False
        self._lock = threading.Lock()
        # It builds the search's net while it warms up, before it joins any search.
        self.worker = WorkerProcess(pool.context, worker_main, (pool.control, eval_file), f"cb-async-helper-{number}",
                                    niceness=HELPER_NICENESS)
        self.started = False
        self.acks: dict[int, anyio.Event] = {}
        self.thread = threading.Thread(target=self._run, name=f"cb-async-helper-{number}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        pool = self.pool
        try:
            self.worker.start()
        except Exception:
            self.worker.release()
            pool.to_loop(self._died, None)
            return
        with self._lock:
            self.started = True
            retired = self.retired
        if retired:  # no longer wanted while it was starting
            self.quit()
            return

        def gone() -> None:
            if not pool.closed and not self.retired:  # else ended on purpose, by `quit`
                pool.to_loop(self._died, None)

        self.worker.read(lambda reply: pool.to_loop(self._dispatch, reply), gone)

    def _dispatch(self, reply: Reply) -> None:
        match reply:
            case ReadyReply():
                self.ready = True
                self.settled.set()
            case DoneReply(ack_id=ack_id):
                done = self.acks.pop(ack_id, None)
                if done is not None:
                    done.set()
            case _:
                pass  # a helper answers nothing else

    def _died(self, _: object) -> None:
        self.dead = True
        self.ready = False
        self.settled.set()
        for done in self.acks.values():
            done.set()
        self.acks.clear()
        self.worker.release()
        self.pool.helper_died(self)

    def send(self, message: SearchRequest | NewGameRequest | PrepareRequest) -> bool:
        return self.ready and self.worker.send(message)

    def retire(self) -> None:
        """End the helper: now if it has started, else as soon as its start returns."""
        with self._lock:
            self.retired = True
            started = self.started
        if started:
            self.quit()

    def quit(self) -> None:
        """End the process and free its pipe and descriptors."""
        self.worker.end(QuitRequest())


class HelperPool:
    """The helpers of one runner and the table they share with its main worker."""

    _ids = itertools.count(1 << 40)  # acks of their own, apart from the runner's ids

    def __init__(self, context: multiprocessing.context.BaseContext, control: Any, to_loop: ToLoop) -> None:
        self.context: Any = context  # a concrete context: BaseContext lacks Process
        self.control = control
        self.to_loop = to_loop
        self.closed = False
        self.broken = False
        self._helpers: list[_Helper] = []
        self._deaths = QuickDeaths()
        self._table: shared_memory.SharedMemory | None = None
        self._table_mb = 0

    @property
    def helpers(self) -> int:
        """Helpers ready to search."""
        return sum(1 for helper in self._helpers if helper.ready)

    def table_for(self, threads: int, hash_mb: int) -> str | None:
        """The name of the shared table for a search with `threads` and `hash_mb` (made or
        replaced as needed), or None when one thread searches on its own table."""
        if threads <= 1 or self.broken:
            self._drop_table()
            return None
        if self._table is None or self._table_mb != hash_mb:
            self._drop_table()
            self._table = shared_memory.SharedMemory(create=True, size=shared_table_bytes(hash_mb))
            self._table_mb = hash_mb
        return self._table.name

    def search(self, request: SearchRequest, count: int) -> None:
        """Have `count` helpers search `request` with the main worker (those not ready yet join
        the next searches); end the helpers beyond `count`."""
        if self.closed:
            return
        while len(self._helpers) > count:
            self._helpers.pop().retire()
        if self.broken:
            return
        while len(self._helpers) < count:
            self._helpers.append(_Helper(self, len(self._helpers) + 1, request.settings.eval_file))
        for helper in self._helpers:
            helper.send(dataclasses.replace(request, helper=helper.number))

    async def wait_ready(self) -> int:
        """Until every helper started so far is ready (or dead); how many are ready."""
        for helper in list(self._helpers):
            await helper.settled.wait()
        return self.helpers

    async def new_game(self) -> None:
        await self._ask_all(NewGameRequest)

    async def prepare(self, eval_file: str) -> None:
        """Until every helper has built the net of `eval_file`: a helper that built it in its
        first search would clear the table it shares with the main search (a new net's scores
        are not the old one's), in the middle of that search."""
        await self._ask_all(lambda ack_id: PrepareRequest(ack_id, eval_file))

    async def _ask_all(self, request: Callable[[int], NewGameRequest | PrepareRequest]) -> None:
        """Send each helper `request(ack_id)` and wait for every acknowledgement."""
        import anyio

        waits: list[anyio.Event] = []
        for helper in self._helpers:
            ack_id = next(self._ids)
            done = anyio.Event()
            helper.acks[ack_id] = done
            if helper.send(request(ack_id)):
                waits.append(done)
            else:
                helper.acks.pop(ack_id, None)
        for done in waits:
            await done.wait()

    def helper_died(self, helper: _Helper) -> None:
        if self.closed or helper not in self._helpers:
            return
        self._helpers.remove(helper)
        if self._deaths.died(helper.worker.started_at):
            self.broken = True  # the main worker searches alone from now on

    def close(self) -> None:
        """End every helper and free the table. Safe to call twice."""
        if self.closed:
            return
        self.closed = True
        for helper in self._helpers:
            helper.retire()
        for helper in self._helpers:
            helper.thread.join(1.0)
        self._helpers.clear()
        self._drop_table()

    def _drop_table(self) -> None:
        table, self._table = self._table, None
        if table is not None:
            table.close()
            try:
                table.unlink()
            except FileNotFoundError:
                pass
