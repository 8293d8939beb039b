"""The answer to UCI's `uci`: the engine's name, author and options, then `uciok`.

Apart from the adapter, and free of python-chess, so that the daemon can answer a GUI's first
`uci` before it loads anything a search needs (the GUI reads the options meanwhile).
"""

from __future__ import annotations

from collections.abc import Iterable

from cb_async.options import OptionSpec


def identity_lines(name: str, version: str, author: str, options: Iterable[OptionSpec]) -> list[str]:
    lines = [f"id name {name} {version}", f"id author {author}"]
    lines.extend(option_line(spec) for spec in options if "uci" in spec.protocols)
    lines.append("uciok")
    return lines


def option_line(spec: OptionSpec) -> str:
    line = f"option name {spec.name} type {spec.type}"
    match spec.type:
        case "check":
            line += f" default {'true' if spec.default else 'false'}"
        case "spin":
            line += f" default {spec.default} min {spec.min} max {spec.max}"
        case "combo":
            line += f" default {spec.default}" + "".join(f" var {choice}" for choice in spec.choices)
        case "string":
            line += f" default {spec.default or '<empty>'}"
    return line
