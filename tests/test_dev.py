"""dev.py installs what each command needs and no more, and says so on stderr only.

`engine` (and every cb-async subcommand) gets the runtime dependencies; `test` adds the test
extras. The stamp in .venv remembers what was installed, so that switching from `engine` to
`test` installs the extras, and going back installs nothing.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[list[str]]]:
    """dev.py with its .venv in a temporary folder and pip replaced by a recorder."""
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    venv = tmp_path / ".venv"
    monkeypatch.setattr(module, "VENV", venv)
    monkeypatch.setattr(module, "PYTHON", venv / "bin" / "python")
    monkeypatch.setattr(module, "STAMP", venv / ".cb-async-installed")

    class FakeBuilder:
        def __init__(self, with_pip: bool) -> None:
            assert with_pip

        def create(self, path: Path) -> None:
            (path / "bin").mkdir(parents=True, exist_ok=True)
            (path / "bin" / "python").write_text("")

    monkeypatch.setattr(module.venv, "EnvBuilder", FakeBuilder)
    installs: list[list[str]] = []

    def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        assert kwargs["stdout"] is sys.stderr
        installs.append(args)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(module.subprocess, "run", run)
    return module, installs


def target(args: list[str]) -> str:
    return args[args.index("-e") + 1]


def test_engine_installs_runtime_only_and_test_adds_the_extras(
        dev: tuple[ModuleType, list[list[str]]], capsys: pytest.CaptureFixture[str]) -> None:
    module, installs = dev
    engine: frozenset[str] = frozenset()
    test = frozenset({"test"})
    module.ensure_environment(engine)
    assert [target(args) for args in installs] == [str(ROOT)]
    module.ensure_environment(engine)
    assert len(installs) == 1, "nothing changed: nothing to install"
    module.ensure_environment(test)
    assert target(installs[-1]) == f"{ROOT}[test]"
    module.ensure_environment(engine)
    module.ensure_environment(test)
    assert len(installs) == 2, "the engine after the tests, and the tests again, install nothing"
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["dev.py: creating .venv", "dev.py: installing cb-async into .venv",
                                "dev.py: installing cb-async and its test dependencies into .venv"]


def test_a_changed_pyproject_installs_again(dev: tuple[ModuleType, list[list[str]]],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    module, installs = dev
    module.ensure_environment(frozenset({"test"}))
    monkeypatch.setattr(module, "fingerprint", lambda: "changed")
    module.ensure_environment(frozenset())
    assert target(installs[-1]) == str(ROOT)
    module.ensure_environment(frozenset({"test"}))
    assert target(installs[-1]) == f"{ROOT}[test]"
    assert len(installs) == 3


def test_a_lost_interpreter_installs_again(dev: tuple[ModuleType, list[list[str]]]) -> None:
    module, installs = dev
    module.ensure_environment(frozenset())
    module.PYTHON.unlink()
    module.ensure_environment(frozenset())
    assert len(installs) == 2


def test_the_test_extras_are_declared() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"])
    for name in ("pytest", "hypothesis", "pyyaml"):
        assert name not in runtime
        assert any(extra.startswith(name) for extra in project["optional-dependencies"]["test"])
