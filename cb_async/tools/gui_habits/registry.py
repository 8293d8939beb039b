"""The checks, as data: each one a small function registered with its group, its sentence and why.

A check's id is `PROTOCOL.GROUP.SLUG` (`uci.ponder.holds-bestmove`). Its sentence is its
docstring's first line, written as what a conforming engine does; the rest of the docstring is
how the check tests it. Groups name the GUI habit the checks stand in for and cite who has that
habit or which published bug it caught (sources: protocols.md in the project's reference notes).
`--list`, the reports and docs/conformance.md are all generated from this registry.
"""

from __future__ import annotations

import fnmatch
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, TypeVar

Protocol = Literal["uci", "xboard"]
PROTOCOLS: tuple[Protocol, ...] = ("uci", "xboard")


@dataclass(frozen=True)
class Group:
    """A GUI habit that breaks engines, and who has it (the motivation every check cites)."""

    protocol: Protocol
    name: str
    title: str
    why: str


@dataclass(frozen=True)
class Check:
    protocol: Protocol
    group: Group
    slug: str
    sentence: str
    how: str
    source: str
    run: Callable[..., None]

    @property
    def id(self) -> str:
        return f"{self.protocol}.{self.group.name}.{self.slug}"


GROUPS: list[Group] = []
CHECKS: list[Check] = []

F = TypeVar("F", bound=Callable[..., None])


def group(protocol: Protocol, name: str, title: str, why: str) -> Group:
    """Declare a group; its checks are registered in the order they are defined."""
    found = Group(protocol, name, title, " ".join(why.split()))
    GROUPS.append(found)
    return found


def check(in_group: Group, slug: str, source: str) -> Callable[[F], F]:
    """Register a check function: its docstring's first line is its sentence."""

    def register(function: F) -> F:
        doc = inspect.getdoc(function) or ""
        sentence, _, how = doc.partition("\n")
        if not sentence:
            raise ValueError(f"check {slug} needs a docstring: its sentence")
        entry = Check(in_group.protocol, in_group, slug, sentence.strip(), " ".join(how.split()),
                      " ".join(source.split()), function)
        if any(other.id == entry.id for other in CHECKS):
            raise ValueError(f"two checks named {entry.id}")
        CHECKS.append(entry)
        return function

    return register


def load() -> list[Check]:
    """Every registered check (importing the protocol modules registers them)."""
    from cb_async.tools.gui_habits import uci_checks, xboard_checks  # noqa: F401  (they register)

    return list(CHECKS)


def select(checks: list[Check], protocol: Protocol, only: list[str] | None) -> list[Check]:
    """The checks of `protocol`; with `only`, those whose id matches one of the patterns.

    A pattern is a shell glob over ids (`uci.ponder.*`, `*crlf*`) or an id prefix (`uci.ponder`).
    """
    chosen = [c for c in checks if c.protocol == protocol]
    if not only:
        return chosen
    return [c for c in chosen if any(_pattern_matches(p, c.id) for p in only)]


def _pattern_matches(pattern: str, check_id: str) -> bool:
    slug = check_id.rsplit(".", 1)[-1]
    return (fnmatch.fnmatchcase(check_id, pattern) or fnmatch.fnmatchcase(slug, pattern)
            or check_id.startswith(pattern.rstrip(".") + "."))
