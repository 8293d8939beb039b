"""`python3 dev.py docs [--check]`: rewrite the generated blocks of the Markdown docs.

What the engine itself can say is not copied into the docs by hand: the option tables come from
the option table (`cb_async.options`), and the handshakes and the sample session are what the
engine prints, asked through its real command line. A generated block sits between two marks:

    <!-- generated: options uci -->
    ...
    <!-- end generated -->

The first line names a generator and its arguments (`GENERATORS` below). Without `--check`
every block of README.md and docs/*.md is rewritten in place; with it nothing is written and
the status is 1 when a block differs from what the engine says now. The tests run the check,
so a doc that lies fails the build. Figures that change from run to run (`time`, `nps`,
`timeMs`) are compared as placeholders, and a CNP session whose answers depend on time (a
ponder search's depth) is compared in shape there (`same_cnp_conversation`). Without `--check`
it also takes the screenshot of the analysis report shown in docs/analysis.md (`report_screenshot`:
the Opera game analysed with `--report`, drawn by headless Chromium at a phone's width) when
Chromium is installed, and says it kept the old one otherwise. It works on a
clone (the docs are not installed with the package); `python -m devtools.docs` from the clone's
root is the same.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cb_async import options as option_table
from cb_async.tools.gui_habits.driver import EngineDriver
from devtools import command_line

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"<!-- generated: (?P<spec>[^>]*?) -->\n(?P<body>.*?)<!-- end generated -->", re.S)
#: Figures that differ between two runs of the same search.
VOLATILE = re.compile(r"\b(nps|time) \d+|\"(nps|timeMs)\": ?\d+")


def documents(root: Path = ROOT) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


# -- asking the engine ----------------------------------------------------------------------------


class EngineSilent(RuntimeError):
    """The engine did not write the awaited line in time."""


#: One step of a conversation: a line to send, and the patterns that must each match a line the
#: engine writes before the next step (none: nothing is due).
Step = tuple[str, tuple[str, ...]]


def converse(args: list[str], script: list[Step], timeout: float = 30.0) -> list[tuple[str, list[str]]]:
    """Start the engine with `args`, send each line of `script` and read what it writes until each
    of that step's patterns has matched a line; then end its input, which ends it in every
    protocol. Returns (sent, written lines) per step."""
    steps = []
    with EngineDriver([sys.executable, "-m", "cb_async", *args]) as engine:
        for sent, patterns in script:
            engine.send(sent)
            written: list[str] = []
            waiting = list(patterns)
            deadline = time.monotonic() + timeout
            while waiting:
                line = engine.read(deadline - time.monotonic())
                if line is None:
                    if engine.ended:
                        raise EngineSilent(f"the engine ended before /{waiting[0]}/ after {sent!r}")
                    raise EngineSilent(f"no /{waiting[0]}/ within {timeout} s after {sent!r}")
                written.append(line.text)
                waiting = [pattern for pattern in waiting if not re.search(pattern, line.text)]
            steps.append((sent, written))
        engine.close_input()
        engine.wait_exit(timeout)
    return steps


def fenced(lines: list[str], language: str = "") -> str:
    return f"```{language}\n" + "\n".join(lines) + "\n```\n"


# -- the generators --------------------------------------------------------------------------------

#: Options that python-chess's API sets per call, never through `configure`.
EMBEDDED_PER_CALL = {"MultiPV": "`multipv=` of `analyse`/`analysis`", "Ponder": "`ponder=` of `play`",
                     "UCI_Chess960": "the board's own `chess960`"}


def _values(spec: option_table.OptionSpec) -> str:
    match spec.type:
        case "spin":
            return f"{spec.min}..{spec.max}"
        case "check":
            return "true, false"
        case "combo":
            return ", ".join(spec.choices)
        case "string":
            return "text"
    return "(a button)"


def _default(spec: option_table.OptionSpec) -> str:
    if spec.type == "button":
        return ""
    if spec.type == "check":
        return "true" if spec.default else "false"
    if spec.type == "string":
        return "(empty)" if spec.default == "" else f"`{spec.default}`"
    return str(spec.default)


def options_table(args: list[str]) -> str:
    """`options uci|cnp|embedded`: every option that front end has, from the option table (for
    the embedded engine: those in a `cb_async.Engine`'s own `options`)."""
    (front,) = args
    if front == "embedded":
        from cb_async.embedded import Engine

        shown = set(Engine().options)
    else:
        shown = {spec.name for spec in option_table.OPTIONS if front in spec.protocols}
    if not shown:
        raise ValueError(f"no options for {front!r}: options uci, options cnp or options embedded")
    rows = ["| option | type | default | values | what it does |", "|---|---|---|---|---|"]
    for spec in option_table.OPTIONS:
        if spec.name not in shown:
            continue
        doc = spec.doc
        if front == "embedded" and spec.name in EMBEDDED_PER_CALL:
            doc += f"; set per call: {EMBEDDED_PER_CALL[spec.name]}"
        rows.append(f"| `{spec.name}` | {spec.type} | {_default(spec)} | {_values(spec)} | {doc} |")
    return "\n".join(rows) + "\n"


def uci_handshake(args: list[str]) -> str:
    """`uci-handshake`: the engine's whole answer to `uci`."""
    ((_, answer),) = converse(["--protocol", "uci"], [("uci", ("^uciok$",))])
    return fenced(answer)


def xboard_handshake(args: list[str]) -> str:
    """`xboard-handshake`: the engine's whole answer to `xboard` and `protover 2`."""
    steps = converse(["--protocol", "xboard"], [("xboard", ()), ("protover 2", ("^feature done=1$",))])
    return fenced(steps[1][1])


def cnp_request(request_id: int, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message, separators=(",", ":"))


def answered(*ids: int) -> tuple[str, ...]:
    """Patterns for the responses to requests `ids`."""
    return tuple(rf'^\{{"jsonrpc":"2.0","id":{request_id},"(result|error)"' for request_id in ids)


def cnp_transcript(script: list[Step]) -> str:
    """A CNP conversation as the docs show it: `>` before what was sent, `<` before what came."""
    lines: list[str] = []
    for sent, answer in converse(["--protocol", "cnp"], script):
        lines.append(f"> {sent}")
        lines.extend(f"< {line}" for line in answer)
    return fenced(lines)


HELLO = cnp_request(1, "engine/hello", {"protocol": "cnp/1", "client": {"name": "example", "version": "1.0"}})


def cnp_hello(args: list[str]) -> str:
    """`cnp-hello`: an `engine/hello` request and the engine's answer."""
    return cnp_transcript([(HELLO, answered(1))])


def cnp_search(args: list[str]) -> str:
    """`cnp-search DEPTH`: an `engine/search` request to DEPTH after 1. e4 and its answer."""
    (depth,) = args
    request = cnp_request(1, "engine/search", {"position": {"moves": ["e2e4"]}, "limits": {"depth": int(depth)},
                                               "info": False})
    return cnp_transcript([(request, answered(1))])


#: docs/cnp.md's complete session: hello, options, a search to a depth, a ponder hit (with a
#: busy refusal meanwhile), a ponder miss, a bad request, shutdown.
CNP_SESSION: list[Step] = [
    (HELLO, answered(1)),
    (cnp_request(2, "engine/setOptions", {"options": {"hash": 64, "MultiPV": 1}}), answered(2)),
    (cnp_request(3, "engine/newGame"), answered(3)),
    (cnp_request(4, "engine/search", {"position": {"moves": ["e2e4", "e7e5"]}, "limits": {"depth": 3}}),
     answered(4)),
    (cnp_request(5, "engine/search", {
        "position": {"moves": ["e2e4", "e7e5", "g1f3", "b8c6"]}, "ponder": True,
        "limits": {"clock": {"whiteMs": 10000, "blackMs": 10000, "whiteIncMs": 100, "blackIncMs": 100}},
        "info": False}), ()),
    (cnp_request(6, "engine/search", {"limits": {"depth": 1}}), answered(6)),
    (cnp_request(7, "engine/ponderHit", {"id": 5}), answered(7, 5)),
    (cnp_request(8, "engine/search", {"position": {"moves": ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"]},
                                      "ponder": True, "info": False}), ()),
    (cnp_request(9, "engine/cancel", {"id": 8}), answered(9, 8)),
    (cnp_request(10, "engine/search", {"limits": {"depth": 0}}), answered(10)),
    (cnp_request(11, "engine/shutdown"), answered(11)),
]


def cnp_session(args: list[str]) -> str:
    """`cnp-session`: the complete session of `CNP_SESSION`."""
    return cnp_transcript(CNP_SESSION)


def _steps(transcript: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    steps: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for line in transcript.strip().strip("`").strip().splitlines():
        if line.startswith("> "):
            steps.append((json.loads(line[2:]), []))
        elif line.startswith("< "):
            steps[-1][1].append(json.loads(line[2:]))
    return steps


def _shape(value: Any) -> Any:
    """The JSON structure of `value`, its leaves replaced by their types."""
    if isinstance(value, dict):
        return {key: _shape(member) for key, member in value.items()}
    if isinstance(value, list):
        return [_shape(member) for member in value[:1]]
    return type(value).__name__


def _settled(request: dict[str, Any]) -> bool:
    """Whether the answer to `request` cannot vary from run to run (its clock figures aside):
    anything but a search, or a search to a depth and nothing else."""
    if request.get("method") != "engine/search":
        return True
    params = request.get("params", {})
    return set(params.get("limits", {})) == {"depth"} and not params.get("ponder")


def same_cnp_conversation(documented: str, fresh: str) -> bool:
    """Two runs of a CNP conversation agree: the same requests, and after each the same lines
    (the responses of one step in any order, as a stop's `{}` and its search's may come): equal
    but for clock figures where the answer is settled, equal in shape (and `source`, `stopped`)
    where time decides, as in a ponder search."""
    ours, theirs = _steps(documented), _steps(fresh)
    if [sent for sent, _ in ours] != [sent for sent, _ in theirs]:
        return False
    requests = {sent.get("id"): sent for sent, _ in ours}
    for (_, want), (_, have) in zip(ours, theirs):
        if len(want) != len(have):
            return False
        if not any("method" in message for message in want):
            want, have = (sorted(lines, key=lambda message: str(message.get("id"))) for lines in (want, have))
        for expected, got in zip(want, have):
            if "method" in expected:
                request = requests.get(expected.get("params", {}).get("id"), {})
            else:
                request = requests.get(expected.get("id"), {})
            if _settled(request):
                if comparable(json.dumps(expected, separators=(",", ":"))) != \
                        comparable(json.dumps(got, separators=(",", ":"))):
                    return False
            elif _shape(expected) != _shape(got) or any(
                    expected.get("result", {}).get(member) != got.get("result", {}).get(member)
                    for member in ("source", "stopped")):
                return False
    return True


def uci_session(args: list[str]) -> str:
    """`uci-session DEPTH`: a UCI session by hand: `uci`, a position, a search to DEPTH."""
    (depth,) = args
    script: list[Step] = [("uci", ("^uciok$",)), ("isready", ("^readyok$",)), ("position startpos moves e2e4", ()),
                          (f"go depth {int(depth)}", ("^bestmove ",))]
    lines: list[str] = []
    for sent, answer in converse(["--protocol", "uci"], script):
        lines.append(sent)
        lines.extend(answer)
    return fenced(lines)


def levels_table(args: list[str]) -> str:
    """`levels`: every labelled level and the settings behind it, from `cb_async.search.levels`."""
    from cb_async.search.levels import CALIBRATION, level_for

    rows = ["| UCI_Elo | raw strength | nodes | depth cap | sigma (cp) | candidates |", "|---|---|---|---|---|---|"]
    for label, _ in CALIBRATION:
        level = level_for(label)
        rows.append(f"| {label} | {level.strength:.3f} | {level.nodes:,} | {level.depth} | {level.sigma} "
                    f"| {level.candidates} |")
    return "\n".join(rows) + "\n"


#: The search speed the level budgets are read against (nodes a second on the 2-core machine).
BUDGET_SPEED = 60_000


def level_budgets(args: list[str]) -> str:
    """`level-budgets LABEL...`: the node budget of each level and the time it needs."""
    from cb_async.search.levels import level_for

    rows = [f"| label | nodes per move | time per move it needs (at {BUDGET_SPEED // 1000}k nodes/s) |",
            "|---|---|---|"]
    for label in map(int, args):
        nodes = level_for(label).nodes
        seconds = nodes / BUDGET_SPEED
        needs = "under 0.05 s" if seconds < 0.05 else f"about {seconds:.1g} s"
        rows.append(f"| {label} | {nodes:,} | {needs} |")
    return "\n".join(rows) + "\n"


def comparable(text: str) -> str:
    """`text` with the figures that change from run to run replaced by placeholders."""
    return VOLATILE.sub(lambda match: re.sub(r"\d+", "N", match.group()), text)


def same_text(documented: str, fresh: str) -> bool:
    return comparable(documented) == comparable(fresh)


@dataclass(frozen=True)
class Generator:
    make: Callable[[list[str]], str]
    #: Whether a block in the docs still says what a fresh run says.
    same: Callable[[str, str], bool] = same_text


def conformance_checks(args: list[str]) -> str:
    """The conformance suite's checks, by group, from its own registry."""
    from cb_async.tools.gui_habits.registry import load
    from cb_async.tools.gui_habits.report import markdown

    return markdown(load())


GENERATORS: dict[str, Generator] = {
    "levels": Generator(levels_table),
    "level-budgets": Generator(level_budgets),
    "options": Generator(options_table),
    "uci-handshake": Generator(uci_handshake),
    "xboard-handshake": Generator(xboard_handshake),
    "cnp-hello": Generator(cnp_hello),
    "cnp-search": Generator(cnp_search),
    "cnp-session": Generator(cnp_session, same_cnp_conversation),
    "uci-session": Generator(uci_session),
    "conformance-checks": Generator(conformance_checks),
}


# -- the blocks -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    path: Path
    spec: str
    body: str

    @property
    def name(self) -> str:
        return f"{self.path.name}: {self.spec}"


def blocks(paths: list[Path] | None = None) -> list[Block]:
    """Every generated block of the docs, in order."""
    found = []
    for path in paths if paths is not None else documents():
        for match in BLOCK.finditer(path.read_text(encoding="utf-8")):
            found.append(Block(path, match["spec"].strip(), match["body"]))
    return found


class Generated:
    """Generates each (generator, arguments) once, however many docs show it."""

    def __init__(self) -> None:
        self._made: dict[str, str] = {}

    def generator(self, spec: str) -> Generator:
        name = spec.split()[0]
        if name not in GENERATORS:
            raise ValueError(f"no generator {name!r} (there are: {', '.join(GENERATORS)})")
        return GENERATORS[name]

    def __call__(self, spec: str) -> str:
        if spec not in self._made:
            self._made[spec] = self.generator(spec).make(spec.split()[1:])
        return self._made[spec]

    def agrees(self, block: Block) -> bool:
        """Whether `block` says what the engine says now."""
        return self.generator(block.spec).same(block.body, self(block.spec))


def rewrite(path: Path, generated: Generated) -> bool:
    """Rewrite the blocks of `path` that no longer agree with the engine; True when the file
    changed. (A block that agrees is kept as it is, so that a rewrite changes no figure that
    merely differs from run to run.)"""
    text = path.read_text(encoding="utf-8")

    def fresh(match: re.Match[str]) -> str:
        block = Block(path, match["spec"].strip(), match["body"])
        body = block.body if generated.agrees(block) else generated(block.spec)
        return f"<!-- generated: {match['spec']} -->\n{body}<!-- end generated -->"

    new = BLOCK.sub(fresh, text)
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="write nothing; status 1 if a block is stale")


#: The report's screenshot in docs/analysis.md, and the game it shows (the first of the test data).
REPORT_PNG = ROOT / "docs" / "report.png"
REPORT_GAMES = ROOT / "tests" / "data" / "analysis-games.pgn"


def report_screenshot(png: Path = REPORT_PNG) -> str:
    """Analyse the Opera game with Stockfish at 20,000 nodes (cb-async when Stockfish is not
    installed), write the report, and save what Chromium draws of its top at a phone's width
    (412 CSS pixels), reduced to 64 colours. Returns what was done, for the user."""
    import shutil
    import tempfile

    import chess.pgn

    from devtools.browser import chromium, screenshot

    if chromium() is None:
        return f"kept {png.relative_to(ROOT)} (chromium is not installed: apt-get install chromium)"
    engine = "stockfish" if shutil.which("stockfish") or Path("/usr/games/stockfish").exists() else "cb-async"
    with tempfile.TemporaryDirectory(prefix="cb-async-docs-") as folder:
        games = Path(folder) / "opera.pgn"
        with REPORT_GAMES.open(encoding="utf-8") as handle:
            game = chess.pgn.read_game(handle)
        games.write_text(str(game) + "\n", encoding="utf-8")
        page = Path(folder) / "report.html"
        subprocess.run([sys.executable, "-m", "cb_async", "analyse", str(games), "--engine", engine,
                        "--nodes", "20000", "--workers", "1", "--out", str(Path(folder) / "out.pgn"),
                        "--report", str(page)], check=True, capture_output=True, text=True, timeout=600)
        raw = Path(folder) / "raw.png"
        rendered = screenshot(page, raw, width=412, height=1500)
        if rendered.requests:
            raise RuntimeError(f"the report asked the network for {rendered.requests}")
        try:
            from PIL import Image
        except ImportError:
            shutil.copyfile(raw, png)
        else:
            with Image.open(raw) as image:
                image.convert("RGB").quantize(64).save(png, optimize=True)
    return f"rewrote {png.relative_to(ROOT)} ({png.stat().st_size // 1024} KB, the report of the Opera game by {engine})"


def run(args: argparse.Namespace) -> int:
    generated = Generated()
    stale = []
    for path in documents():
        if args.check:
            stale += [block.name for block in blocks([path]) if not generated.agrees(block)]
        elif rewrite(path, generated):
            print(f"rewrote {path.relative_to(ROOT)}")
    if not args.check:
        print(report_screenshot())
    for name in stale:
        print(f"stale: {name}")
    return 1 if stale else 0


def main(argv: list[str] | None = None) -> int:
    return command_line("python3 dev.py docs", __doc__, add_arguments, run, argv)


if __name__ == "__main__":
    sys.exit(main())
