"""Every Python example in the docs runs, as written."""

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
