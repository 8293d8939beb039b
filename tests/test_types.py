"""The package type-checks: mypy --strict over `cb_async`, the adapters included.

The adapters live in the repository's top-level `adapters/` folder and install as
`cb_async.adapters`; mypy knows no such mapping, so it checks a tree of links laid out as the
installed package is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def installed_layout(into: Path) -> Path:
    """`cb_async` as it installs, made of links to the repository's files (at a fixed place,
    so that mypy's cache serves the next run)."""
    package = into / "cb_async"
    if package.exists():
        shutil.rmtree(package)
    package.mkdir(parents=True)
    for entry in (ROOT / "cb_async").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    (package / "adapters").symlink_to(ROOT / "adapters")
    return package


@pytest.mark.skipif(os.name == "nt", reason="the linked tree needs symbolic links")
def test_mypy_strict_finds_nothing() -> None:
    cache = ROOT / ".mypy_cache"
    tree = cache / "installed-layout"
    installed_layout(tree)
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(cache), "-p", "cb_async"],
        cwd=tree, capture_output=True, text=True, timeout=600,
    )
    report = run.stdout.replace(str(tree / "cb_async" / "adapters"), "adapters")
    assert run.returncode == 0, report + run.stderr
