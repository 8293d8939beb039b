"""Property tests of the three adapters: no input can make one raise, and all it writes is protocol.

Each example drives an adapter through the real `Session` (with a scripted runner standing in
for the worker) exactly as the daemon does: raw bytes go through `LineFramer` (so invalid UTF-8
and lines over 1 MiB arrive as they would), the lines through `receive`, the events through
`on_event`, and the input ends with `end_of_input`. Between lines the running search may report
an iteration or end by itself, so the adapters also meet plausible events in any order.

Every line written is checked against the protocol's output forms, and the counts that a GUI
relies on are checked at the end: a `bestmove` per `go`, a `readyok` per `isready`, a `pong`
per `ping`, a response per CNP request.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import chess
from hypothesis import HealthCheck, given, settings, strategies as st
from pydantic import BaseModel, ValidationError

from cb_async.adapters import cnp_models
from cb_async.adapters.cnp import CnpAdapter
from cb_async.adapters.uci import UciAdapter
from cb_async.adapters.xboard import XBoardAdapter
from cb_async.commands import Go, IsReady, Quit
from cb_async.events import Ready
from cb_async.framing import MAX_LINE_BYTES, LineFramer
from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.session import EndOfInput, InputLine, Session
from fake_runner import FakeRunner

#: CI runs a few hundred examples; `CB_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz_adapters.py` digs deeper.
FUZZ = settings(max_examples=int(os.environ.get("CB_FUZZ_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# -- a scripted runner: searches end on stop, or when the fuzzer says so ------------------------


def scripted_result(board: chess.Board, flavour: int) -> SearchResult:
    """A legal answer for `board`: the first legal move, a legal reply as ponder move, a score."""
    moves = list(board.legal_moves)
    score = Score(mate=flavour % 7 - 3) if flavour % 5 == 0 else Score(cp=flavour % 2001 - 1000)
    if not moves:
        return SearchResult(None, None, Score(mate=0) if board.is_check() else Score(cp=0), 0, 0, 0, 0)
    best = moves[flavour % len(moves)]
    after = board.copy(stack=False)
    after.push(best)
    replies = list(after.legal_moves)
    ponder = replies[flavour % len(replies)] if replies and flavour % 3 else None
    pv = (best, ponder) if ponder else (best,)
    depth = flavour % 20 + 1
    line = SearchInfo(depth, depth + 2, 1, score, 1000 + flavour, 50_000, flavour % 900, pv)
    return SearchResult(best, ponder, score, depth, depth + 2, 1000 + flavour, flavour % 900, pv,
                        lines=(line,) if flavour % 4 else ())


def scripted_info(board: chess.Board, flavour: int) -> SearchInfo | None:
    """A plausible iteration report for `board` (None on a finished board)."""
    result = scripted_result(board, flavour)
    if result.best_move is None:
        return None
    bound = (None, "upper", "lower")[flavour % 3]
    return SearchInfo(flavour % 30 + 1, flavour % 40, flavour % 3 + 1, result.score, flavour, flavour * 7,
                      flavour % 1000, result.pv, bound=bound)


# -- the drive ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bytes:
    """Raw input: the framer splits it into lines (a newline is added)."""

    data: bytes


@dataclass(frozen=True)
class SearchEvent:
    """The running search, if any, reports an iteration (`finish=False`) or ends by itself."""

    finish: bool
    flavour: int


@dataclass
class Transcript:
    written: list[str] = field(default_factory=list)
    lines_in: list[str] = field(default_factory=list)
    gos: int = 0
    isreadys: int = 0
    expected_responses: int = 0
    #: A `quit` (or CNP shutdown) came from the input: searches then end without an answer.
    quit_by_input: bool = False


async def drive(adapter: Any, steps: list[Any], closing: Callable[[Any], list[bytes]] | None = None,
                count_request: Callable[[Any, str], int] | None = None) -> Transcript:
    """Run `steps` through framer, adapter and session; then `closing` lines and end of input."""
    transcript = Transcript()
    runner = FakeRunner(stop_result=lambda board: scripted_result(board, 1))
    marker = object()
    idle = anyio.Event()

    def translate(item: InputLine) -> list[Any]:
        line = item.text
        if isinstance(line, str):
            transcript.lines_in.append(line)
        if count_request is not None:
            transcript.expected_responses += count_request(adapter, line)
        commands = adapter.receive(line, 0.0)
        assert isinstance(commands, list)
        if any(isinstance(c, Quit) for c in commands):
            transcript.quit_by_input = True
        transcript.gos += sum(isinstance(c, Go) for c in commands)
        transcript.isreadys += sum(isinstance(c, IsReady) for c in commands)
        return commands

    def sink(event: Any) -> list[Any]:
        nonlocal idle
        if isinstance(event, Ready) and event.tag is marker:
            idle.set()
            return []
        lines, followups = adapter.on_event(event)
        assert all(isinstance(line, str) and "\n" not in line for line in lines), lines
        transcript.written.extend(lines)
        transcript.gos += sum(isinstance(c, Go) for c in followups)
        return followups

    session = Session(runner, sink, translate)
    framer = LineFramer()

    async def settle() -> None:
        nonlocal idle
        idle = anyio.Event()
        session.submit(IsReady(tag=marker))
        with anyio.fail_after(5):
            while not (idle.is_set() or session.finished):
                await anyio.sleep(0)

    async def feed(data: bytes) -> None:
        for line in framer.feed(data):
            if not session.finished:
                session.submit(InputLine(line, 0.0))
        if not session.finished:
            await settle()

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.run)
        for step in steps:
            if session.finished:
                break
            if isinstance(step, Bytes):
                await feed(step.data + b"\n")
            elif runner.active is not None:
                if step.finish:
                    runner.active.finish(scripted_result(runner.active.board, step.flavour))
                else:
                    info = scripted_info(runner.active.board, step.flavour)
                    if info is not None:
                        runner.active.post(info)
                await settle()
        if closing is not None and not session.finished:
            for data in closing(adapter):
                await feed(data + b"\n")
        if not session.finished:
            for line in framer.close():
                session.submit(InputLine(line, 0.0))
            session.submit(EndOfInput())
        with anyio.fail_after(5):
            while not session.finished:
                await anyio.sleep(0)
    return transcript


def run(adapter: Any, steps: list[Any], **kwargs: Any) -> Transcript:
    return anyio.run(lambda: drive(adapter, steps, **kwargs))


# -- input strategies ---------------------------------------------------------------------------

SQUARES = [chess.square_name(s) for s in chess.SQUARES]
move_text = st.builds(lambda a, b, p: a + b + p, st.sampled_from(SQUARES), st.sampled_from(SQUARES),
                      st.sampled_from(["", "", "", "q", "n", "x"]))
number_text = st.one_of(st.integers(-10**12, 10**12).map(str), st.sampled_from(["0", "-1", "1e9", "nan", "inf", "2:30", "0.5", ""]))
FENS = ["rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1", "8/8/8/8/8/8/8/K6k w - - 0 1",
        "7k/5QQ1/8/8/8/8/8/K7 b - - 0 1", "6k1/5Q2/6K1/8/8/8/8/8 b - - 0 1", "bad fen", "8/8/8/8 w",
        "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w GBgb - 0 1"]
random_text = st.text(max_size=40)


def huge(prefix: bytes) -> st.SearchStrategy[Bytes]:
    """Lines around the 1 MiB cap: a valid command padded with spaces to just under, at, or over."""
    sizes = st.sampled_from([MAX_LINE_BYTES - 1, MAX_LINE_BYTES, MAX_LINE_BYTES + 1, 2 * MAX_LINE_BYTES + 3])
    return sizes.map(lambda n: Bytes((prefix + b" " * n)[:n]))


def lines_of(words: st.SearchStrategy[str], commands: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    """Well-formed commands (most of the time), word salad, random text and bytes."""
    sentence = st.lists(words, min_size=1, max_size=8).map(" ".join)
    command = commands.map(lambda s: Bytes(s.encode()))
    return st.one_of(
        command, command, command, command,
        sentence.map(lambda s: Bytes(s.encode())),
        sentence.map(lambda s: Bytes(s.encode() + b"\r")),
        random_text.map(lambda s: Bytes(s.encode("utf-8", "surrogatepass"))),
        st.binary(max_size=30).map(Bytes),
        st.builds(lambda s, junk: Bytes(s.encode() + junk), sentence, st.binary(min_size=1, max_size=4)),
        st.just(Bytes(b"")),
    )


search_events = st.builds(SearchEvent, st.booleans(), st.integers(0, 10_000))


def steps_of(lines: st.SearchStrategy[Any], prefix: bytes) -> st.SearchStrategy[list[Any]]:
    step = st.one_of(lines, lines, search_events)
    return st.one_of(
        st.lists(step, max_size=25),
        st.lists(st.one_of(step, huge(prefix)), max_size=6),  # a few huge lines amid the rest
    )


# -- UCI ----------------------------------------------------------------------------------------

UCI_WORDS = st.one_of(
    st.sampled_from(["uci", "isready", "ucinewgame", "position", "startpos", "fen", "moves", "go", "stop",
                     "ponderhit", "setoption", "name", "value", "Hash", "MultiPV", "UCI_Chess960", "UCI_ShowWDL",
                     "Clear Hash", "true", "false", "debug", "on", "off", "register", "ponder", "infinite",
                     "wtime", "btime", "winc", "binc", "movestogo", "depth", "nodes", "mate", "movetime",
                     "searchmoves", "xboard", "e2e4", "e7e5", "g1f3", "0000"]),
    move_text, number_text, st.sampled_from(FENS), random_text.filter(lambda s: "quit" not in s),
)
COMMON_MOVES = st.sampled_from(["e2e4", "e7e5", "g1f3", "b8c6", "d2d4", "d7d5", "e1g1", "O-O", "a7a8q", "e4d5"])
UCI_GO = st.lists(st.sampled_from(["ponder", "infinite", "depth 3", "nodes 500", "movetime 5", "wtime 1000",
                                   "btime -5", "winc 10", "movestogo 0", "mate 2", "searchmoves e2e4 d2d4", "wtime"]),
                  max_size=3).map(lambda words: " ".join(["go", *words]))
UCI_COMMANDS = st.one_of(
    UCI_GO, UCI_GO, st.sampled_from(["isready", "stop", "ponderhit", "ucinewgame", "uci", "debug on", "position startpos",
                                     "setoption name Hash value 1", "setoption name MultiPV value 3",
                                     "setoption name UCI_ShowWDL value true", "setoption name Clear Hash",
                                     "setoption name UCI_Chess960 value true", "setoption name Nope value 1"]),
    st.builds(lambda fen, moves: f"position fen {fen} moves {' '.join(moves)}", st.sampled_from(FENS), st.lists(COMMON_MOVES, max_size=3)),
    st.lists(COMMON_MOVES, max_size=4).map(lambda moves: "position startpos moves " + " ".join(moves)),
)
UCI_OUTPUT = re.compile(
    r"id name .+|id author .+|uciok|readyok|option name .+ type (check|spin|combo|button|string)( .*)?"
    r"|info string .*|info depth -?\d+ .*|bestmove ([a-h][1-8][a-h][1-8][qrbn]?)( ponder [a-h][1-8][a-h][1-8][qrbn]?)?"
    r"|bestmove \(none\)"
)


def uci_closing(adapter: Any) -> list[bytes]:
    return [b"stop"]


@FUZZ
@given(steps_of(lines_of(UCI_WORDS, UCI_COMMANDS), b"isready"))
def test_uci_adapter_survives_any_input_and_writes_only_uci(steps: list[Any]) -> None:
    transcript = run(UciAdapter(), steps, closing=uci_closing)
    for line in transcript.written:
        assert UCI_OUTPUT.fullmatch(line), line
    bestmoves = sum(line.startswith("bestmove") for line in transcript.written)
    if not transcript.quit_by_input:
        assert bestmoves == transcript.gos
        assert transcript.written.count("readyok") == transcript.isreadys
    assert bestmoves <= transcript.gos


# -- XBoard -------------------------------------------------------------------------------------

XBOARD_WORDS = st.one_of(
    st.sampled_from(["protover", "2", "new", "force", "go", "playother", "level", "40", "5", "0", "st", "sd",
                     "nps", "time", "otim", "usermove", "?", "ping", "result", "setboard", "hint", "bk", "undo",
                     "remove", "hard", "easy", "post", "nopost", "analyze", "exit", ".", "memory", "cores",
                     "option", "MultiPV=3", "Hash=1", "exclude", "include", "all", "variant", "fischerandom",
                     "normal", "accepted", "rejected", "random", "computer", "xboard", "O-O", "0-0-0", "e2e4",
                     "e7e5", "1-0", "{resign}"]),
    move_text, number_text, st.sampled_from(FENS), random_text.filter(lambda s: "quit" not in s),
)
XBOARD_COMMANDS = st.one_of(
    COMMON_MOVES, COMMON_MOVES.map(lambda move: f"usermove {move}"),
    st.sampled_from(["new", "go", "go", "force", "playother", "hard", "easy", "post", "nopost", "analyze", "exit", "?",
                     "undo", "remove", "hint", "bk", "level 40 5 0", "level 0 0:30 1.5", "st 1", "sd 3", "nps 1000",
                     "time 100", "otim 90", "option MultiPV=2", "memory 1", "cores 1", "exclude e2e4", "include all",
                     "variant fischerandom", "result 1-0 {White wins}", "protover 2"]),
    st.integers(0, 99).map(lambda n: f"ping {n}"),
    st.sampled_from(FENS).map(lambda fen: f"setboard {fen}"),
)
XB_MOVE = r"(?:[a-h][1-8][a-h][1-8][qrbn]?|O-O|O-O-O)"
XBOARD_OUTPUT = re.compile(
    r"feature .+|pong( \S+)?|move " + XB_MOVE + r"|Error \([a-z ]+\): .*|Illegal move( \([^)]*\))?: .*|tellusererror .*"
    r"|telluser .*|# .*|Hint: " + XB_MOVE + r"|(1-0|0-1|1/2-1/2) \{[^}]+\}|\d+ -?\d+ \d+ \d+( .*)?|\t.*|"
)


def xboard_closing(adapter: Any) -> list[bytes]:
    return [b"force", b"ping 424242"]  # a force ends any search; its held pongs come out


@FUZZ
@given(steps_of(lines_of(XBOARD_WORDS, XBOARD_COMMANDS), b"ping 7"))
def test_xboard_adapter_survives_any_input_and_writes_only_cecp(steps: list[Any]) -> None:
    transcript = run(XBoardAdapter(), steps, closing=xboard_closing)
    for line in transcript.written:
        assert XBOARD_OUTPUT.fullmatch(line), repr(line)
    pings = sum(line.split()[:1] == ["ping"] for line in transcript.lines_in)
    pongs = sum(line.startswith("pong") for line in transcript.written)
    if not transcript.quit_by_input:
        assert pongs == pings
        assert transcript.written[-1] == "pong 424242"


# -- CNP ----------------------------------------------------------------------------------------

METHODS = list(cnp_models.METHODS) + ["engine/nope", "rpc.discover"]
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=False), st.text(max_size=10))
json_value = st.recursive(json_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                               st.dictionaries(st.text(max_size=6), inner, max_size=3)),
                          max_leaves=8)
request_id = st.one_of(st.integers(0, 5), st.sampled_from(["a", "b", "s"]), st.none(), st.booleans(), st.floats(0, 3))
search_params = st.fixed_dictionaries({}, optional={
    "position": st.fixed_dictionaries({}, optional={"fen": st.sampled_from(FENS), "moves": st.lists(move_text, max_size=3)}),
    "limits": st.fixed_dictionaries({}, optional={
        "timeMs": st.integers(-5, 50), "depth": st.integers(0, 5), "nodes": st.integers(0, 1000),
        "infinite": st.booleans(), "mate": st.integers(0, 3),
        "clock": st.fixed_dictionaries({}, optional={"whiteMs": st.integers(-1, 1000), "blackMs": st.integers(0, 1000),
                                                     "movesToGo": st.integers(0, 3)})}),
    "ponder": st.booleans(), "info": st.booleans(), "multiPv": st.integers(0, 300),
    "searchMoves": st.lists(move_text, max_size=3), "chess960": json_value,
})
params = st.one_of(
    search_params, st.fixed_dictionaries({"id": request_id}), json_value,
    st.fixed_dictionaries({"options": st.dictionaries(st.sampled_from(["Hash", "MultiPV", "maxTimeMs", "Ponder", "nope"]),
                                                      json_value, max_size=2)}),
    st.fixed_dictionaries({}, optional={"protocol": st.sampled_from(["cnp/1", "cnp/2", "x"])}),
)
request = st.fixed_dictionaries(
    {"method": st.sampled_from(METHODS)},
    optional={"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"]), "id": request_id, "params": params},
).filter(lambda r: r.get("method") != "engine/shutdown")


def cnp_line(message: dict[str, Any], cut: int) -> Bytes:
    text = json.dumps(message)
    if cut % 6 == 0:
        text = text[: cut % max(1, len(text))]  # broken JSON
    return Bytes(text.encode())


good_id = st.one_of(st.integers(0, 3), st.sampled_from(["a", "b"]))
plausible_search = st.fixed_dictionaries({
    "position": st.fixed_dictionaries({}, optional={"moves": st.lists(COMMON_MOVES, max_size=2)}),
    "limits": st.one_of(st.just({}), st.fixed_dictionaries({"depth": st.integers(1, 5)}),
                        st.fixed_dictionaries({"clock": st.fixed_dictionaries({"whiteMs": st.integers(0, 1000)})})),
}, optional={"ponder": st.booleans(), "info": st.booleans(), "multiPv": st.integers(1, 3)})
plausible_request = st.one_of(
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": good_id, "method": st.just("engine/search"), "params": plausible_search}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": good_id,
                           "method": st.sampled_from(["engine/stop", "engine/ponderHit", "engine/cancel"]),
                           "params": st.fixed_dictionaries({"id": good_id})}),
    st.fixed_dictionaries({"jsonrpc": st.just("2.0"), "id": good_id,
                           "method": st.sampled_from(["engine/hello", "engine/newGame", "engine/setOptions"]),
                           "params": st.just({"options": {"MultiPV": 2}})}),
)
CNP_LINES = st.one_of(
    plausible_request.map(lambda r: Bytes(json.dumps(r).encode())),
    plausible_request.map(lambda r: Bytes(json.dumps(r).encode())),
    plausible_request.map(lambda r: Bytes(json.dumps(r).encode())),
    st.builds(cnp_line, request, st.integers(0, 1000)),
    json_value.map(lambda v: Bytes(json.dumps(v).encode())),
    random_text.map(lambda s: Bytes(s.encode("utf-8", "surrogatepass"))),
    st.binary(max_size=30).map(Bytes),
    st.sampled_from([Bytes(b"{"), Bytes(b"[]"), Bytes(b'{"jsonrpc":"2.0","id":1,"method":"engine/search","params":{"limits":{"depth":NaN}}}'),
                     Bytes(b"[" * 100_000)]),
)


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def cnp_counts(adapter: CnpAdapter, line: Any) -> int:
    """How many responses this input line is owed: one, unless blank, a notification, or after
    shutdown."""
    if adapter.closed or (isinstance(line, str) and not line.strip()):
        return 0
    if isinstance(line, str):
        try:
            message = json.loads(line, parse_constant=_not_json)  # NaN and Infinity are not JSON
        except (ValueError, RecursionError):
            return 1
        if isinstance(message, dict) and isinstance(message.get("method"), str) and "id" not in message:
            return 0
    return 1


LINE_MODELS: tuple[type[BaseModel], ...] = (cnp_models.ResultResponse, cnp_models.ErrorResponse, cnp_models.InfoNotification)


def valid_cnp(line: str) -> BaseModel:
    message = json.loads(line)
    for model in LINE_MODELS:
        try:
            return model.model_validate(message)
        except ValidationError:
            continue
    raise AssertionError(f"not a CNP message: {line}")


def cnp_closing(adapter: Any) -> list[bytes]:
    running = adapter.running
    if running is None:
        return []
    return [json.dumps({"jsonrpc": "2.0", "id": "closing-stop", "method": "engine/stop",
                        "params": {"id": running.tag.request_id}}).encode()]


@FUZZ
@given(steps_of(CNP_LINES, b'{"jsonrpc":"2.0","id":9,"method":"engine/newGame"}'))
def test_cnp_adapter_survives_any_input_and_writes_only_cnp(steps: list[Any]) -> None:
    transcript = run(CnpAdapter(), steps, closing=cnp_closing, count_request=cnp_counts)
    responses = 0
    for line in transcript.written:
        model = valid_cnp(line)
        if isinstance(model, cnp_models.ResultResponse) and "bestMove" in model.result:
            cnp_models.SearchResultModel.model_validate(model.result)
        responses += not isinstance(model, cnp_models.InfoNotification)
    assert responses == transcript.expected_responses


def test_huge_lines_at_the_cap_are_read_and_over_it_are_refused() -> None:
    """A command padded to exactly 1 MiB is run; one byte more is refused in each protocol."""
    at_cap = Bytes(b"isready".ljust(MAX_LINE_BYTES))
    over = Bytes(b"isready".ljust(MAX_LINE_BYTES + 1))
    uci = run(UciAdapter(), [at_cap, over])
    assert uci.written == ["readyok", f"info string ignored a line of {MAX_LINE_BYTES + 1} bytes: over the 1 MiB limit"]
    xboard = run(XBoardAdapter(), [Bytes(b"ping 3".ljust(MAX_LINE_BYTES)), Bytes(b"ping 4".ljust(MAX_LINE_BYTES + 1))])
    assert xboard.written == ["pong 3", f"Error (line too long): {MAX_LINE_BYTES + 1} bytes"]
    request = b'{"jsonrpc":"2.0","id":5,"method":"engine/newGame"}'
    cnp = run(CnpAdapter(), [Bytes(request.ljust(MAX_LINE_BYTES)), Bytes(request.ljust(MAX_LINE_BYTES + 1))])
    assert [json.loads(line).get("id") for line in cnp.written] == [5, None]
    assert json.loads(cnp.written[1])["error"]["code"] == -32600
