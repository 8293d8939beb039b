"""The journal: every finished position, appended as it completes, so nothing is ever lost.

A JSON Lines file beside the output. Its first line names the job (engine version and budget);
each later line is one `Evaluation`. The driver alone writes it, one `write` per line on an
append-only descriptor, so a job killed at any instant (Ctrl-C, `kill -9`, a lost machine)
leaves at most one torn last line, which the next run drops and recomputes. The page cache
holds a line as soon as `write` returns, so killing the process loses nothing; the file is
also fsynced about once a second, so a power cut loses at most that second.

Running the same command again reads the journal back and searches only what is missing. A
journal written for another budget or engine version would give different answers than a
fresh run, so it is refused (`JournalMismatch`) rather than mixed in.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from cb_async.analysis.model import Evaluation, Line
from cb_async.results import Score

FORMAT = 1
#: Seconds between two fsyncs of the journal.
SYNC_INTERVAL = 1.0


class JournalError(Exception):
    """The journal cannot be used: unreadable, damaged, or written for another job."""


class JournalMismatch(JournalError):
    pass


class Journal:
    """Append-only record of finished positions; `load` returns what an earlier run found."""

    def __init__(self, path: str, job: dict[str, Any]) -> None:
        self.path = path
        self.job = {"journal": FORMAT, **job}
        self._fd: int | None = None
        self._last_sync = 0.0
        self.written = 0

    def open(self, restart: bool = False) -> dict[str, Evaluation]:
        """Open for appending and return the evaluations already in it (none with `restart`)."""
        found: dict[str, Evaluation] = {}
        if restart or not os.path.exists(self.path):
            self._create()
            return found
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except OSError as error:
            raise JournalError(f"{self.path}: {error.strerror or error}") from None
        good_end = 0
        lines = data.split(b"\n")
        complete = lines[:-1]  # the last element is b"" or a line torn by a kill: dropped
        for index, raw in enumerate(complete):
            try:
                record = json.loads(raw)
                if index == 0:
                    self._check_header(record)
                else:
                    evaluation = evaluation_from_json(record)
                    found[evaluation.key] = evaluation
            except (ValueError, KeyError, TypeError):
                if index == len(complete) - 1 and index > 0:
                    break  # a last line damaged by a crash: drop it, recompute it
                raise JournalError(f"{self.path}: line {index + 1} is damaged; remove the file "
                                   "or pass --restart to start over") from None
            good_end += len(raw) + 1
        if good_end == 0:
            self._create()
            return {}
        self._fd = self._open_fd(truncate_to=good_end)
        return found

    def append(self, evaluation: Evaluation) -> None:
        """Record one position, whole or not at all: a write that fails (a full disk, a lost
        device) takes back what it wrote of the line and raises `JournalError`, so the journal
        ends with the last whole line and a later run resumes from it."""
        assert self._fd is not None, "the journal is not open"
        data = (json.dumps(evaluation_to_json(evaluation), separators=(",", ":")) + "\n").encode()
        end = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(self._fd, data):]
            now = time.monotonic()
            if now - self._last_sync >= SYNC_INTERVAL:
                os.fsync(self._fd)
                self._last_sync = now
        except OSError as error:
            self._failed(end, error)
        self.written += 1

    def _failed(self, end: int, error: OSError) -> None:
        try:
            assert self._fd is not None
            os.truncate(self._fd, end)
        except OSError:
            pass  # a torn last line is dropped when the journal is read back
        kept = f"{self.written} position{'' if self.written == 1 else 's'}"
        raise JournalError(f"{self.path}: cannot write: {error.strerror or error}; it keeps the {kept} written "
                           "so far: make room and run the same command again to resume") from None

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError:
                pass  # what was written is in the page cache; a failed write has been reported
            finally:
                os.close(self._fd)
                self._fd = None

    def _create(self) -> None:
        self._fd = self._open_fd(truncate_to=0)
        os.write(self._fd, (json.dumps(self.job, separators=(",", ":")) + "\n").encode())

    def _open_fd(self, truncate_to: int) -> int:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.truncate(fd, truncate_to)
        except OSError as error:
            raise JournalError(f"{self.path}: {error.strerror or error}") from None
        return fd

    def _check_header(self, record: object) -> None:
        if not isinstance(record, dict) or record.get("journal") != FORMAT:
            raise JournalError(f"{self.path}: not an analysis journal; remove it or pass --restart")
        if record != self.job:
            theirs = {k: v for k, v in record.items() if self.job.get(k) != v}
            raise JournalMismatch(f"{self.path} was written by another job ({_describe(theirs)}); "
                                  "pass --restart to discard it, or choose another --journal")


def _describe(fields: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in sorted(fields.items()))


# -- the line format -----------------------------------------------------------------------------


def _score_json(score: Score) -> dict[str, int]:
    return {"mate": score.mate} if score.mate is not None else {"cp": score.cp or 0}


def _score_from(record: dict[str, Any]) -> Score:
    return Score(mate=int(record["mate"])) if "mate" in record else Score(cp=int(record["cp"]))


def evaluation_to_json(evaluation: Evaluation) -> dict[str, Any]:
    record: dict[str, Any] = {"key": evaluation.key, "best": evaluation.best, "score": _score_json(evaluation.score),
                              "pv": list(evaluation.pv), "depth": evaluation.depth, "seldepth": evaluation.seldepth,
                              "nodes": evaluation.nodes, "time": evaluation.time_ms}
    if len(evaluation.lines) > 1:
        record["lines"] = [{"score": _score_json(line.score), "pv": list(line.pv)} for line in evaluation.lines]
    return record


def evaluation_from_json(record: Any) -> Evaluation:
    if not isinstance(record, dict):
        raise ValueError("not an object")
    score = _score_from(record["score"])
    pv = tuple(str(move) for move in record["pv"])
    lines = tuple(Line(_score_from(line["score"]), tuple(str(m) for m in line["pv"])) for line in record.get("lines", ()))
    return Evaluation(
        key=str(record["key"]), best=record["best"], score=score, pv=pv, depth=int(record["depth"]),
        seldepth=int(record["seldepth"]), nodes=int(record["nodes"]), time_ms=int(record["time"]),
        lines=lines or (Line(score, pv),),
    )
