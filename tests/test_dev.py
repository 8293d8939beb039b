"""dev.py installs what each command needs and no more, and says so on stderr only.

`engine` (and every cb-async subcommand) gets the runtime dependencies; `test` adds the test
extras, then the `ray` extra where it installs. The stamp in .venv remembers what was
installed, so that switching from `engine` to `test` installs the extras, and going back
installs nothing.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
REAL_RUN = subprocess.run


@pytest.fixture
def dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[list[str]]]:
    """dev.py with its .venv in a temporary folder and pip replaced by a recorder."""
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", module.Environment(tmp_path / ".venv", (sys.executable,)))
    installs: list[list[str]] = []

    def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        assert kwargs["stdout"] is sys.stderr
        if args[1:3] == ["-m", "venv"]:  # making the environment: a stand-in interpreter
            folder = Path(args[3])
            (folder / "bin").mkdir(parents=True, exist_ok=True)
            (folder / "bin" / "python").write_text("")
        else:
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
    assert [target(args) for args in installs[1:]] == [f"{ROOT}[test]", f"{ROOT}[ray,test]"]
    module.ensure_environment(engine)
    module.ensure_environment(test)
    assert len(installs) == 3, "the engine after the tests, and the tests again, install nothing"
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
    assert [target(args) for args in installs[-2:]] == [f"{ROOT}[test]", f"{ROOT}[ray,test]"]
    assert len(installs) == 5


def test_a_ray_extra_that_does_not_install_is_said_once_and_fails_nothing(
        dev: tuple[ModuleType, list[list[str]]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    module, installs = dev
    record = module.subprocess.run

    def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        done = record(args, **kwargs)  # the recorder: makes the stand-in interpreter, notes installs
        failed = "-e" in args and "ray" in target(args)
        return subprocess.CompletedProcess(args, 1 if failed else done.returncode)

    monkeypatch.setattr(module.subprocess, "run", run)
    module.ensure_environment(frozenset({"test"}))
    module.ensure_environment(frozenset({"test"}))
    assert [target(args) for args in installs] == [f"{ROOT}[test]", f"{ROOT}[ray,test]"]
    assert capsys.readouterr().err.splitlines()[-1] == (
        "dev.py: the ray extra has no install for this Python; the Ray tests will be skipped")


def test_a_lost_interpreter_installs_again(dev: tuple[ModuleType, list[list[str]]]) -> None:
    module, installs = dev
    module.ensure_environment(frozenset())
    module.HERE.python.unlink()
    module.ensure_environment(frozenset())
    assert len(installs) == 2


def test_the_test_extras_are_declared() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = " ".join(project["dependencies"])
    for name in ("pytest", "hypothesis", "pyyaml"):
        assert name not in runtime
        assert any(extra.startswith(name) for extra in project["optional-dependencies"]["test"])


def test_an_interpreter_is_known_by_running_it(dev: tuple[ModuleType, list[list[str]]]) -> None:
    module, _ = dev
    module.subprocess.run = REAL_RUN  # the fixture's recorder stands in for pip, not for this
    assert module.version_of((sys.executable,)) == "%d.%d" % sys.version_info[:2]
    assert module.version_of(("no-such-python-here",)) is None


def test_the_suite_runs_under_each_python_found_and_a_missing_one_is_a_line(
        dev: tuple[ModuleType, list[list[str]]], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    module, installs = dev
    this = "%d.%d" % sys.version_info[:2]
    other = "3.12" if this != "3.12" else "3.13"
    monkeypatch.setattr(module, "other_pythons", lambda version: {other: ("python-" + other,)})
    monkeypatch.setattr(module, "ROOT", module.HERE.folder.parent)
    monkeypatch.setattr(module, "fingerprint", lambda: "pyproject")
    calls: list[list[str]] = []
    monkeypatch.setattr(module.subprocess, "call", lambda args, **kwargs: calls.append(args) or 0)
    assert module.test_everywhere(["-k", "something"]) == 0
    assert [args[0] for args in calls] == sorted([str(module.HERE.python), str(module.ROOT / ".venvs" / other / "bin" / "python")],
                                                 key=lambda path: ".venvs" in path if this < other else ".venvs" not in path)
    assert all(args[1:] == ["-m", "pytest", "-q", "-k", "something"] for args in calls)
    err = capsys.readouterr().err
    missing = [version for version in module.SUPPORTED if version not in (this, other)]
    for version in missing:
        assert f"dev.py: Python {version} is not on this machine: its run is skipped" in err
    assert f"dev.py: Python {this}: passed" in err and f"dev.py: Python {other}: passed" in err


def test_the_classifiers_name_the_tested_versions(dev: tuple[ModuleType, list[list[str]]]) -> None:
    import tomllib

    module, _ = dev
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    named = {c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
             if c.startswith("Programming Language :: Python :: 3.")}
    assert named == set(module.SUPPORTED)
    assert project["requires-python"] == f">={module.SUPPORTED[0]}"
