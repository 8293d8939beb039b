"""Transcripts: scripted GUI sessions in small text files, played against the real binary.

One directive a line (blank lines and `#` comments are skipped):

| directive            | meaning                                                              |
|----------------------|----------------------------------------------------------------------|
| `args: A B ...`      | (first) command-line arguments for `cb-async`                        |
| `> TEXT`             | send TEXT and `\\n`                                                  |
| `>crlf TEXT`         | send TEXT and `\\r\\n`                                               |
| `>raw LITERAL`       | send the bytes of a Python bytes literal, exactly                    |
| `< REGEX`            | the next line fully matches REGEX within 5 s                         |
| `<MS REGEX`          | the same within MS milliseconds                                      |
| `~ REGEX`            | from here on, lines fully matching REGEX may come before an expected |
|                      | line (each one is still checked); `~` alone ends that                |
| `eof`                | close the engine's input                                             |
| `signal TERM`        | send a signal                                                        |
| `exit CODE`          | the engine exits with CODE within 5 s, having written nothing more   |
| `repeat N` ... `end` | play the lines between N times                                       |

Named groups in a REGEX (`(?P<best>\\S+)`) are remembered; `${best}` in later TEXT or REGEX
is replaced by what they matched. A transcript that does not end with `exit` gets end of input
and must then exit 0 with nothing more written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from conformance.engine_process import SIGNALS, EngineProcess, ProtocolError

DEFAULT_TIMEOUT_MS = 5000


@dataclass
class Step:
    kind: str
    text: str = ""
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    body: list[Step] = field(default_factory=list)
    count: int = 1
    line_no: int = 0


@dataclass
class Transcript:
    path: Path
    args: list[str]
    steps: list[Step]


def parse(path: Path) -> Transcript:
    args: list[str] = []
    stack: list[list[Step]] = [[]]
    counts: list[Step] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        head, _, rest = line.partition(" ")
        step: Step
        if head == "args:":
            args = rest.split()
            continue
        if head in (">", ">crlf", ">raw"):
            step = Step(head, rest)
        elif head == "<" or re.fullmatch(r"<\d+", head):
            step = Step("<", rest, int(head[1:]) if len(head) > 1 else DEFAULT_TIMEOUT_MS)
        elif head == "~":
            step = Step("~", rest)
        elif head in ("eof", "signal", "exit"):
            step = Step(head, rest.strip())
        elif head == "repeat":
            step = Step("repeat", count=int(rest))
            stack[-1].append(step)
            stack.append(step.body)
            counts.append(step)
            continue
        elif head == "end":
            stack.pop()
            counts.pop()
            continue
        else:
            raise ValueError(f"{path}:{number}: unknown directive {head!r}")
        step.line_no = number
        stack[-1].append(step)
    if len(stack) != 1:
        raise ValueError(f"{path}: `repeat` without `end`")
    return Transcript(path, args, stack[0])


class Player:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.variables: dict[str, str] = {}
        self.skip: str | None = None
        self.exited = False

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{(\w+)\}", lambda m: self.variables[m.group(1)], text)

    def play(self) -> None:
        with EngineProcess(*self.transcript.args) as engine:
            self.run_steps(engine, self.transcript.steps)
            if not self.exited:
                engine.close_input()
                self.finish(engine, 0)

    def run_steps(self, engine: EngineProcess, steps: list[Step]) -> None:
        for step in steps:
            try:
                self.run_step(engine, step)
            except ProtocolError as error:
                raise ProtocolError(f"{self.transcript.path.name}:{step.line_no}: {error}") from None

    def run_step(self, engine: EngineProcess, step: Step) -> None:
        match step.kind:
            case ">":
                engine.send(self.substitute(step.text))
            case ">crlf":
                engine.send(self.substitute(step.text), ending="\r\n")
            case ">raw":
                engine.send_raw(eval(step.text, {"__builtins__": {}}))  # a bytes literal
            case "<":
                line = engine.expect(self.substitute(step.text), step.timeout_ms / 1000, self.skip)
                match = re.fullmatch(self.substitute(step.text), line.text)
                assert match is not None
                self.variables.update({k: v for k, v in match.groupdict().items() if v is not None})
            case "~":
                self.skip = self.substitute(step.text) if step.text else None
            case "eof":
                engine.close_input()
            case "signal":
                engine.signal(SIGNALS[step.text])
            case "exit":
                self.finish(engine, int(step.text))
            case "repeat":
                for _ in range(step.count):
                    self.run_steps(engine, step.body)

    def finish(self, engine: EngineProcess, code: int) -> None:
        rest = engine.remaining_output()
        unexpected = [line for line in rest if self.skip is None or not re.fullmatch(self.skip, line)]
        if unexpected:
            raise engine.error(f"unexpected output before exit: {unexpected!r}")
        actual = engine.wait_exit()
        if actual != code:
            raise engine.error(f"exit status {actual}, expected {code}")
        self.exited = True


def play(path: Path) -> None:
    Player(parse(path)).play()
