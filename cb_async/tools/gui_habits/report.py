"""Reports: a line per check as it finishes (text), and a JUnit XML file for an engine's CI."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ElementTree
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from cb_async.tools.gui_habits.registry import Check, Group
from cb_async.tools.gui_habits.runner import Result

#: Transcript lines shown before a failure (and every line after it).
CONTEXT_LINES = 25


def check_line(check: Check) -> str:
    return f"{check.id:<44} {check.sentence}"


def list_checks(checks: Sequence[Check], out: TextIO) -> None:
    """`--list`: the ids and sentences, under their groups."""
    current: Group | None = None
    for check in checks:
        if check.group is not current:
            current = check.group
            out.write(f"\n{current.protocol}.{current.name}: {current.title}\n")
        out.write(f"  {check_line(check)}\n")


def transcript_text(result: Result, context: int = CONTEXT_LINES) -> list[str]:
    """The lines sent and received around a failure, with milliseconds since the engine started."""
    lines = result.transcript
    shown = lines[-context:] if context else lines
    out = [f"        ... {len(lines) - len(shown)} earlier lines" if len(shown) < len(lines) else ""]
    for line in shown:
        out.append(f"        {(line.at - result.started_at) * 1000:7.0f} ms {line.direction} {line.text}")
    if result.stderr:
        out.append("        stderr (last lines):")
        out += [f"          {text}" for text in result.stderr[-5:]]
    return [text for text in out if text]


class TextReport:
    """One line per check, grouped by habit with its motivation; details under each failure."""

    def __init__(self, out: TextIO, verbose: bool = False) -> None:
        self.out = out
        self.verbose = verbose
        self.group: Group | None = None

    def header(self, command: str, protocol: str, count: int) -> None:
        self.out.write(f"cb-async conformance: {command} ({protocol}), {count} checks\n")
        self.out.flush()

    def result(self, result: Result) -> None:
        check = result.check
        if check.group is not self.group:
            self.group = check.group
            self.out.write(f"\n{check.group.title} ({check.protocol}.{check.group.name})\n")
            self.out.write(textwrap.fill(check.group.why, 100, initial_indent="  ", subsequent_indent="  ") + "\n")
        self.out.write(f"  {result.status}  {check_line(check)}  [{result.seconds:.1f} s]\n")
        if result.status == "FAIL":
            self.out.write(f"        why: {check.source}\n")
            for text in result.message.strip().splitlines():
                self.out.write(f"        {text}\n")
            self.out.write("\n".join(transcript_text(result)) + "\n")
        elif result.status == "SKIP":
            self.out.write(f"        skipped: {result.message}\n")
        elif self.verbose:
            self.out.write("\n".join(transcript_text(result, 0)) + "\n")
        self.out.flush()

    def summary(self, results: Sequence[Result]) -> None:
        counts = Counter(result.status for result in results)
        self.out.write(f"\n{len(results)} checks: {counts['PASS']} passed, {counts['FAIL']} failed, "
                       f"{counts['SKIP']} skipped\n")
        failed = [result.check.id for result in results if result.status == "FAIL"]
        if failed:
            self.out.write("failed: " + ", ".join(failed) + "\n")
        self.out.flush()


def write_junit(path: Path, command: str, protocol: str, results: Sequence[Result]) -> None:
    """A JUnit XML report: a test suite per group, a test case per check."""
    root = ElementTree.Element("testsuites", name=f"cb-async conformance: {command} ({protocol})")
    suites: dict[str, ElementTree.Element] = {}
    for result in results:
        check = result.check
        key = f"{check.protocol}.{check.group.name}"
        if key not in suites:
            suites[key] = ElementTree.SubElement(root, "testsuite", name=key)
        case = ElementTree.SubElement(suites[key], "testcase", classname=key, name=check.slug,
                                      time=f"{result.seconds:.3f}")
        if result.status == "FAIL":
            failure = ElementTree.SubElement(case, "failure", message=result.message.splitlines()[0][:500],
                                             type="ConformanceFailure")
            failure.text = "\n".join([check.sentence, f"why: {check.source}", result.message,
                                      *transcript_text(result, 0)])
        elif result.status == "SKIP":
            ElementTree.SubElement(case, "skipped", message=result.message)
        out = ElementTree.SubElement(case, "system-out")
        out.text = "\n".join(transcript_text(result, 0))
    for key, suite in suites.items():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    root.set("tests", str(len(results)))
    root.set("failures", str(sum(1 for r in results if r.status == "FAIL")))
    ElementTree.indent(root)
    path.write_text(ElementTree.tostring(root, encoding="unicode") + "\n", encoding="utf-8")


def markdown(checks: Sequence[Check]) -> str:
    """Each group with why it exists and its checks with their sources (docs/conformance.md)."""
    out: list[str] = []
    current: Group | None = None
    for check in checks:
        if check.group is not current:
            current = check.group
            out += ["", f"### {current.title} (`{current.protocol}.{current.name}`)", "", current.why, ""]
        out.append(f"- `{check.id}`: {check.sentence}. *{check.source}.*")
    return "\n".join(out).strip() + "\n"
