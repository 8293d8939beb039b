"""Every Python example in the docs runs, as written, and starts the engine only under the
`if __name__ == "__main__":` guard (the worker is spawned on macOS and Windows, and a spawned
worker imports the script's module: without the guard it cannot start). test_embedded runs
this file a second time with the worker spawned."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def python_blocks() -> list[tuple[str, str]]:
    blocks = []
    for path in [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]:
        for number, code in enumerate(re.findall(r"```python\n(.*?)```", path.read_text(), re.S), 1):
            if "popen_uci(\"stockfish\")" in code or code.lstrip().startswith("# transport"):
                continue  # a one-line comparison, not a program
            blocks.append((f"{path.name}#{number}", code))
    return blocks


BLOCKS = python_blocks()


@pytest.mark.parametrize("name,code", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_example_runs(name: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"{name} failed:\n{run.stdout}\n{run.stderr}"
    assert run.stdout.strip(), f"{name} printed nothing"


@pytest.mark.parametrize("name,code", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_example_starts_the_engine_under_the_main_guard(name: str, code: str) -> None:
    guard = 'if __name__ == "__main__":'
    assert guard in code, f"{name} has no {guard} guard"
    top_level = code.split(guard)[0]
    started = [line for line in top_level.splitlines()
               if line and not line[0].isspace() and re.search(r"\b(asyncio\.run|trio\.run|Engine\(|SimpleEngine\()", line)]
    assert not started, f"{name} starts the engine outside the guard: {started}"


def test_the_examples_are_found() -> None:
    assert {name.split("#")[0] for name, _ in BLOCKS} >= {"README.md", "embedding.md"}
    assert len(BLOCKS) >= 6

