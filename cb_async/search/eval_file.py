"""What the `EvalFile` option names: the built-in net, none, or a net file; and what the tools'
`--net` and `--eval-file` name, the same values and `default.net` for the built-in net.

The values live here, apart from the net's arithmetic (`network`), because the option table and
the search settings need them at start-up, before the first `uciok`, and `network` needs
python-chess, which the engine loads only in its worker while the GUI reads the options.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cb_async.search.network import Network

#: The `EvalFile` value that turns the learned correction off.
NONE = "none"
#: The `EvalFile` value the engine starts with ("" the built-in net, NONE the hand-written
#: evaluation alone): the option's default, the searcher's and the worker's. The built-in net,
#: since its SPRT against the hand-written evaluation at 10+0.1 accepted it (docs/strength.md,
#: "A learned evaluation").
DEFAULT_EVAL_FILE = ""


def resolve(eval_file: str) -> Network | None:
    """The net an `EvalFile` value names: "" the built-in one, "none" none, else a file."""
    from cb_async.search import network

    if not eval_file:
        return network.default()
    if eval_file.strip().lower() == NONE:
        return None
    return network.load(eval_file)


def check(eval_file: str) -> str | None:
    """What is wrong with the net `eval_file` names, or None when it can be used."""
    from cb_async.search.network import NetworkError

    try:
        resolve(eval_file)
    except NetworkError as error:
        return str(error)
    return None


def resolve_name(name: str) -> Network | None:
    """The net a tool's `--net` or `--eval-file` names: what `resolve` reads for the option, and
    also the built-in net's file name, `default.net`, easier to write on a command line than an
    empty word (a file of that name is written with its folder: `./default.net`)."""
    from cb_async.search import network

    if name == network.DEFAULT_NAME:
        return network.default()
    return resolve(name)


def display_name(name: str) -> str:
    """How a tool names, in what it prints, the net `name` stands for."""
    from cb_async.search import network

    if not name:
        return network.DEFAULT_NAME
    return NONE if name.strip().lower() == NONE else name
