"""A checkout imports exactly what the wheel installs: `cb_async` and the subpackages pyproject
lists, with the adapters (the repository's `adapters/` folder) as `cb_async.adapters`, and
nothing else under `cb_async`. The repository's other folders (`conformance`, `devtools`,
`scripts`, `tests`, ...) are not modules of the package, whether Python starts in the clone
(the clone's root on `sys.path`, as `python -m` and the tests do) or anywhere else.

What the wheel itself holds is conformance/test_install.py's to check; this is the source tree.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.typecheck import package_files

ROOT = Path(__file__).resolve().parent.parent
#: The packages the wheel installs, from pyproject (what setuptools builds it from).
INSTALLED_PACKAGES = sorted({module for module, path in package_files() if path.name == "__init__.py"})
#: Every folder of the repository beside the package, as a would-be `cb_async.NAME`.
FOLDERS = sorted(path.name for path in ROOT.iterdir()
                 if path.is_dir() and not path.name.startswith(".") and path.name.isidentifier()
                 and path.name not in ("cb_async", "build", "dist"))

PROBE = """
import importlib, importlib.util, json, sys
names = json.loads(sys.argv[1])
found = {}
for name in names:
    try:
        module = importlib.import_module(name)
    except ImportError:
        found[name] = None
    else:
        found[name] = getattr(module, "__file__", None)
import cb_async
print(json.dumps({"found": found, "path": list(cb_async.__path__)}))
"""


def probe(names: list[str], cwd: Path) -> dict[str, object]:
    run = subprocess.run([sys.executable, "-c", PROBE, json.dumps(names)], cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    result: dict[str, object] = json.loads(run.stdout)
    return result


@pytest.mark.parametrize("where", ["the clone's root", "another folder"])
def test_a_checkout_imports_only_what_the_wheel_installs(where: str, tmp_path: Path) -> None:
    assert {"adapters", "conformance", "devtools", "scripts", "tests"} <= set(FOLDERS)
    wanted = [f"cb_async.{folder}" for folder in FOLDERS] + INSTALLED_PACKAGES
    result = probe(wanted, ROOT if where == "the clone's root" else tmp_path)
    found = result["found"]
    assert isinstance(found, dict)
    importable = {name for name, file in found.items() if file is not None}
    assert importable == set(INSTALLED_PACKAGES), "importable but not installed, or the reverse"
    assert found["cb_async.adapters"] == str(ROOT / "adapters" / "__init__.py")
    assert result["path"] == [str(ROOT / "cb_async")], "cb_async's path reaches beyond its own folder"


def test_the_installed_packages_are_the_folders_with_modules() -> None:
    """pyproject's list is whole: each folder of `cb_async` with modules is a package it names
    (a subpackage left out would import here and be missing from the wheel)."""
    folders = {"cb_async." + ".".join(path.parent.relative_to(ROOT / "cb_async").parts)
               for path in (ROOT / "cb_async").rglob("*.py") if path.parent != ROOT / "cb_async"}
    assert folders | {"cb_async", "cb_async.adapters"} == set(INSTALLED_PACKAGES)
