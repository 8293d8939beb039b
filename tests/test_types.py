"""The package type-checks: mypy --strict over `cb_async` as the wheel lays it out (the
adapters as `cb_async.adapters`), and over the clone's `devtools`, read where the files are.

`python3 dev.py types` is the same check (`devtools.typecheck` says how mypy is told the
adapters' installed name).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_mypy_strict_finds_nothing() -> None:
    run = subprocess.run([sys.executable, "-m", "devtools.typecheck", "--cache-dir", str(ROOT / ".mypy_cache")],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("Success: no issues found")
