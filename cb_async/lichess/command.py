"""`cb-async lichess-engine`: serve an engine to Lichess's analysis board (external engine).

The token comes from the environment variable LICHESS_TOKEN or from --token-file, never from
the command line (where `ps` shows it to every user of the machine); it needs the scopes
engine:read and engine:write. The provider secret is made once and kept in a file only its
user can read (--secret-file; by default one per engine name under the user's config folder).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import secrets
import signal
import statistics
import sys
from pathlib import Path
from typing import Any

from cb_async.cli import UsageError, number, readable_file, whole_number

LICHESS_URL = "https://lichess.org"
BROKER_URL = "https://engine.lichess.ovh"
TOKEN_VARIABLE = "LICHESS_TOKEN"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = (f"The token: the environment variable {TOKEN_VARIABLE}, or --token-file. Make one with the "
                     "scopes engine:read and engine:write at "
                     f"{LICHESS_URL}/account/oauth/token/create?scopes[]=engine:read&scopes[]=engine:write")
    parser.add_argument("--engine", metavar="CMD",
                        help="serve this UCI engine (a command, e.g. 'stockfish' or '/usr/games/stockfish') "
                             "instead of cb-async")
    parser.add_argument("--option", metavar="NAME=VALUE", action="append", default=[],
                        help="set an option of the engine at start (repeat for more)")
    parser.add_argument("--name", help="the name shown on Lichess (default: the engine's own); "
                                       "an engine already registered under it is updated")
    parser.add_argument("--max-threads", type=whole_number(1, 65536), metavar="N",
                        help="the most threads a job may use (default: this machine's cores)")
    parser.add_argument("--max-hash", type=whole_number(1, 1048576), metavar="MB", default=256,
                        help="the largest hash a job may use, in MB (default: 256)")
    parser.add_argument("--token-file", type=readable_file, metavar="FILE",
                        help=f"read the token from FILE instead of ${TOKEN_VARIABLE}")
    parser.add_argument("--secret-file", metavar="FILE",
                        help="where the provider secret is kept (made on first use, readable by you only)")
    parser.add_argument("--lichess-url", default=LICHESS_URL, metavar="URL",
                        help=f"Lichess, for the registration (default: {LICHESS_URL})")
    parser.add_argument("--broker-url", default=BROKER_URL, metavar="URL",
                        help=f"the engine broker (default: {BROKER_URL})")
    parser.add_argument("--once", action="store_true", help="serve one job, then exit")
    parser.add_argument("--verbose", action="store_true", help="also print every line sent to the broker")
    parser.add_argument("--measure", type=whole_number(1, 1000), metavar="N",
                        help="no Lichess: run against a local broker and print the job latency and the "
                             "preemption latency over N jobs each")
    parser.add_argument("--measure-movetime", type=number(0.05), default=2.0, metavar="S",
                        help="--measure: each job's movetime in seconds (default: 2)")


def run(args: argparse.Namespace) -> int:
    try:
        import httpx  # noqa: F401
    except ImportError:
        raise UsageError("needs httpx: pip install 'cb-async[lichess]'") from None
    import anyio

    if args.measure is not None:
        return anyio.run(_measure, args, backend="asyncio")
    token = read_token(args.token_file)
    secret_file = Path(args.secret_file) if args.secret_file else None
    _configure_logging(args.verbose, token)
    try:
        return anyio.run(_serve, args, token, secret_file, backend="asyncio")
    except KeyboardInterrupt:
        return 0


def read_token(token_file: str | None) -> str:
    """The token from the file or the environment; UsageError if there is none."""
    if token_file is not None:
        token = Path(token_file).read_text(encoding="utf-8").strip()
        if not token:
            raise UsageError(f"--token-file {token_file} is empty")
        return token
    token = os.environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise UsageError(f"no token: set {TOKEN_VARIABLE} or give --token-file "
                         "(a token with the scopes engine:read and engine:write)")
    return token


def default_secret_file(name: str) -> Path:
    """One secret per engine name: two providers on one machine must not share a secret, or
    each would get the other's jobs."""
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "engine"
    return base / "cb-async" / "lichess" / f"{slug}.secret"


def provider_secret(path: Path) -> str:
    """The secret kept in `path`, made there (mode 0600) on first use. UsageError if the file
    can be read by others, or cannot be made."""
    try:
        if path.exists():
            mode = path.stat().st_mode
            if os.name != "nt" and mode & 0o077:
                raise UsageError(f"{path} can be read by others: run 'chmod 600 {path}' (or delete it for a new "
                                 "secret, and restart)")
            secret = path.read_text(encoding="utf-8").strip()
            if len(secret) >= 16:
                return secret
            raise UsageError(f"{path} does not hold a provider secret; delete it for a new one")
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        secret = secrets.token_urlsafe(32)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(secret + "\n")
        return secret
    except OSError as error:
        raise UsageError(f"cannot keep the provider secret in {path}: {error.strerror}") from None


class _Redact(logging.Filter):
    """Defence in depth: the token never reaches a log line, whatever a message holds."""

    def __init__(self, *secrets_: str) -> None:
        super().__init__()
        self._secrets = [secret for secret in secrets_ if secret]

    def redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        message = self.redact(record.getMessage())
        if record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
            message += "\n" + self.redact(text)
            record.exc_info = None
            record.exc_text = None
        record.msg, record.args = message, None
        return True


def _configure_logging(verbose: bool, *secrets_: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    handler.addFilter(_Redact(*secrets_))
    logger = logging.getLogger("cb_async.lichess")
    logger.handlers[:] = [handler]
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False
    for noisy in ("httpx", "httpcore", "chess.engine", "asyncio"):
        other = logging.getLogger(noisy)
        other.handlers[:] = [handler]
        other.setLevel(logging.WARNING)
        other.propagate = False


async def _serve(args: argparse.Namespace, token_text: str, secret_file: Path | None) -> int:
    import anyio
    import httpx

    from cb_async.lichess import api
    from cb_async.lichess.engines import ServedEngine, open_engine
    from cb_async.lichess.provider import LOGGER, Provider, Settings

    token = api.Secret(token_text)
    provider: Provider | None = None
    try:
        engine = await open_engine(args.engine)
    except (OSError, Exception) as error:  # a missing binary, an engine that dies at `uci`
        LOGGER.error("cb-async lichess-engine: cannot start the engine %r: %s", args.engine, error)
        return 1
    try:
        options = _options(args.option)
        if options:
            await engine.configure(options)
        name = args.name or engine.name
        secret = provider_secret(secret_file or default_secret_file(name))
        _add_redaction(secret)
        settings = Settings(
            lichess_url=args.lichess_url, broker_url=args.broker_url, name=name,
            max_threads=min(args.max_threads or os.cpu_count() or 1, engine.most("Threads", 65536)),
            max_hash=min(args.max_hash, engine.most("Hash", 1048576)), once=args.once, verbose=args.verbose)
        async with httpx.AsyncClient(headers={"User-Agent": api.USER_AGENT}) as http:
            async def reopen() -> ServedEngine:
                engine = await open_engine(args.engine)
                if options:
                    await engine.configure(options)
                return engine

            provider = Provider(settings, engine, http, api.Secret(secret), reopen)
            async with anyio.create_task_group() as tasks:
                signalled: list[str] = []

                async def on_signals() -> None:
                    with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
                        async for number_ in received:
                            name_ = signal.Signals(number_).name
                            signalled.append(name_)
                            LOGGER.info("%s: stopping", name_)
                            provider.stop_reason(f"stopped by {name_}")
                            tasks.cancel_scope.cancel()
                            return

                tasks.start_soon(on_signals)
                refused: api.Refused | None = None
                try:
                    await provider.register(token)
                    await provider.serve()
                except api.Refused as error:
                    refused = error
                tasks.cancel_scope.cancel()
            if refused is not None:
                LOGGER.error("cb-async lichess-engine: %s", refused)
                return 1
            if signalled:
                LOGGER.info("stopped cleanly (%d jobs served)", len(provider.reports))
        return 0
    except UsageError as error:
        LOGGER.error("cb-async lichess-engine: %s", error)
        return 2
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await (provider.engine if provider is not None else engine).aclose()
            except Exception:
                pass  # an engine that died: nothing left to close


def _add_redaction(secret: str) -> None:
    for handler in logging.getLogger("cb_async.lichess").handlers:
        for filter_ in handler.filters:
            if isinstance(filter_, _Redact):
                filter_._secrets.append(secret)


def _options(pairs: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name.strip():
            raise UsageError(f"--option {pair!r}: NAME=VALUE is wanted")
        options[name.strip()] = value.strip()
    return options


# -- --measure: latency figures against a local broker ------------------------------------------


async def _measure(args: argparse.Namespace) -> int:
    """Job latency (work handed out -> first `info` line at the broker) and preemption latency
    (new work handed out -> the old search stopped), in one process on one clock."""
    import anyio
    import httpx

    from cb_async.lichess import api
    from cb_async.lichess.broker import Broker
    from cb_async.lichess.engines import open_engine
    from cb_async.lichess.provider import Provider, Settings

    _configure_logging(False)
    logging.getLogger("cb_async.lichess").setLevel(logging.WARNING)
    engine = await open_engine(args.engine)
    movetime = round(args.measure_movetime * 1000)
    job_ms: list[float] = []
    preempt_ms: list[float] = []
    try:
        async with Broker() as broker, httpx.AsyncClient() as http:
            settings = Settings(broker.url, broker.url, args.name or engine.name, 1, 64)
            provider = Provider(settings, engine, http, api.Secret(secrets.token_urlsafe(32)))
            await provider.register(api.Secret(broker.token))
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(provider.serve)
                fens = [board.fen() for board in _positions()]
                for index in range(args.measure):
                    fen = fens[index % len(fens)]
                    job = broker.submit(fen=fen, session_id="measure", limit=("movetime", movetime))
                    await job.wait_for(lambda j: j.ended_at is not None, timeout=movetime / 1000 + 30)
                    assert job.handed_out_at is not None
                    if job.first_line_at is not None:
                        job_ms.append((job.first_line_at - job.handed_out_at) * 1000)
                for index in range(args.measure):
                    fen = fens[index % len(fens)]
                    old = broker.submit(fen=fen, session_id="measure", limit=("movetime", 60_000))
                    await old.wait_for(lambda j: j.first_line_at is not None, timeout=30)
                    report = provider.reports[-1]
                    new = broker.submit(fen=fens[(index + 1) % len(fens)], session_id="measure",
                                        limit=("depth", 1))
                    await new.wait_for(lambda j: j.ended_at is not None, timeout=60)
                    old.cancel()
                    assert new.handed_out_at is not None and report.search_stopped_at is not None
                    preempt_ms.append((report.search_stopped_at - new.handed_out_at) * 1000)
                tasks.cancel_scope.cancel()
    finally:
        await engine.aclose()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"engine: {engine.name}; {args.measure} jobs each; movetime {movetime} ms; load average {load:.2f}")
    for label, values in (("job latency (work handed out -> first info line at the broker)", job_ms),
                          ("preemption latency (new work handed out -> old search stopped)", preempt_ms)):
        shown = " ".join(f"{value:.1f}" for value in values)
        middle = statistics.median(values) if values else float("nan")
        print(f"{label}: median {middle:.1f} ms, max {max(values, default=float('nan')):.1f} ms  [{shown}]")
    return 0


def _positions() -> list[Any]:
    import chess

    return [chess.Board(), chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 3 3"),
            chess.Board("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"),
            chess.Board("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1")]

