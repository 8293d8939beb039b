"""A worker process of ours: how it is started, read, ended, restarted and watched, in one place.

The search worker (`cb_async.runner`), the Lazy SMP helpers (`cb_async.lazy_smp_helpers`), the
analysis workers (`cb_async.analysis.local`) and `cb-async eval-data`'s game workers
(`cb_async.training.data_workers`) run different code, but each is a child process that talks
to its host over one pipe, and each needs the same care:

- the **start method**: `fork` only where it is safe (the stdio daemon, before it has threads),
  else `forkserver` on Linux with the search preloaded, `spawn` elsewhere (`start_context`);
- a **reader thread** per pipe that hands each message on and, at the end of the pipe, reaps
  the process (no zombie) before it says the worker is gone (`WorkerProcess.read`);
- **ending** it: ask, wait a little, terminate, kill (a stopped process holds SIGTERM pending),
  and free the process object's descriptors (`WorkerProcess.end`);
- **restarting** it after it dies, but not for ever when it dies as soon as it starts
  (`QuickDeaths`);
- in the child, the **orphan watch** (a worker must never outlive its host: a host killed with
  SIGKILL closes no pipe a busy worker would notice), SIGINT ignored (GUIs send it to XBoard
  engines, and Ctrl-C reaches a whole process group), and stdout pointed at stderr so a worker
  never writes protocol (`worker_entry`).

A fix made here reaches every worker at once. Light on purpose (no anyio, no python-chess): the
daemon imports it before it forks its first worker.
"""

from __future__ import annotations

import multiprocessing
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import multiprocessing.connection
    import multiprocessing.context

#: A worker that dies this soon after its start, this many times in a row, is not restarted.
QUICK_DEATH_SECONDS = 2.0
QUICK_DEATHS_TO_GIVE_UP = 3
#: How often a worker checks that its host is still alive, in seconds (at most: where the
#: system can say when a process ends, the watch hears of it at once).
PARENT_CHECK_SECONDS = 0.25
#: Names a start method for the embedded library's workers instead of the platform's choice
#: (the tests run the library under `spawn` on Linux, as macOS and Windows do).
START_METHOD_VARIABLE = "CB_ASYNC_START_METHOD"
#: What the forkserver loads once, so that each worker it forks starts with the search loaded.
WORKER_MODULES = ("cb_async.search.sources",)


# -- the start method ----------------------------------------------------------------------------


def default_context() -> multiprocessing.context.BaseContext:
    """`fork` where it is safe and fast (Linux): the worker starts in milliseconds with the
    modules already imported. Only for a process without threads (the stdio daemon's first
    worker). Elsewhere `spawn`."""
    if sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("spawn")


def start_context() -> multiprocessing.context.BaseContext:
    """The start method inside a host that may run threads of its own: never `fork` it (a lock
    held by another thread at that moment would stay held forever in the worker). `forkserver`
    on Linux: its server starts once, from a process without threads, and every later worker
    forks from it with the search already loaded. Elsewhere `spawn`, the platform's own default."""
    wanted = os.environ.get(START_METHOD_VARIABLE)
    if wanted:
        if wanted not in multiprocessing.get_all_start_methods():
            raise ValueError(f"{START_METHOD_VARIABLE}={wanted}: not a start method here "
                             f"(one of {', '.join(multiprocessing.get_all_start_methods())})")
        return multiprocessing.get_context(wanted)
    if sys.platform.startswith("linux"):
        context = multiprocessing.get_context("forkserver")
        _preload_in_forkserver(context)
        return context
    return multiprocessing.get_context("spawn")


def _preload_in_forkserver(context: Any) -> None:
    """Add the search to the modules the forkserver loads when it starts (it starts once, on the
    first worker), keeping whatever the host asked for. A server already running is left as
    it is; its workers then load the search themselves."""
    from multiprocessing import forkserver

    wanted = list(getattr(forkserver._forkserver, "_preload_modules", []))  # the host's own choice
    wanted += [name for name in WORKER_MODULES if name not in wanted]
    context.set_forkserver_preload(wanted)


# -- the host's side -----------------------------------------------------------------------------


class QuickDeaths:
    """Counts deaths that come soon after a start; says when to stop restarting."""

    def __init__(self) -> None:
        self.in_a_row = 0

    def died(self, started_at: float) -> bool:
        """A worker started at `started_at` (monotonic) has died: True to give up on it."""
        quick = time.monotonic() - started_at < QUICK_DEATH_SECONDS
        self.in_a_row = self.in_a_row + 1 if quick else 0
        return self.in_a_row >= QUICK_DEATHS_TO_GIVE_UP


class WorkerProcess:
    """One worker process and the host's end of its pipe.

    `target(conn, *args)` runs in the child after `worker_entry`; `start` is blocking (a first
    forkserver start loads the search), so a host with an event loop calls it on a thread."""

    def __init__(self, context: multiprocessing.context.BaseContext, target: Callable[..., None],
                 args: tuple[Any, ...], name: str, *, niceness: int = 0) -> None:
        self.context: Any = context  # a concrete context: BaseContext lacks Process and Pipe
        self.target = target
        self.args = args
        self.name = name
        self.niceness = niceness
        self.conn: multiprocessing.connection.Connection | None = None
        self.process: Any = None  # multiprocessing's BaseProcess
        self.started_at = 0.0
        self.reader: threading.Thread | None = None

    def start(self) -> None:
        host_end, worker_end = self.context.Pipe(duplex=True)
        process = self.context.Process(target=worker_entry, name=self.name, daemon=True,
                                       args=(self.target, worker_end, host_end, os.getpid(), self.niceness,
                                             *self.args))
        self.started_at = time.monotonic()
        try:
            process.start()
        finally:
            worker_end.close()  # the child holds its end now: ours must close for EOF to reach us
        self.process, self.conn = process, host_end

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def send(self, message: object) -> bool:
        """Send a message; False when the pipe is closed or broken (the worker is gone)."""
        if self.conn is None:
            return False
        try:
            self.conn.send(message)
        except (OSError, ValueError):
            return False
        return True

    def read(self, deliver: Callable[[Any], bool], gone: Callable[[], object]) -> threading.Thread:
        """Read every message on a thread of its own and hand each to `deliver` (which returns
        False to stop reading: the host is leaving). At the end of the pipe the process is
        reaped (else each death leaves a zombie) and `gone()` is called, on that thread."""
        conn, process = self.conn, self.process
        assert conn is not None, "start() the worker first"

        def run() -> None:
            while True:
                try:
                    message = conn.recv()
                except Exception:  # EOF, a closed or broken pipe, a message torn by a kill: gone
                    try:
                        process.join(1.0)
                    except ValueError:  # released already by the host, which saw the death first
                        pass
                    gone()
                    return
                if not deliver(message):
                    return

        self.reader = threading.Thread(target=run, name=f"{self.name} reader", daemon=True)
        self.reader.start()
        return self.reader

    def kill(self) -> None:
        """End it at once, whatever it is doing (SIGKILL: a stopped process ends too); its
        reader then sees the end of the pipe."""
        process = self.process
        if process is not None and process.exitcode is None:
            try:
                process.kill()
            except (OSError, ValueError):
                pass

    def end(self, quit_message: object | None = None, wait: float = 0.5) -> None:
        """Ask it to quit (if `quit_message`), then terminate, then kill it; wait for the reader
        to see the end, and free the pipe and the process's descriptors. Safe to call twice."""
        if quit_message is not None:
            self.send(quit_message)
        process = self.process
        if process is not None and process.exitcode is None:
            process.join(wait)
            if process.exitcode is None:
                process.terminate()
                process.join(0.25)  # a stopped process (SIGSTOP) holds SIGTERM pending: kill it soon
            if process.exitcode is None:
                process.kill()
                process.join()
        if self.reader is not None and self.reader is not threading.current_thread():
            self.reader.join(1.0)
        self.release()

    def release(self) -> None:
        """Free the pipe, and the process object once it has ended. Safe to call twice."""
        if self.conn is not None:
            self.conn.close()
        process = self.process
        if process is not None:
            try:
                if process.exitcode is not None:
                    process.close()
                    self.process = None
            except ValueError:  # closed already
                self.process = None


# -- the worker's side ---------------------------------------------------------------------------


def worker_entry(target: Callable[..., None], conn: multiprocessing.connection.Connection, host_end: Any,
                 host: int, niceness: int, *args: Any) -> None:
    """What every worker does before its own code: let go of the host's end of the pipe (so the
    host's death reads as the end of input here), lower its priority if asked (helpers: the
    main search and the host's event loop go first when cores are short), ignore SIGINT, point
    stdout at stderr and stdin at nothing, and watch its host (pid `host`) and its parent."""
    if host_end is not None:
        host_end.close()
    if niceness and sys.platform != "win32":
        os.nice(niceness)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _detach_stdio()
    _exit_with_host(host, os.getppid())
    target(conn, *args)


def _exit_with_host(host: int, parent: int) -> None:
    """A worker must not outlive its host: a thread ends the process at once when the host or
    the parent is gone. They differ under `forkserver`: the parent is the server, and the server
    lives as long as any worker it forked does (each holds its "host alive" pipe), so watching
    the parent alone would keep a busy worker and the server alive for each other. Where the
    system gives a descriptor for a process (Linux's pidfd), the watch wakes when the host ends;
    elsewhere it asks every quarter second (on Windows, where `os.kill` would end the host and
    no forkserver runs, it watches the parent alone)."""
    try:
        host_ended: int | None = os.pidfd_open(host)  # readable once the host has ended
    except ProcessLookupError:
        os._exit(0)  # ended already
    except (AttributeError, OSError):  # not Linux, or a kernel or sandbox without pidfds
        host_ended = None

    def host_is_gone() -> bool:
        if host_ended is not None:
            return bool(select.select([host_ended], [], [], PARENT_CHECK_SECONDS)[0])
        time.sleep(PARENT_CHECK_SECONDS)
        if sys.platform == "win32":
            return False
        try:
            os.kill(host, 0)  # signal 0: only asks whether the process is there
        except ProcessLookupError:
            return True
        except OSError:  # there, but not ours to signal
            pass
        return False

    def watch() -> None:
        while True:
            if host_is_gone() or os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, name="cb-async-host-watch", daemon=True).start()


def _detach_stdio() -> None:
    """A worker must never write protocol: point its stdout at stderr, its stdin at nothing."""
    try:
        sys.stdout.flush()
        os.dup2(2, 1)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
    except OSError:
        pass
