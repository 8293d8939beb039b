"""A journal write that fails (a full disk) stops the run with a clear error and keeps every
position already written whole: nothing half-written is ever read back as a result."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cb_async.analysis.journal import Journal
from cb_async.analysis.model import Evaluation, Line
from cb_async.results import Score

#: In a child process: the file may grow by only a few bytes more (RLIMIT_FSIZE; a write past
#: it fails with EFBIG, as one on a full disk fails with ENOSPC), then two more positions.
FILL_UP = """
import json, resource, signal, sys
from cb_async.analysis.journal import Journal, JournalError
from cb_async.analysis.model import Evaluation, Line
from cb_async.results import Score

def evaluation(key):
    return Evaluation(key, "e2e4", Score(cp=5), ("e2e4",), 5, 7, 400, 3, (Line(Score(cp=5), ("e2e4",)),))

path = sys.argv[1]
journal = Journal(path, {"nodes": 400})
journal.open()
journal.append(evaluation("a"))
size = journal_size = __import__("os").path.getsize(path)
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 20, resource.RLIM_INFINITY))
try:
    journal.append(evaluation("b"))
except JournalError as error:
    print(error)
journal.close()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE and SIGXFSZ: POSIX, tried on Linux")
def test_a_failed_journal_write_is_a_clear_error_and_leaves_only_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "job.journal"
    done = subprocess.run([sys.executable, "-c", FILL_UP, str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout == (f"{path}: cannot write: File too large; it keeps the 1 position written so far: "
                           "make room and run the same command again to resume\n")
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b"" and len(lines) == 3  # the header, "a", and no torn piece of "b"
    assert json.loads(lines[1])["key"] == "a"
    again = Journal(str(path), {"nodes": 400})
    assert list(again.open()) == ["a"]
    again.append(Evaluation("b", "e2e4", Score(cp=5), ("e2e4",), 5, 7, 400, 3, (Line(Score(cp=5), ("e2e4",)),)))
    again.close()
    assert list(Journal(str(path), {"nodes": 400}).open()) == ["a", "b"]
