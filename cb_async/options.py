"""The engine's options: one table, shown by every protocol in its own way.

UCI declares them with `option name ...`, XBoard with `feature option=...`, CNP in
`engine/hello`. Values arrive as protocol text ("true", "64", "<empty>") or as JSON values;
`parse_value` turns either into the option's type or says clearly what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cb_async.search.levels import DEFAULT_ELO, MAX_ELO, MIN_ELO
from cb_async.search.eval_file import DEFAULT_EVAL_FILE

OptionType = Literal["check", "spin", "combo", "button", "string"]


class OptionValueError(ValueError):
    """A value that the option does not take, or an option the engine does not have."""

    def __init__(self, option: str, message: str) -> None:
        super().__init__(message)
        self.option = option


@dataclass(frozen=True, slots=True)
class OptionSpec:
    name: str
    type: OptionType
    default: Any = None
    min: int | None = None
    max: int | None = None
    choices: tuple[str, ...] = ()
    #: Only some front ends show it (CNP's maxTimeMs is the node's own bound).
    protocols: frozenset[str] = frozenset({"uci", "xboard", "cnp"})
    #: What it is for, in a few words: the docs' option tables are made from it.
    doc: str = ""

    def parse_value(self, value: Any) -> Any:
        """The typed value of `value` (text or JSON), or OptionValueError."""
        match self.type:
            case "button":
                return None
            case "check":
                if isinstance(value, bool):
                    return value
                if isinstance(value, str) and value.strip().lower() in ("true", "false"):
                    return value.strip().lower() == "true"
                raise OptionValueError(self.name, f"{self.name} takes true or false, not {value!r}")
            case "spin":
                if isinstance(value, bool):
                    raise OptionValueError(self.name, f"{self.name} takes a whole number, not {value!r}")
                if isinstance(value, str):
                    try:
                        value = int(value.strip())
                    except ValueError:
                        raise OptionValueError(self.name, f"{self.name} takes a whole number, not {value!r}") from None
                if not isinstance(value, int):
                    raise OptionValueError(self.name, f"{self.name} takes a whole number, not {value!r}")
                assert self.min is not None and self.max is not None
                if not self.min <= value <= self.max:
                    raise OptionValueError(self.name, f"{self.name} must be between {self.min} and {self.max}, not {value}")
                return value
            case "combo":
                if isinstance(value, str):
                    for choice in self.choices:
                        if choice.lower() == value.strip().lower():
                            return choice
                raise OptionValueError(self.name, f"{self.name} takes one of {', '.join(self.choices)}, not {value!r}")
            case "string":
                if value is None:
                    return ""
                if not isinstance(value, str):
                    raise OptionValueError(self.name, f"{self.name} takes a string, not {value!r}")
                return "" if value == "<empty>" else value
        raise AssertionError(self.type)


#: Every option the engine has, in the order front ends list them.
OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("Hash", "spin", 16, 1, 4096, doc="transposition table size in MB; 64 to 256 is plenty for games"),
    OptionSpec("Threads", "spin", 1, 1, 64, doc="search processes (Lazy SMP): the search and Threads - 1 helpers on a shared hash table"),
    OptionSpec("MultiPV", "spin", 1, 1, 256, doc="how many best lines to search and report (analysis); games use 1"),
    OptionSpec("Ponder", "check", False, doc="the GUI lets the engine think on the opponent's time"),
    OptionSpec("Move Overhead", "spin", 30, 0, 5000,
               doc="ms kept in hand on every move for the lag between engine and clock"),
    OptionSpec("UCI_Chess960", "check", False, protocols=frozenset({"uci"}),
               doc="Chess960: castling is written king takes rook"),
    OptionSpec("UCI_ShowWDL", "check", False, protocols=frozenset({"uci"}),
               doc="win/draw/loss chances (per mille) on every `info` line"),
    OptionSpec("Clear Hash", "button", doc="empties the transposition table"),
    OptionSpec("OwnBook", "check", False, doc="play from the opening book in BookFile (games, not analysis)"),
    OptionSpec("BookFile", "string", "", doc="a Polyglot opening book (`.bin`), as an absolute path"),
    OptionSpec("BookBestMove", "check", False, doc="always the book's heaviest move, not a weighted random one"),
    #: XBoard sets it with `egtpath syzygy DIR`, not an option.
    OptionSpec("SyzygyPath", "string", "", protocols=frozenset({"uci", "cnp"}),
               doc="Syzygy tablebase folders, separated by `:` (`;` on Windows)"),
    OptionSpec("EvalFile", "string", DEFAULT_EVAL_FILE, doc="the learned evaluation's net file: empty for the built-in net, `none` for the hand-written evaluation alone"),
    OptionSpec("UCI_LimitStrength", "check", False, doc="play at the level UCI_Elo instead of full strength"),
    OptionSpec("UCI_Elo", "spin", DEFAULT_ELO, MIN_ELO, MAX_ELO,
               doc="the level, on the scale of Stockfish's UCI_Elo (see levels.md)"),
    #: python-chess sends it (`send_opponent_information`, lichess-bot) only to engines that
    #: declare it; XBoard's `name`, `rating` and `computer` set it too.
    OptionSpec("UCI_Opponent", "string", "", protocols=frozenset({"uci"}),
               doc="who the engine plays: `title rating computer|human name`, as lichess-bot sends it"),
    OptionSpec("Level Follows Opponent", "check", False,
               doc=f"with UCI_LimitStrength: play at the opponent's rating (UCI_Opponent or XBoard's `rating`), "
                   f"kept within {MIN_ELO}..{MAX_ELO}, instead of UCI_Elo"),
    OptionSpec("maxTimeMs", "spin", 600_000, 1, 2_147_483_647, protocols=frozenset({"cnp"}),
               doc="every search answers within this many ms (`--max-time-ms` sets it at start)"),
)

_BY_NAME = {spec.name.lower(): spec for spec in OPTIONS}


def find(name: str) -> OptionSpec:
    """The option called `name` (case-insensitive, spaces collapsed), or OptionValueError."""
    spec = _BY_NAME.get(" ".join(name.split()).lower())
    if spec is None:
        raise OptionValueError(name, f"no such option: {name}")
    return spec


def defaults() -> dict[str, Any]:
    return {spec.name: spec.default for spec in OPTIONS if spec.type != "button"}
