"""The CNP adapter in-process: every method, every error code and `data.field`, ids by JSON type,
busy, unknown ids, pondering, and the exact shape of every line it writes.

A small stand-in answers each command the way the session does (see `cb_async.session`), so
these tests need no search process; searches end when a test says so. Every line the adapter
writes is checked against the pydantic models the JSON Schema comes from.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import chess
import pytest
from hypothesis import given, settings, strategies as st

from cb_async.adapters import cnp_models as models
from cb_async.adapters.cnp import CnpAdapter, SearchTag, schema_text
from cb_async import options as option_table
from cb_async.commands import (
    Cancel, Command, Emit, Go, Identify, NewGame, PonderHit, Quit, SetOptions, Stop,
)
from cb_async.events import (
    SearchKindChanged,
    Acknowledged, BestMove, Goodbye, Identity, Info, NewGameDone, OptionsSet, SearchCancelled,
)
from cb_async.framing import TooLong
from cb_async.limits import Limits
from cb_async.results import Score, SearchInfo, SearchResult
from cb_async.timeman import budget

ROOT = Path(__file__).resolve().parent.parent
E2E4, E7E5 = chess.Move.from_uci("e2e4"), chess.Move.from_uci("e7e5")


def request(request_id: Any, method: str, params: Any = None, **members: Any) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    message.update(members)
    return json.dumps(message)


def check_line(line: str) -> dict[str, Any]:
    """Parse one output line and hold it to the models of the schema."""
    message = json.loads(line)
    if "method" in message:
        models.InfoNotification.model_validate(message)
    elif "error" in message:
        models.ErrorResponse.model_validate(message)
    else:
        models.ResultResponse.model_validate(message)
    return message


def a_result(depth: int = 3) -> SearchResult:
    info = SearchInfo(depth=depth, seldepth=5, multipv=1, score=Score(cp=31), nodes=1000, nps=50000,
                      time=20, pv=(E2E4, E7E5))
    return SearchResult(E2E4, E7E5, Score(cp=31), depth, 5, 1000, 20, pv=(E2E4, E7E5), lines=(info,))


class Harness:
    """The adapter and a stand-in session that answers at once; a search runs until the test
    ends it with `finish`."""

    def __init__(self, max_time_ms: int | None = None) -> None:
        self.adapter = CnpAdapter(max_time_ms)
        self.out: list[str] = []
        self.go: Go | None = None
        self.gos: list[Go] = []
        self.options = option_table.defaults()

    def send(self, line: str | TooLong, at: float = 0.0) -> list[dict[str, Any]]:
        start = len(self.out)
        for command in self.adapter.receive(line, at):
            self.apply(command)
        return [check_line(line) for line in self.out[start:]]

    def call(self, request_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        """One request that is answered at once with exactly one line."""
        replies = self.send(request(request_id, method, params))
        assert len(replies) == 1, replies
        return replies[0]

    def event(self, event: Any) -> None:
        lines, followups = self.adapter.on_event(event)
        assert followups == []
        self.out.extend(lines)

    def apply(self, command: Command) -> None:
        match command:
            case Emit(event=event):
                self.event(event)
            case Identify(tag=tag):
                self.event(Identity("cb-async", "The cb-async developers", "0.1.0", option_table.OPTIONS, tag))
            case SetOptions(values=values, tag=tag):
                parsed = {option_table.find(n).name: option_table.find(n).parse_value(v) for n, v in values}
                self.event(OptionsSet(parsed, tag))
            case NewGame(tag=tag):
                self.event(NewGameDone(tag))
            case Go():
                assert self.go is None, "the adapter must not replace a running search"
                self.go = command
                self.gos.append(command)
            case Stop(tag=tag):
                self.finish("stop")
                self.event(Acknowledged(tag))
            case PonderHit(tag=tag):
                if self.go is not None and self.go.ponder:  # as the session does at the hit
                    self.event(SearchKindChanged("analysis" if self.go.limits.infinite else "game", self.go.tag))
                self.event(Acknowledged(tag))
            case Cancel(tag=tag) | Quit(tag=tag):
                if self.go is not None:
                    self.event(SearchCancelled(self.go.tag))
                    self.go = None
                self.event(Goodbye(tag) if isinstance(command, Quit) else Acknowledged(tag))
            case _:
                raise AssertionError(command)

    def finish(self, stopped: str = "limit", result: SearchResult | None = None, ponder_ms: int = 0) -> dict[str, Any]:
        go = self.go
        assert go is not None and go.board is not None
        self.go = None
        start = len(self.out)
        self.event(BestMove(result or a_result(), go.board, stopped, 42, ponder_ms, go.tag))
        [line] = self.out[start:]
        return check_line(line)

    def start_search(self, request_id: Any = 1, params: Any = None) -> Go:
        assert self.send(request(request_id, "engine/search", params)) == []
        assert self.go is not None
        return self.go


def error_of(reply: dict[str, Any]) -> tuple[int, Any]:
    return reply["error"]["code"], reply["id"]


# -- the envelope ---------------------------------------------------------------------------------

ENVELOPE_ERRORS = [
    ("not json", -32700, None),
    ('{"jsonrpc":"2.0","id":1,"method":"engine/hello"', -32700, None),
    ('{"jsonrpc":"2.0","id":NaN,"method":"engine/hello"}', -32700, None),
    ('[{"jsonrpc":"2.0","id":1,"method":"engine/hello"}]', -32600, None),
    ("[]", -32600, None),
    ("42", -32600, None),
    ('"engine/hello"', -32600, None),
    ("null", -32600, None),
    ('{"jsonrpc":"2.0","id":1}', -32600, 1),
    ('{"jsonrpc":"2.0","id":"a","method":5}', -32600, "a"),
    ('{"id":1,"method":"engine/hello"}', -32600, 1),
    ('{"jsonrpc":"1.0","id":1,"method":"engine/hello"}', -32600, 1),
    ('{"jsonrpc":2.0,"id":1,"method":"engine/hello"}', -32600, 1),
    ('{"jsonrpc":"2.0","id":null,"method":"engine/hello"}', -32600, None),
    ('{"jsonrpc":"2.0","id":1.5,"method":"engine/hello"}', -32600, None),
    ('{"jsonrpc":"2.0","id":1.0,"method":"engine/hello"}', -32600, None),
    ('{"jsonrpc":"2.0","id":true,"method":"engine/hello"}', -32600, None),
    ('{"jsonrpc":"2.0","id":[1],"method":"engine/hello"}', -32600, None),
    ('{"jsonrpc":"2.0","id":3,"method":"engine/think"}', -32601, 3),
    ('{"jsonrpc":"2.0","id":"x","method":"hello"}', -32601, "x"),
    ('{"jsonrpc":"2.0","id":4,"method":"engine/hello","params":[]}', -32602, 4),
    ('{"jsonrpc":"2.0","id":4,"method":"engine/search","params":"startpos"}', -32602, 4),
    ('{"jsonrpc":"2.0","id":4,"method":"engine/newGame","params":7}', -32602, 4),
]


@pytest.mark.parametrize(("line", "code", "reply_id"), ENVELOPE_ERRORS)
def test_envelope_errors(line: str, code: int, reply_id: Any) -> None:
    harness = Harness()
    [reply] = harness.send(line)
    assert error_of(reply) == (code, reply_id)
    if code == -32602:
        assert reply["error"]["data"]["field"] == "params"
    if code == -32601:
        assert reply["error"]["data"]["method"] == json.loads(line)["method"]
    # The engine keeps serving.
    assert harness.call(9, "engine/newGame") == {"jsonrpc": "2.0", "id": 9, "result": {}}


def test_too_long_line_is_invalid_request_with_null_id() -> None:
    [reply] = Harness().send(TooLong(2 << 20))
    assert error_of(reply) == (-32600, None)


@pytest.mark.parametrize("line", [
    '{"jsonrpc":"2.0","method":"engine/search"}',
    '{"jsonrpc":"2.0","method":"engine/shutdown","params":{}}',
    '{"method":"engine/stop","params":{"id":1}}',
    "", "   ", "\t",
])
def test_notifications_and_blank_lines_are_not_answered(line: str) -> None:
    harness = Harness()
    assert harness.send(line) == []
    assert harness.go is None and not harness.adapter.closed


def test_a_notification_is_noted_for_the_log() -> None:
    harness = Harness()
    harness.send('{"jsonrpc":"2.0","method":"engine/search"}')
    assert harness.out == []
    assert any("engine/search" in note for note in harness.adapter.drain_notes())
    assert harness.adapter.drain_notes() == []


def test_params_null_or_absent_is_no_params() -> None:
    harness = Harness()
    assert harness.call(1, "engine/newGame")["result"] == {}
    assert harness.send('{"jsonrpc":"2.0","id":2,"method":"engine/newGame","params":null}')[0]["result"] == {}


# -- invalid params: data.field ----------------------------------------------------------------

BLACK_TO_MOVE = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"

INVALID_PARAMS = [
    # engine/search: the position
    ("engine/search", {"position": {"fen": "not a fen"}}, "position.fen", {}),
    ("engine/search", {"position": {"fen": "8/8/8/8/8/8/8/8 w - - 0 1"}}, "position.fen", {}),
    ("engine/search", {"position": {"fen": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"[:-2]}}, "position.fen", {}),
    ("engine/search", {"position": {"fen": 5}}, "position.fen", {}),
    ("engine/search", {"position": {"fen": "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"}}, "position.fen", {}),
    ("engine/search", {"position": {"moves": ["e2e5"]}}, "position.moves", {"move": "e2e5"}),
    ("engine/search", {"position": {"moves": ["e2e4", "e2e4"]}}, "position.moves", {"move": "e2e4"}),
    ("engine/search", {"position": {"moves": ["0000"]}}, "position.moves", {"move": "0000"}),
    ("engine/search", {"position": {"moves": ["e2e4", 7]}}, "position.moves", {}),
    ("engine/search", {"position": {"moves": "e2e4"}}, "position.moves", {}),
    ("engine/search", {"position": []}, "position", {}),
    ("engine/search", {"chess960": "yes"}, "chess960", {}),
    ("engine/search", {"chess960": 1}, "chess960", {}),
    # searchMoves
    ("engine/search", {"searchMoves": []}, "searchMoves", {}),
    ("engine/search", {"searchMoves": ["e2e5"]}, "searchMoves", {"move": "e2e5"}),
    ("engine/search", {"searchMoves": ["e2e4", "e7e5"]}, "searchMoves", {"move": "e7e5"}),
    ("engine/search", {"searchMoves": "e2e4"}, "searchMoves", {}),
    # limits
    ("engine/search", {"limits": {"depth": 0}}, "limits.depth", {}),
    ("engine/search", {"limits": {"depth": -1}}, "limits.depth", {}),
    ("engine/search", {"limits": {"depth": 1.5}}, "limits.depth", {}),
    ("engine/search", {"limits": {"depth": 2.0}}, "limits.depth", {}),
    ("engine/search", {"limits": {"depth": "3"}}, "limits.depth", {}),
    ("engine/search", {"limits": {"depth": True}}, "limits.depth", {}),
    ("engine/search", {"limits": {"nodes": 0}}, "limits.nodes", {}),
    ("engine/search", {"limits": {"mate": 0}}, "limits.mate", {}),
    ("engine/search", {"limits": {"timeMs": -1}}, "limits.timeMs", {}),
    ("engine/search", {"limits": {"timeMs": 0.5}}, "limits.timeMs", {}),
    ("engine/search", {"limits": {"infinite": "true"}}, "limits.infinite", {}),
    ("engine/search", {"limits": {"clock": {"whiteMs": -1, "blackMs": 100}}}, "limits.clock.whiteMs", {}),
    ("engine/search", {"limits": {"clock": {"whiteMs": 100, "blackMs": 1.5}}}, "limits.clock.blackMs", {}),
    ("engine/search", {"limits": {"clock": {"whiteMs": 100, "whiteIncMs": -5}}}, "limits.clock.whiteIncMs", {}),
    ("engine/search", {"limits": {"clock": {"whiteMs": 100, "blackIncMs": "1"}}}, "limits.clock.blackIncMs", {}),
    ("engine/search", {"limits": {"clock": {"whiteMs": 100, "movesToGo": 0}}}, "limits.clock.movesToGo", {}),
    ("engine/search", {"limits": {"clock": {"blackMs": 100}}}, "limits.clock.whiteMs", {}),
    ("engine/search", {"limits": {"clock": {}}}, "limits.clock.whiteMs", {}),
    ("engine/search", {"position": {"fen": BLACK_TO_MOVE}, "limits": {"clock": {"whiteMs": 100}}},
     "limits.clock.blackMs", {}),
    ("engine/search", {"limits": "fast"}, "limits", {}),
    ("engine/search", {"limits": {"clock": 5}}, "limits.clock", {}),
    # contradictory limits
    ("engine/search", {"limits": {"infinite": True, "depth": 3}}, "limits.infinite", {}),
    ("engine/search", {"limits": {"infinite": True, "timeMs": 100}}, "limits.infinite", {}),
    ("engine/search", {"limits": {"infinite": True, "clock": {"whiteMs": 100}}}, "limits.infinite", {}),
    ("engine/search", {"limits": {"infinite": True}, "ponder": True}, "limits.infinite", {}),
    # multiPv, ponder, info
    ("engine/search", {"multiPv": 0}, "multiPv", {}),
    ("engine/search", {"multiPv": 257}, "multiPv", {}),
    ("engine/search", {"multiPv": 2.5}, "multiPv", {}),
    ("engine/search", {"ponder": "yes"}, "ponder", {}),
    ("engine/search", {"info": 0}, "info", {}),
    # engine/hello
    ("engine/hello", {"protocol": "cnp/2"}, "protocol", {}),
    ("engine/hello", {"protocol": "cnp/2.1"}, "protocol", {}),
    ("engine/hello", {"protocol": "uci"}, "protocol", {}),
    ("engine/hello", {"protocol": 1}, "protocol", {}),
    ("engine/hello", {"client": "me"}, "client", {}),
    ("engine/hello", {"client": {"name": 5}}, "client.name", {}),
    # engine/setOptions
    ("engine/setOptions", {}, "options", {}),
    ("engine/setOptions", {"options": [["Hash", 1]]}, "options", {}),
    ("engine/setOptions", {"options": {"Nope": 1}}, "options", {"option": "Nope"}),
    ("engine/setOptions", {"options": {"Hash": 0}}, "options", {"option": "Hash"}),
    ("engine/setOptions", {"options": {"Hash": 1.5}}, "options", {"option": "Hash"}),
    ("engine/setOptions", {"options": {"Hash": True}}, "options", {"option": "Hash"}),
    ("engine/setOptions", {"options": {"Ponder": "maybe"}}, "options", {"option": "Ponder"}),
    ("engine/setOptions", {"options": {"maxTimeMs": 0}}, "options", {"option": "maxTimeMs"}),
    ("engine/setOptions", {"options": {"UCI_Chess960": True}}, "options", {"option": "UCI_Chess960"}),
    ("engine/setOptions", {"options": {"Hash": 64, "MultiPV": 0, "Nope": 1}}, "options", {"option": "MultiPV"}),
    # the id of stop, cancel and ponderHit
    *[(method, params, "id", {}) for method in ("engine/stop", "engine/cancel", "engine/ponderHit")
      for params in ({}, {"id": None}, {"id": 1.5}, {"id": True}, {"id": [1]})],
]


@pytest.mark.parametrize(("method", "params", "field", "extra"), INVALID_PARAMS,
                         ids=[f"{m}-{json.dumps(p)}" for m, p, _, _ in INVALID_PARAMS])
def test_invalid_params(method: str, params: dict[str, Any], field: str, extra: dict[str, Any]) -> None:
    harness = Harness()
    reply = harness.call(7, method, params)
    assert error_of(reply) == (-32602, 7)
    data = reply["error"]["data"]
    assert data["field"] == field
    for key, value in extra.items():
        assert data[key] == value
    assert field in reply["error"]["message"]
    assert harness.go is None  # nothing was searched


def test_a_failed_set_options_changes_nothing() -> None:
    harness = Harness()
    harness.call(1, "engine/setOptions", {"options": {"maxTimeMs": 5000, "Hash": 0}})
    assert harness.adapter.max_time_ms == 600_000
    harness.start_search(2)
    assert harness.go is not None and harness.go.max_time_ms == 600_000


def test_unknown_params_members_are_ignored() -> None:
    harness = Harness()
    go = harness.start_search(1, {"limits": {"depth": 2, "speed": "fast"}, "colour": "white",
                                  "position": {"moves": ["e2e4"], "comment": "x"}})
    assert go.limits.depth == 2


# -- the methods -----------------------------------------------------------------------------


def test_hello() -> None:
    harness = Harness()
    reply = harness.call(1, "engine/hello", {"protocol": "cnp/1", "client": {"name": "solrac", "version": "1"}})
    hello = models.HelloResult.model_validate(reply["result"])
    assert reply["id"] == 1
    assert hello.protocol == "cnp/1"
    assert hello.engine.name == "cb-async"
    assert reply["result"]["capabilities"] == {
        "ponder": True, "multiPv": 256, "chess960": True, "syzygy": True, "book": True,
        "levels": {"minElo": 800, "maxElo": 1850},
    }
    assert reply["result"]["maxTimeMs"] == 600_000
    options = {option["name"]: option for option in reply["result"]["options"]}
    assert options["maxTimeMs"] == {"name": "maxTimeMs", "type": "spin", "default": 600000, "min": 1, "max": 2147483647}
    assert options["Hash"]["type"] == "spin" and options["Hash"]["min"] == 1
    assert options["Ponder"] == {"name": "Ponder", "type": "check", "default": False}
    assert options["Clear Hash"] == {"name": "Clear Hash", "type": "button", "default": None}
    assert "UCI_Chess960" not in options and "UCI_ShowWDL" not in options


@pytest.mark.parametrize("protocol", ["cnp/1", "cnp/1.0", "cnp/1.7", None])
def test_hello_accepts_major_version_one(protocol: str | None) -> None:
    params = {} if protocol is None else {"protocol": protocol}
    assert Harness().call("h", "engine/hello", params)["result"]["protocol"] == "cnp/1"


def test_hello_shows_the_command_line_bound() -> None:
    assert Harness(max_time_ms=300).call(1, "engine/hello")["result"]["maxTimeMs"] == 300


def test_set_options() -> None:
    harness = Harness()
    reply = harness.call(1, "engine/setOptions", {"options": {"hash": 64, "multipv": 3, "Clear Hash": None,
                                                              "MAXTIMEMS": 5000, "Move Overhead": "40"}})
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {"options": {
        "Hash": 64, "MultiPV": 3, "Clear Hash": None, "maxTimeMs": 5000, "Move Overhead": 40}}}
    assert harness.call(2, "engine/hello")["result"]["maxTimeMs"] == 5000
    go = harness.start_search(3)
    assert go.max_time_ms == 5000 and go.multipv == 3 and go.limits.multipv == 3


def test_set_options_is_allowed_during_a_search() -> None:
    harness = Harness()
    harness.start_search(1)
    assert harness.call(2, "engine/setOptions", {"options": {"Hash": 32}})["result"] == {"options": {"Hash": 32}}
    assert harness.go is not None


def test_new_game() -> None:
    harness = Harness()
    assert harness.call(1, "engine/newGame") == {"jsonrpc": "2.0", "id": 1, "result": {}}
    harness.start_search(2)
    assert error_of(harness.call(3, "engine/newGame")) == (-32001, 3)
    harness.finish()
    assert harness.call(4, "engine/newGame")["result"] == {}


def test_busy_keeps_the_running_search() -> None:
    harness = Harness()
    harness.start_search(1, {"limits": {"depth": 5}})
    reply = harness.call(2, "engine/search", {"limits": {"depth": 3}})
    assert error_of(reply) == (-32001, 2)
    assert reply["error"]["data"] == {"id": 1}
    # Validation comes first: an invalid search during a search is -32602.
    assert error_of(harness.call(3, "engine/search", {"limits": {"depth": 0}})) == (-32602, 3)
    assert harness.gos[-1].tag.request_id == 1 and len(harness.gos) == 1
    assert harness.finish()["id"] == 1


@pytest.mark.parametrize("method", ["engine/search", "engine/hello", "engine/stop", "engine/setOptions"])
def test_reusing_the_running_search_id_is_invalid_request(method: str) -> None:
    harness = Harness()
    harness.start_search("s1")
    reply = harness.call("s1", method, {"id": "s1", "options": {}})
    assert error_of(reply) == (-32600, "s1")
    assert harness.go is not None  # still running
    # Once answered, the id is free again.
    harness.finish()
    harness.start_search("s1")


def test_ids_match_by_json_type() -> None:
    harness = Harness()
    harness.start_search(7)
    for method in ("engine/stop", "engine/cancel", "engine/ponderHit"):
        reply = harness.call(8, method, {"id": "7"})
        assert error_of(reply) == (-32002, 8) and reply["error"]["data"] == {"id": "7"}
    # "7" as a request id is not the running search's 7.
    assert harness.call("7", "engine/newGame")["error"]["code"] == -32001
    harness.start_search  # noqa: B018 (still running)
    assert harness.go is not None


@pytest.mark.parametrize("method", ["engine/stop", "engine/cancel", "engine/ponderHit"])
def test_unknown_search_id(method: str) -> None:
    harness = Harness()
    assert error_of(harness.call(1, method, {"id": 5})) == (-32002, 1)
    harness.start_search(5)
    harness.finish()
    # Answered: unknown from then on.
    assert error_of(harness.call(2, method, {"id": 5})) == (-32002, 2)


def test_stop_answers_the_search_then_the_stop() -> None:
    harness = Harness()
    harness.start_search(1)
    replies = harness.send(request(2, "engine/stop", {"id": 1}))
    assert [reply["id"] for reply in replies] == [1, 2]
    assert replies[0]["result"]["stopped"] == "stop"
    assert replies[1]["result"] == {}


def test_cancel_answers_cancelled() -> None:
    harness = Harness()
    harness.start_search("a")
    replies = harness.send(request("b", "engine/cancel", {"id": "a"}))
    assert replies == [
        {"jsonrpc": "2.0", "id": "a", "error": {"code": -32800, "message": "cancelled", "data": {}}},
        {"jsonrpc": "2.0", "id": "b", "result": {}},
    ]
    assert harness.adapter.running is None


def test_shutdown_cancels_then_answers_last_and_reads_nothing_more() -> None:
    harness = Harness()
    harness.start_search(1)
    replies = harness.send(request(2, "engine/shutdown"))
    assert [(reply["id"], "error" in reply) for reply in replies] == [(1, True), (2, False)]
    assert replies[0]["error"]["code"] == -32800
    assert replies[1]["result"] == {}
    assert harness.send(request(3, "engine/hello")) == []


# -- searches: what the session is asked -----------------------------------------------------


LIMITS = [
    ({}, Limits(infinite=True)),
    ({"limits": {}}, Limits(infinite=True)),
    ({"limits": {"infinite": False}}, Limits(infinite=True)),
    ({"limits": {"infinite": True}}, Limits(infinite=True)),
    ({"limits": {"depth": 4, "nodes": 1000, "mate": 2}}, Limits(depth=4, nodes=1000, mate=2)),
    ({"limits": {"timeMs": 0}}, Limits(movetime=0)),
    ({"limits": {"timeMs": 250, "clock": {"whiteMs": 1000, "blackMs": 1000}}}, Limits(movetime=250)),
    # The clock loses what Move Overhead (30 by default) leaves short of the 50 ms margin.
    ({"limits": {"clock": {"whiteMs": 60000, "blackMs": 50000, "whiteIncMs": 1000, "blackIncMs": 500,
                           "movesToGo": 40}}},
     Limits(white_clock=59980, black_clock=49980, white_inc=1000, black_inc=500, moves_to_go=40)),
    # No movesToGo: the contract counts 30, and so does the search it asks for.
    ({"limits": {"clock": {"whiteMs": 10}, "depth": 3}}, Limits(white_clock=0, depth=3, moves_to_go=30)),
]


@pytest.mark.parametrize(("params", "limits"), LIMITS, ids=[json.dumps(p) for p, _ in LIMITS])
def test_limits(params: dict[str, Any], limits: Limits) -> None:
    go = Harness().start_search(1, params)
    assert go.limits == limits
    assert go.ponder is False


def test_go_carries_arrival_time_bound_and_tag() -> None:
    harness = Harness(max_time_ms=300)
    assert harness.send(request(1, "engine/search"), at=12.5) == []
    go = harness.go
    assert go is not None
    assert go.received_at == 12.5 and go.max_time_ms == 300
    assert isinstance(go.tag, SearchTag) and go.tag.request_id == 1
    assert go.board is not None and go.board == chess.Board() and go.multipv == 1


def test_clock_margin_follows_move_overhead() -> None:
    harness = Harness()
    harness.call(1, "engine/setOptions", {"options": {"Move Overhead": 100}})
    go = harness.start_search(2, {"limits": {"clock": {"whiteMs": 1000}}})
    assert go.limits.white_clock == 1000


def test_ponder_search() -> None:
    harness = Harness()
    go = harness.start_search(1, {"position": {"moves": ["e2e4", "e7e5"]}, "ponder": True,
                                  "limits": {"clock": {"whiteMs": 5000, "blackMs": 5000}}})
    assert go.ponder is True and go.limits.white_clock == 4980
    go = Harness().start_search(1, {"ponder": True})
    assert go.ponder is True and go.limits == Limits(infinite=True)
    go = Harness().start_search(1, {"ponder": True, "limits": {"depth": 2}})
    assert go.limits == Limits(depth=2)


def test_ponder_hit_flow() -> None:
    harness = Harness()
    harness.start_search(1, {"ponder": True, "limits": {"depth": 2}})
    replies = harness.send(request(2, "engine/ponderHit", {"id": 1}), at=3.0)
    assert replies == [{"jsonrpc": "2.0", "id": 2, "result": {}}]
    # A second hit, and a hit on a search that is not pondering, is -32003.
    assert error_of(harness.call(3, "engine/ponderHit", {"id": 1})) == (-32003, 3)
    reply = harness.finish(ponder_ms=120)
    assert reply["id"] == 1 and reply["result"]["ponderMs"] == 120
    harness.start_search(4, {"limits": {"depth": 2}})
    reply = harness.call(5, "engine/ponderHit", {"id": 4})
    assert error_of(reply) == (-32003, 5) and reply["error"]["data"] == {"id": 4}


def test_ponder_hit_command_carries_its_arrival_time() -> None:
    harness = Harness()
    harness.start_search(1, {"ponder": True})
    commands = harness.adapter.receive(request(2, "engine/ponderHit", {"id": 1}), 7.25)
    assert commands == [PonderHit(received_at=7.25, tag=2)]


def test_stop_while_pondering_answers() -> None:
    harness = Harness()
    harness.start_search(1, {"ponder": True})
    replies = harness.send(request(2, "engine/stop", {"id": 1}))
    assert replies[0]["result"]["stopped"] == "stop" and replies[1]["result"] == {}


def test_multipv_defaults_to_the_option_and_is_clamped() -> None:
    harness = Harness()
    assert harness.start_search(1, {"multiPv": 200}).multipv == 20
    harness.finish()
    assert harness.start_search(2, {"multiPv": 5, "searchMoves": ["e2e4", "d2d4"]}).multipv == 2
    harness.finish()
    harness.call(3, "engine/setOptions", {"options": {"MultiPV": 3}})
    assert harness.start_search(4).multipv == 3
    harness.finish()
    # King and pawn: 5 legal moves.
    go = harness.start_search(5, {"position": {"fen": "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"}, "multiPv": 256})
    assert go.multipv == go.board.legal_moves.count() if go.board else False


def test_positions_and_moves() -> None:
    go = Harness().start_search(1, {"position": {"moves": ["e2e4", "e7e5", "g1f3"]}})
    assert go.board is not None and [m.uci() for m in go.board.move_stack] == ["e2e4", "e7e5", "g1f3"]
    # e1h1 is accepted for castling in standard chess; the game history is kept.
    fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    go = Harness().start_search(1, {"position": {"fen": fen, "moves": ["e1h1"]}})
    assert go.board is not None and go.board.piece_at(chess.G1) == chess.Piece.from_symbol("K")
    go = Harness().start_search(1, {"position": {"fen": fen, "moves": ["e1g1"]}})
    assert go.board is not None and go.board.piece_at(chess.F1) == chess.Piece.from_symbol("R")
    # A four-field FEN is completed.
    go = Harness().start_search(1, {"position": {"fen": "4k3/8/8/8/8/8/4P3/4K3 w - -"}})
    assert go.board is not None and go.board.fullmove_number == 1
    go = Harness().start_search(1, {"searchMoves": ["e2e4", "E2E4", "d2d4"]})
    assert go.limits.search_moves == (E2E4, chess.Move.from_uci("d2d4"))


def test_chess960() -> None:
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"
    go = Harness().start_search(1, {"position": {"fen": fen, "moves": ["e1g1"]}, "chess960": True})
    assert go.board is not None and go.board.chess960
    assert go.board.piece_at(chess.G1) == chess.Piece.from_symbol("K")
    # X-FEN castling letters too.
    go = Harness().start_search(1, {"position": {"fen": "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1"}, "chess960": True})
    assert go.board is not None and go.board.castling_rights == chess.BB_B1 | chess.BB_G1 | chess.BB_B8 | chess.BB_G8
    harness = Harness()
    harness.start_search(1, {"chess960": True})
    assert harness.go is not None and harness.go.board is not None and harness.go.board.chess960


# -- searches: what the client reads ---------------------------------------------------------


def test_search_response_has_every_member() -> None:
    harness = Harness()
    harness.start_search(1, {"limits": {"depth": 3}})
    reply = harness.finish()
    assert reply == {"jsonrpc": "2.0", "id": 1, "result": {
        "bestMove": "e2e4", "ponderMove": "e7e5", "score": {"cp": 31}, "depth": 3, "seldepth": 5,
        "nodes": 1000, "timeMs": 42, "ponderMs": 0, "pv": ["e2e4", "e7e5"],
        "lines": [{"multipv": 1, "depth": 3, "score": {"cp": 31}, "pv": ["e2e4", "e7e5"]}],
        "source": "search", "stopped": "limit"}}
    models.SearchResultModel.model_validate(reply["result"])


@pytest.mark.parametrize("stopped", ["limit", "stop", "maxTime"])
def test_stopped_reasons(stopped: str) -> None:
    harness = Harness()
    harness.start_search(1)
    assert harness.finish(stopped)["result"]["stopped"] == stopped


def test_stopped_before_depth_one_still_has_every_line() -> None:
    harness = Harness()
    harness.start_search(1, {"multiPv": 3})
    reply = harness.finish("stop", SearchResult(E2E4, None, Score(cp=20), 0, 0, 12, 1, pv=(E2E4,)))
    result = models.SearchResultModel.model_validate(reply["result"])
    assert result.best_move == "e2e4" and result.depth == 0 and result.ponder_move is None
    assert [line.multipv for line in result.lines] == [1, 2, 3]
    assert result.lines[0].pv == ["e2e4"]
    assert len({line.pv[0] for line in result.lines}) == 3


@pytest.mark.parametrize(("fen", "score"), [
    ("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", {"cp": 0}),  # stalemate
    ("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1", {"mate": 0}),  # checkmate
])
def test_no_legal_move(fen: str, score: dict[str, int]) -> None:
    harness = Harness()
    harness.start_search(1, {"position": {"fen": fen}})
    board = chess.Board(fen)
    result = SearchResult(None, None, Score(mate=0) if board.is_check() else Score(cp=0), 0, 0, 0, 0)
    reply = harness.finish("limit", result)
    assert reply["result"] | {"timeMs": 0} == {
        "bestMove": None, "ponderMove": None, "score": score, "depth": 0, "seldepth": 0, "nodes": 0,
        "timeMs": 0, "ponderMs": 0, "pv": [], "lines": [], "source": "search", "stopped": "limit"}


def test_mate_scores_and_chess960_castling_in_output() -> None:
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1"
    harness = Harness()
    go = harness.start_search(1, {"position": {"fen": fen}, "chess960": True})
    assert go.board is not None
    castle = go.board.parse_uci("e1g1")
    info = SearchInfo(depth=2, seldepth=2, multipv=1, score=Score(mate=-3), nodes=5, nps=0, time=0, pv=(castle,))
    harness.event(Info(info, go.board, go.tag))
    reply = harness.finish("limit", SearchResult(castle, None, Score(mate=-3), 2, 2, 5, 0, pv=(castle,), lines=(info,)))
    notification = json.loads(harness.out[0])
    assert notification["params"]["pv"] == ["e1g1"] and notification["params"]["score"] == {"mate": -3}
    assert reply["result"]["bestMove"] == "e1g1" and reply["result"]["score"] == {"mate": -3}


def test_info_notifications() -> None:
    harness = Harness()
    go = harness.start_search("q", {"limits": {"depth": 2}})
    info = SearchInfo(depth=2, seldepth=4, multipv=1, score=Score(cp=-15), nodes=400, nps=20000, time=20,
                      pv=(E2E4, E7E5), hashfull=3)
    assert go.board is not None
    harness.event(Info(info, go.board, go.tag))
    assert json.loads(harness.out[-1]) == {"jsonrpc": "2.0", "method": "engine/info", "params": {
        "id": "q", "depth": 2, "seldepth": 4, "multipv": 1, "score": {"cp": -15}, "nodes": 400, "nps": 20000,
        "timeMs": 20, "pv": ["e2e4", "e7e5"], "hashfull": 3, "tbhits": 0}}
    harness.finish()
    # After the response, a late info of that search is never written.
    count = len(harness.out)
    harness.event(Info(info, go.board, go.tag))
    # Nor one of an earlier search that had the same id.
    harness.start_search("q")
    harness.event(Info(info, go.board, go.tag))
    assert len(harness.out) == count


def test_info_false_suppresses_notifications() -> None:
    harness = Harness()
    go = harness.start_search(1, {"info": False})
    info = SearchInfo(depth=1, seldepth=1, multipv=1, score=Score(cp=0), nodes=1, nps=1, time=1, pv=(E2E4,))
    assert go.board is not None
    harness.event(Info(info, go.board, go.tag))
    assert harness.out == []
    assert harness.finish()["id"] == 1


def test_events_without_a_request_write_nothing() -> None:
    adapter = CnpAdapter()
    for event in (Goodbye(), Acknowledged(), NewGameDone()):
        assert adapter.on_event(event) == ([], [])


# -- the contract's time manager rule --------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    remaining=st.integers(0, 10_000_000), increment=st.integers(0, 100_000),
    moves_to_go=st.one_of(st.none(), st.integers(1, 100)), overhead=st.integers(0, 5000),
)
def test_budget_never_plans_past_the_contract(remaining: int, increment: int, moves_to_go: int | None,
                                              overhead: int) -> None:
    """Never more than 2 x (remaining / movesToGo) + increment, nor remaining - 50 ms (but a
    budget of about 1 ms still answers with a legal move when even that is gone)."""
    harness = Harness()
    harness.call(0, "engine/setOptions", {"options": {"Move Overhead": overhead}})
    clock: dict[str, int] = {"whiteMs": remaining, "whiteIncMs": increment}
    if moves_to_go is not None:
        clock["movesToGo"] = moves_to_go
    go = harness.start_search(1, {"limits": {"clock": clock}})
    soft, hard = budget(go.limits, chess.WHITE, overhead)
    horizon = moves_to_go or 30
    assert soft <= hard
    assert hard <= max(1.0, 2 * remaining / horizon + increment)
    assert hard <= max(1.0, remaining - 50)
    assert not math.isinf(hard)


# -- the schema --------------------------------------------------------------------------------


def test_schema_file_is_what_the_models_make() -> None:
    assert (ROOT / "docs" / "cnp.schema.json").read_text(encoding="utf-8") == schema_text()


def test_schema_command(capsys: pytest.CaptureFixture[str]) -> None:
    from cb_async.cli import main

    assert main(["cnp-schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert set(schema["x-cnp-methods"]) == {
        "engine/hello", "engine/setOptions", "engine/newGame", "engine/search", "engine/ponderHit",
        "engine/stop", "engine/cancel", "engine/shutdown"}
    assert set(schema["x-cnp-errors"]) == {"-32700", "-32600", "-32601", "-32602", "-32001", "-32002", "-32003", "-32800"}
    assert "SearchResultModel" in schema["$defs"] and "InfoParams" in schema["$defs"]
