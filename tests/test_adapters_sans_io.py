"""The adapters do no I/O: importing them pulls in no asyncio, subprocess or worker machinery.

(python-chess itself imports `threading`, so that module cannot be the test.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest

FORBIDDEN = ("asyncio", "subprocess", "multiprocessing", "cb_async.session", "cb_async.daemon")


@pytest.mark.parametrize("module", ["cb_async.adapters.uci", "cb_async.adapters.xboard", "cb_async.adapters.cnp"])
def test_adapter_imports_no_io_machinery(module: str) -> None:
    code = (
        "import importlib, sys\n"
        f"importlib.import_module({module!r})\n"
        f"print(','.join(m for m in {FORBIDDEN!r} if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"{module} does not import:\n{run.stderr}"
    assert run.stdout.strip() == ""


def test_uci_start_path_does_not_import_pydantic() -> None:
    """pydantic costs most of the start-up budget; the UCI path must not load it."""
    code = "import sys, cb_async.session, cb_async.adapters.uci, cb_async.daemon; print('pydantic' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "False"
