"""Line framing: fed byte by byte and in chunks, CRLF, the 1 MiB cap, invalid UTF-8, end of input."""

from __future__ import annotations

import os
import threading

import pytest

from cb_async.framing import MAX_LINE_BYTES, LineFramer, StdinReader, TooLong


def feed_all(data: bytes, chunk: int) -> list[object]:
    framer = LineFramer()
    out: list[object] = []
    for i in range(0, len(data), chunk):
        out += framer.feed(data[i : i + chunk])
    return out + framer.close()


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1000])
def test_lines_in_any_chunking(chunk: int) -> None:
    data = b"uci\r\nisready\n\nposition startpos moves e2e4\r\ngo"
    assert feed_all(data, chunk) == ["uci", "isready", "", "position startpos moves e2e4", "go"]


def test_invalid_utf8_is_replaced_not_fatal() -> None:
    assert feed_all(b"\xff\xfeisready\n", 4) == ["\ufffd\ufffdisready"]


def test_over_long_line_is_discarded_and_reported_with_its_size() -> None:
    big = b"x" * (MAX_LINE_BYTES + 10)
    out = feed_all(big + b"\nisready\n", 65536)
    assert out == [TooLong(MAX_LINE_BYTES + 10), "isready"]


def test_line_of_exactly_the_cap_is_kept() -> None:
    line = b"y" * MAX_LINE_BYTES
    out = feed_all(line + b"\n", 4096)
    assert out == ["y" * MAX_LINE_BYTES]


def test_reader_thread_reads_a_pipe_to_its_end() -> None:
    read_fd, write_fd = os.pipe()
    got: list[object] = []
    done = threading.Event()

    def deliver(line: object, at: float) -> None:
        got.append(line)
        if line is None:
            done.set()

    StdinReader(read_fd, deliver).start()
    os.write(write_fd, b"uci\r\nisre")
    os.write(write_fd, b"ady\nlast")
    os.close(write_fd)
    assert done.wait(5)
    os.close(read_fd)
    assert got == ["uci", "isready", "last", None]
