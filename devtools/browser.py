"""Render a local HTML page in headless Chromium, and list what the page asked the network for.

For the report's test and the docs' screenshot: Debian's `chromium` (`apt-get install
chromium`; `.ci/run` installs it as root) opens a page from disk and is driven through its
DevTools protocol over a pipe (`--remote-debugging-pipe`: JSON messages ended by NUL on file
descriptors 3 and 4, no websocket library needed). `Network.requestWillBeSent` names every
request the page makes, so a self-contained page shows none but its own file; Chromium's own
background requests (time, updates) belong to no page and are not counted. A proxy on a closed
port keeps all of it on this machine anyway. `Page.captureScreenshot` gives the picture.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

#: Chromium's flags for a headless screenshot as root in a container, without its own traffic.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--no-default-browser-check", "--metrics-recording-only", "--disable-breakpad"]
TIMEOUT = 120.0


def chromium() -> str | None:
    """The browser's command, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found is not None:
            return found
    return None


@dataclass(frozen=True, slots=True)
class Rendered:
    """The screenshot and the page's requests other than its own file (none, for a page of ours)."""

    png: Path
    requests: list[str]


class _DevTools:
    """The DevTools protocol over Chromium's pipe: send a command, read until its answer."""

    def __init__(self, write: BinaryIO, read: BinaryIO) -> None:
        self._write, self._read = write, read
        self._buffer = b""
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        number = next(self._ids)
        message: dict[str, Any] = {"id": number, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        self._write.write(json.dumps(message).encode() + b"\0")
        self._write.flush()
        while True:
            answer = self._next()
            if answer.get("id") == number:
                if "error" in answer:
                    raise RuntimeError(f"chromium: {method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def wait_for(self, method: str, deadline: float) -> None:
        while not any(event.get("method") == method for event in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"chromium: no {method} in time")
            self.events.append(self._next())

    def _next(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = os.read(self._read.fileno(), 65536)
            if not chunk:
                raise RuntimeError("chromium closed its DevTools pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message


def screenshot(page: Path, png: Path, width: int = 412, height: int = 1400) -> Rendered:
    """Open `page` from disk at `width` x `height` CSS pixels (a phone's width by default), save
    what is drawn to `png`, and return the page's requests for anything but itself."""
    browser = chromium()
    if browser is None:
        raise FileNotFoundError("chromium is not installed (apt-get install chromium)")
    url = page.resolve().as_uri()
    to_browser_read, to_browser_write = os.pipe()
    from_browser_read, from_browser_write = os.pipe()
    with tempfile.TemporaryDirectory(prefix="cb-async-chromium-") as profile:
        command = [browser, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe",
                   "--proxy-server=http://127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
                   f"--window-size={width},{height}", "about:blank"]

        def descriptors() -> None:  # the pipe's ends as fds 3 and 4 in the child, whatever they were
            reading, writing = os.dup(to_browser_read), os.dup(from_browser_write)
            os.dup2(reading, 3)
            os.dup2(writing, 4)

        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, preexec_fn=descriptors, close_fds=False)
        os.close(to_browser_read)
        os.close(from_browser_write)
        writer = os.fdopen(to_browser_write, "wb")
        reader = os.fdopen(from_browser_read, "rb")
        try:
            tools = _DevTools(writer, reader)
            deadline = time.monotonic() + TIMEOUT
            target = tools.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            session = tools.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            tools.call("Network.enable", session=session)
            tools.call("Page.enable", session=session)
            tools.call("Emulation.setDeviceMetricsOverride",
                       {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
                       session=session)
            tools.call("Page.navigate", {"url": url}, session=session)
            tools.wait_for("Page.loadEventFired", deadline)
            shot = tools.call("Page.captureScreenshot", {"format": "png"}, session=session)
            png.write_bytes(base64.b64decode(shot["data"]))
            requests = [event["params"]["request"]["url"] for event in tools.events
                        if event.get("method") == "Network.requestWillBeSent"
                        and event.get("sessionId") == session]
            try:
                tools.call("Browser.close")
            except RuntimeError:
                pass
        finally:
            writer.close()
            reader.close()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return Rendered(png, [request for request in requests if request != url])
