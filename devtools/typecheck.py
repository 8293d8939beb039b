"""`python3 dev.py types`: mypy --strict over the package as the wheel lays it out, and over
these tools, reading the repository's files where they are.

The adapters live in the repository's `adapters/` folder and install as `cb_async.adapters`
(pyproject's `package-dir`). mypy finds a module by its folders and knows no such mapping, so
this hands it every file with the module name it installs under, from pyproject's `packages`
and `package-dir`: the list setuptools builds the wheel from. No copy, no links, no path
entry: mypy's messages name the repository's files. It uses mypy's documented building blocks
(`mypy.main.process_options` for pyproject's `[tool.mypy]`, `mypy.build.build` with explicit
`BuildSource`s, which is how mypy's own daemon and stubgen hand it modules).
"""

from __future__ import annotations

import argparse
import os
import sys
import tomllib
from pathlib import Path

from devtools import command_line

ROOT = Path(__file__).resolve().parent.parent


def package_files(root: Path = ROOT) -> list[tuple[str, Path]]:
    """(module name once installed, file in the repository) for every module the wheel holds."""
    setuptools = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders: dict[str, str] = setuptools.get("package-dir", {})
    found = []
    for package in setuptools["packages"]:
        folder = root / folders.get(package, package.replace(".", "/"))
        for path in sorted(folder.glob("*.py")):
            found.append((package if path.stem == "__init__" else f"{package}.{path.stem}", path))
    return found


def tool_files(root: Path = ROOT) -> list[tuple[str, Path]]:
    """The clone's own tools (this folder): typed like the package, though not installed."""
    return [("devtools" if path.stem == "__init__" else f"devtools.{path.stem}", path)
            for path in sorted((root / "devtools").glob("*.py"))]


def check(cache_dir: Path | None = None) -> tuple[int, list[str]]:
    """(status, messages): 0 when mypy finds nothing, as mypy's own command would say."""
    from mypy import build
    from mypy.errors import CompileError
    from mypy.fscache import FileSystemCache
    from mypy.main import process_options
    from mypy.modulefinder import BuildSource

    fscache = FileSystemCache()
    args = ["--config-file", str(ROOT / "pyproject.toml")]
    if cache_dir is not None:
        args += ["--cache-dir", str(cache_dir)]
    _, options = process_options(args, require_targets=False, fscache=fscache)
    files = package_files() + tool_files()
    # Paths as mypy's own command line would name them from the clone's root (run() works there).
    sources = [BuildSource(os.path.relpath(path), module) for module, path in files]
    messages: list[str] = []

    def collect(filename: str | None, new_messages: list[str], serious: bool) -> None:
        messages.extend(new_messages)

    try:
        build.build(sources, options, None, collect, fscache)
    except CompileError as error:
        return 2, messages or list(error.messages)
    errors = [message for message in messages if ": error:" in message]
    if errors:
        return 1, messages + [f"Found {len(errors)} errors in {len(files)} source files"]
    return 0, messages + [f"Success: no issues found in {len(files)} source files"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cache-dir", type=Path, help="mypy's cache (default: .mypy_cache in the clone)")


def run(args: argparse.Namespace) -> int:
    cache_dir = args.cache_dir.resolve() if args.cache_dir is not None else None
    os.chdir(ROOT)  # pyproject's [tool.mypy] and the default cache are the clone's
    status, messages = check(cache_dir)
    print("\n".join(messages))
    return status


def main(argv: list[str] | None = None) -> int:
    return command_line("python3 dev.py types", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
