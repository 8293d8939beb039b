"""Lichess's external-engine API from the provider's side: register, long-poll, answer.

Registration and the long-poll go through httpx. The answer does not: it is a chunked
`POST /api/external-engine/work/{id}` whose body is the stream of `info` lines, and the broker
says "nobody is listening any more" by answering (or closing the connection) *while the body is
still being sent*. httpx, like every request-then-response client, reads the answer only after
the whole body is sent, so a provider would learn of it only at its next line, seconds later
at a deep iteration. So the answer is written with h11 (httpx's own HTTP/1.1 engine) on an anyio
stream, and read at the same time: the moment the broker answers, the search stops.

The token is sent only in the `Authorization` header of the registration calls; no exception
raised here carries it (httpx's errors name the URL, never the headers).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import anyio.abc
import h11
import httpx

from cb_async.version import __version__

LOGGER = logging.getLogger("cb_async.lichess")

USER_AGENT = f"cb-async/{__version__} lichess-engine"

#: lila-engine answers a poll after 10 s without work; a little more before calling it lost.
POLL_TIMEOUT = 15.0

#: How long the broker may take to answer once the whole body is sent.
ANSWER_TIMEOUT = 10.0


class Unavailable(Exception):
    """The network or the server failed (connection refused, timeout, 5xx): retry later."""


@dataclass
class RateLimited(Exception):
    """429: wait `retry_after` seconds before the next request."""

    retry_after: float


class Refused(Exception):
    """The server refused the request for good (a bad token, a missing scope): do not retry."""


class Secret:
    """A token or provider secret that never shows itself: not in `repr`, `str`, a log line or
    a traceback's locals; `reveal()` is called only where it is sent."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret(***)"

    __str__ = __repr__


def _check(response: httpx.Response, what: str) -> None:
    if response.status_code == 429:
        raise RateLimited(_retry_after(response.headers.get("retry-after")))
    if response.status_code >= 500:
        raise Unavailable(f"{what}: {response.status_code} {response.reason_phrase}")
    if response.status_code in (401, 403):
        raise Refused(f"{what}: {response.status_code} {response.reason_phrase}: the token was refused "
                      "(it needs the scopes engine:read and engine:write)")
    if response.status_code >= 400:
        raise Refused(f"{what}: {response.status_code} {response.reason_phrase}: {response.text[:200]}")


def _retry_after(text: str | None) -> float:
    """Retry-After in seconds; a minute when it is missing or a date (Lichess's own advice)."""
    try:
        return max(0.0, float(text)) if text is not None else 60.0
    except ValueError:
        return 60.0


async def register(client: httpx.AsyncClient, lichess_url: str, token: Secret,
                   registration: dict[str, Any]) -> tuple[str, bool]:
    """Register the engine, or update the registration of the same name: (its id, created)."""
    headers = {"Authorization": f"Bearer {token.reveal()}"}
    base = f"{lichess_url.rstrip('/')}/api/external-engine"
    try:
        listed = await client.get(base, headers=headers)
        _check(listed, "listing the registered engines")
        for engine in listed.json():
            if engine.get("name") == registration["name"]:
                updated = await client.put(f"{base}/{engine['id']}", headers=headers, json=registration)
                _check(updated, "updating the registration")
                return str(engine["id"]), False
        created = await client.post(base, headers=headers, json=registration)
        _check(created, "registering the engine")
        return str(created.json()["id"]), True
    except httpx.HTTPError as error:
        raise Unavailable(f"{base}: {type(error).__name__}: {error}") from None
    except (ValueError, KeyError, TypeError) as error:
        raise Unavailable(f"{base}: an answer that is not the API's: {error}") from None


async def acquire(client: httpx.AsyncClient, broker_url: str, secret: Secret) -> dict[str, Any] | None:
    """One long-poll: the job, or None after the broker's timeout without work."""
    url = f"{broker_url.rstrip('/')}/api/external-engine/work"
    try:
        response = await client.post(url, json={"providerSecret": secret.reveal()}, timeout=POLL_TIMEOUT)
    except httpx.HTTPError as error:
        raise Unavailable(f"{url}: {type(error).__name__}: {error or 'no answer'}") from None
    if response.status_code == 204:
        return None
    _check(response, "waiting for work")
    try:
        job = response.json()
    except ValueError:
        raise Unavailable(f"{url}: an answer that is not JSON") from None
    if not isinstance(job, dict):
        raise Unavailable(f"{url}: an answer that is not a job")
    return job


Ending = Literal["sent", "gone"]


async def answer(broker_url: str, job_id: str, lines: AsyncIterator[str]) -> Ending:
    """Stream `lines` as the body of the job's answer: "sent" once every line went and the
    broker accepted it, "gone" as soon as the broker answers or closes the connection before
    (nobody is listening). Unavailable if it cannot connect; the iteration of `lines` is
    cancelled when the broker goes."""
    url = httpx.URL(f"{broker_url.rstrip('/')}/api/external-engine/work/{job_id}")
    tls = url.scheme == "https"
    port = url.port or (443 if tls else 80)
    try:
        stream: anyio.abc.ByteStream
        if tls:
            stream = await anyio.connect_tcp(url.host, port, tls=True)
        else:
            stream = await anyio.connect_tcp(url.host, port)
    except OSError as error:
        raise Unavailable(f"{url}: {error.strerror or error}") from None
    connection = h11.Connection(h11.CLIENT)
    host = url.host if url.port is None else f"{url.host}:{url.port}"
    request = h11.Request(method="POST", target=url.raw_path, headers=[
        ("Host", host), ("User-Agent", USER_AGENT), ("Content-Type", "text/plain"),
        ("Transfer-Encoding", "chunked"), ("Connection", "close")])
    answered = anyio.Event()
    sent_all = False
    status: list[int] = []
    async with stream:
        async with anyio.create_task_group() as tasks:

            async def read() -> None:
                """Until the broker answers or the connection ends; then it is over."""
                try:
                    while True:
                        event = connection.next_event()
                        if event is h11.NEED_DATA:
                            try:
                                data = await stream.receive(65536)
                            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                                data = b""
                            connection.receive_data(data)
                            continue
                        if isinstance(event, h11.Response):
                            status.append(event.status_code)
                        break  # a response, or the connection closed
                except h11.ProtocolError:
                    pass
                answered.set()
                if not sent_all:
                    tasks.cancel_scope.cancel()

            tasks.start_soon(read)
            try:
                await stream.send(connection.send(request))
                async for line in lines:
                    await stream.send(connection.send(h11.Data(data=(line + "\n").encode())))
                await stream.send(connection.send(h11.EndOfMessage()))
                sent_all = True
                with anyio.move_on_after(ANSWER_TIMEOUT):
                    await answered.wait()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError, h11.ProtocolError):
                pass  # the broker closed the connection: gone, as when it answers early
            tasks.cancel_scope.cancel()
    if status and status[0] >= 400:
        # lila-engine answers 400 to a line it cannot parse, 404 to a job it no longer has.
        LOGGER.warning("job %s: the broker refused the answer (%d)", job_id, status[0])
    return "sent" if sent_all else "gone"


def describe(job: Any) -> str:
    """A refused job's id for the log, without trusting its shape."""
    return json.dumps(job.get("id"))[:40] if isinstance(job, dict) else "(not a job)"
