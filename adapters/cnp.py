"""The CNP adapter: JSON-RPC 2.0 lines in, commands out; events in, JSON-RPC lines out.

CNP (the Chess Node Protocol, see docs/cnp.md) is how Solrac clients drive the engine. Unlike
UCI it answers every request exactly once and says what went wrong, so this adapter owns more
state than the UCI one: which search is running (its id is known from its request until its
response is written), whether it is still pondering, whether it wants `engine/info`, and the
few options that change how a search is asked for (`maxTimeMs`, `MultiPV`, `Move Overhead`).
That state is exactly the session's, because the session calls `receive` only after every
earlier command has been handled and its events formatted.

Checks come in the contract's order: JSON, then the envelope, then the method, then the params
(pydantic models in `cb_async.adapters.cnp_models`), then the engine's state (busy, unknown id, not
pondering). A refused request changes nothing: its error goes through the session with `Emit`,
so it is written in order with everything before it.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import chess
from pydantic import BaseModel, ValidationError

from cb_async.adapters.cnp_models import (
    MAX_MULTIPV, PROTOCOL, HelloParams, NoParams, SearchIdParams, SearchParams, SetOptionsParams,
    json_schema,
)
from cb_async import options as option_table
from cb_async.commands import (
    Cancel, Command, Emit, Go, Identify, NewGame, PonderHit, Quit, SetOptions, Stop,
)
from cb_async.events import (
    Acknowledged, AdapterEvent, BestMove, Event, Goodbye, Identity, Info, Message, NewGameDone, OptionError,
    OptionsSet, SearchCancelled, SearchKind, SearchKindChanged,
)
from cb_async.framing import TooLong
from cb_async.limits import Limits
from cb_async.options import OptionSpec
from cb_async.positions import FenError, parse_fen
from cb_async.results import Score, SearchInfo, SearchResult

RequestId = int | str
M = TypeVar("M", bound=BaseModel)

#: The contract's floor for a clock budget: never plan past the remaining time less this.
CLOCK_MARGIN_MS = 50
#: The moves to go the contract counts when a clock names none (its time-manager rule).
CONTRACT_MOVES_TO_GO = 30

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
BUSY = -32001
NO_SUCH_SEARCH = -32002
NOT_PONDERING = -32003
CANCELLED = -32800

CAPABILITIES: dict[str, Any] = {
    "ponder": True, "multiPv": MAX_MULTIPV, "chess960": True, "syzygy": True, "book": True,
    # The strength levels' range, as the UCI_Elo option declares it.
    "levels": {"minElo": option_table.find("UCI_Elo").min, "maxElo": option_table.find("UCI_Elo").max},
}


@dataclass(frozen=True, slots=True)
class CnpLine(AdapterEvent):
    """The adapter's own output line (an error response), written in order through `Emit`."""

    line: str


@dataclass(frozen=True, slots=True)
class CnpNote(AdapterEvent):
    """A note for the log (a notification that was not run); never written to stdout."""

    text: str


@dataclass(frozen=True, slots=True)
class SearchTag:
    """The tag of a search's `Go`: its request id, plus a serial so that a late event of an
    earlier search with the same id can never pass for the current one's."""

    serial: int
    request_id: RequestId


@dataclass(slots=True)
class RunningSearch:
    tag: SearchTag
    #: "ponder" until the session says the hit was taken (`SearchKindChanged`).
    kind: SearchKind
    info: bool
    #: min(multiPv, root moves): how many `lines` the response has.
    lines_wanted: int
    root_moves: tuple[chess.Move, ...]


class InvalidParams(Exception):
    """A -32602: `field` is the dotted path from the root of params; `extra` goes into data."""

    def __init__(self, field: str, detail: str, **extra: Any) -> None:
        super().__init__(f"{field}: {detail}")
        self.field = field
        self.detail = detail
        self.extra = extra


class CnpAdapter:
    name = "cnp"

    def __init__(self, max_time_ms: int | None = None) -> None:
        defaults = option_table.defaults()
        self.max_time_ms: int = max_time_ms if max_time_ms is not None else defaults["maxTimeMs"]
        self.multipv: int = defaults["MultiPV"]
        self.move_overhead: int = defaults["Move Overhead"]
        self.running: RunningSearch | None = None
        self.closed = False
        #: Notes for stderr; a daemon that wants them calls `drain_notes`.
        self.notes: deque[str] = deque(maxlen=256)
        self._serials = itertools.count(1)
        self._methods: dict[str, Callable[[RequestId, dict[str, Any], float], list[Command]]] = {
            "engine/hello": self._hello,
            "engine/setOptions": self._set_options,
            "engine/newGame": self._new_game,
            "engine/search": self._search,
            "engine/ponderHit": self._ponder_hit,
            "engine/stop": self._stop,
            "engine/cancel": self._cancel,
            "engine/shutdown": self._shutdown,
        }

    # -- input: the envelope ------------------------------------------------------------------

    def receive(self, line: str | TooLong, received_at: float) -> list[Command]:
        if self.closed:
            return []
        if isinstance(line, TooLong):
            return [self._error(None, INVALID_REQUEST, "invalid request: line over 1 MiB",
                                {"detail": f"a line of {line.size} bytes was discarded"})]
        if not line.strip():
            return []
        try:
            message = json.loads(line, parse_constant=_reject_constant)
        except (ValueError, RecursionError) as error:
            return [self._error(None, PARSE_ERROR, "parse error: the line is not JSON", {"detail": str(error)[:200]})]
        if isinstance(message, list):
            return [self._error(None, INVALID_REQUEST, "invalid request: batches are not supported", {})]
        if not isinstance(message, dict):
            return [self._error(None, INVALID_REQUEST, "invalid request: not a JSON-RPC object", {})]
        method = message.get("method")
        if isinstance(method, str) and "id" not in message:
            return [Emit(CnpNote(f"ignored a notification ({method[:100]}): CNP runs only requests"))]
        request_id = message.get("id")
        reply_id: RequestId | None = request_id if _is_id(request_id) else None
        if not isinstance(method, str):
            return [self._error(reply_id, INVALID_REQUEST, "invalid request: method must be a string", {})]
        if message.get("jsonrpc") != "2.0":
            return [self._error(reply_id, INVALID_REQUEST, "invalid request: jsonrpc must be 2.0", {})]
        if reply_id is None:
            return [self._error(None, INVALID_REQUEST, "invalid request: id must be an integer or a string", {})]
        if self.running is not None and _same_id(reply_id, self.running.tag.request_id):
            return [self._error(reply_id, INVALID_REQUEST,
                                "invalid request: that id belongs to the running search", {})]
        handler = self._methods.get(method)
        if handler is None:
            return [self._error(reply_id, METHOD_NOT_FOUND, f"method not found: {method[:100]}",
                                {"method": method[:100]})]
        params = message.get("params")
        try:
            if params is None:
                params = {}
            elif not isinstance(params, dict):
                raise InvalidParams("params", "must be an object")
            return handler(reply_id, params, received_at)
        except InvalidParams as error:
            data = {"field": error.field, "detail": error.detail, **error.extra}
            return [self._error(reply_id, INVALID_PARAMS, f"invalid params: {error}", data)]

    def drain_notes(self) -> list[str]:
        """The notes for stderr gathered since the last call."""
        notes = list(self.notes)
        self.notes.clear()
        return notes

    # -- input: the methods -------------------------------------------------------------------

    def _hello(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        hello = _validate(HelloParams, params)
        if hello.protocol is not None:
            match = re.fullmatch(r"cnp/(\d+)(\.\d+)*", hello.protocol)
            if match is None or int(match.group(1)) != 1:
                raise InvalidParams("protocol", f"unsupported protocol {hello.protocol[:50]!r}; this engine speaks {PROTOCOL}")
        return [Identify(tag=request_id)]

    def _set_options(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        wanted = _validate(SetOptionsParams, params).options
        # Checked here, in order, so the first bad one is named and nothing is changed.
        for name, value in wanted.items():
            try:
                spec = option_table.find(name)
                if "cnp" not in spec.protocols:
                    raise option_table.OptionValueError(name, f"no such option: {name}")
                spec.parse_value(value)
            except option_table.OptionValueError as error:
                raise InvalidParams("options", str(error), option=name) from None
        return [SetOptions(tuple(wanted.items()), tag=request_id)]

    def _new_game(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        _validate(NoParams, params)
        if self.running is not None:
            return [self._busy(request_id)]
        return [NewGame(tag=request_id)]

    def _search(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        search = _validate(SearchParams, params)
        chess960 = bool(search.chess960)
        position = search.position
        board = _board(position.fen if position else None, position.moves if position else None, chess960)
        search_moves = _search_moves(board, search.search_moves)
        ponder = bool(search.ponder)
        limits = self._limits(search, board.turn, ponder)
        root_count = len(search_moves) if search_moves else board.legal_moves.count()
        multipv = search.multi_pv if search.multi_pv is not None else self.multipv
        if root_count:
            multipv = min(multipv, root_count)
        if self.running is not None:
            return [self._busy(request_id)]
        tag = SearchTag(next(self._serials), request_id)
        root_moves = search_moves or tuple(board.legal_moves)
        go = Go(limits.replace(search_moves=search_moves, multipv=multipv), board=board, ponder=ponder,
                multipv=multipv, received_at=received_at, max_time_ms=self.max_time_ms, tag=tag)
        self.running = RunningSearch(tag, go.kind, search.info is not False, min(multipv, root_count), root_moves)
        return [go]

    def _limits(self, search: SearchParams, side: chess.Color, ponder: bool) -> Limits:
        """The contract's limits as `Limits`. `timeMs` wins over the clock; no limit at all is
        infinite (for a ponder search too: after the hit it searches on as infinite)."""
        given = search.limits
        if given is None:
            return Limits(infinite=True)
        clock = given.clock
        if clock is not None:
            side_ms = clock.white_ms if side == chess.WHITE else clock.black_ms
            if side_ms is None:
                name = "whiteMs" if side == chess.WHITE else "blackMs"
                raise InvalidParams(f"limits.clock.{name}", "the clock needs the side to move's time")
        others = [given.time_ms, given.depth, given.nodes, given.mate, clock]
        if given.infinite:
            if any(value is not None for value in others):
                raise InvalidParams("limits.infinite", "infinite cannot be combined with another limit")
            if ponder:
                raise InvalidParams("limits.infinite", "a ponder search cannot be infinite")
            return Limits(infinite=True)
        if all(value is None for value in others):
            return Limits(infinite=True)
        fields: dict[str, Any] = {"depth": given.depth, "nodes": given.nodes, "mate": given.mate}
        if given.time_ms is not None:
            fields["movetime"] = given.time_ms
        elif clock is not None:
            # The time manager keeps `Move Overhead` off the clock; the contract wants at least
            # 50 ms kept, so the rest of that margin comes off the clock it is given.
            shave = max(0, CLOCK_MARGIN_MS - self.move_overhead)
            fields.update(
                white_clock=None if clock.white_ms is None else max(0, clock.white_ms - shave),
                black_clock=None if clock.black_ms is None else max(0, clock.black_ms - shave),
                white_inc=clock.white_inc_ms or 0, black_inc=clock.black_inc_ms or 0,
                # The contract caps a move at 2 x (remaining / movesToGo) + increment, with
                # movesToGo 30 when the client names none: plan for those 30 moves, so that the
                # time manager's own horizon (shorter, for the GUIs) never plans past the cap.
                moves_to_go=clock.moves_to_go or CONTRACT_MOVES_TO_GO,
            )
        return Limits(**fields)

    def _search_id(self, params: dict[str, Any]) -> tuple[RequestId, RunningSearch | None]:
        search_id: RequestId = _validate(SearchIdParams, params).id
        running = self.running
        if running is not None and _same_id(search_id, running.tag.request_id):
            return search_id, running
        return search_id, None

    def _ponder_hit(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        search_id, running = self._search_id(params)
        if running is None:
            return [self._no_such_search(request_id, search_id)]
        if running.kind != "ponder":
            return [self._error(request_id, NOT_PONDERING, "that search is not pondering", {"id": search_id})]
        return [PonderHit(received_at=received_at, tag=request_id)]

    def _stop(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        search_id, running = self._search_id(params)
        if running is None:
            return [self._no_such_search(request_id, search_id)]
        return [Stop(tag=request_id)]

    def _cancel(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        search_id, running = self._search_id(params)
        if running is None:
            return [self._no_such_search(request_id, search_id)]
        return [Cancel(tag=request_id)]

    def _shutdown(self, request_id: RequestId, params: dict[str, Any], received_at: float) -> list[Command]:
        _validate(NoParams, params)
        self.closed = True  # nothing after it is read
        return [Quit(tag=request_id)]

    # -- input: errors ------------------------------------------------------------------------

    def _error(self, request_id: RequestId | None, code: int, message: str, data: dict[str, Any]) -> Command:
        return Emit(CnpLine(error_line(request_id, code, message, data)))

    def _busy(self, request_id: RequestId) -> Command:
        assert self.running is not None
        return self._error(request_id, BUSY, "busy: a search is running", {"id": self.running.tag.request_id})

    def _no_such_search(self, request_id: RequestId, search_id: RequestId) -> Command:
        return self._error(request_id, NO_SUCH_SEARCH, "no such search", {"id": search_id})

    # -- output -------------------------------------------------------------------------------

    def on_event(self, event: Event | AdapterEvent) -> tuple[list[str], list[Command]]:
        return self.format(event), []

    def format(self, event: Event | AdapterEvent) -> list[str]:
        match event:
            case SearchKindChanged(kind=kind, search_tag=tag):
                if self.running is not None and self.running.tag == tag:
                    self.running.kind = kind
            case CnpLine(line=line):
                return [line]
            case CnpNote(text=text) | Message(text=text):
                self.notes.append(text)
                return []
            case Info(info=info, board=board, search_tag=tag):
                running = self.running
                if running is None or running.tag != tag or not running.info or info.bound is not None:
                    return []
                return [_dumps({"jsonrpc": "2.0", "method": "engine/info",
                                "params": info_params(tag.request_id, info, board)})]
            case BestMove(search_tag=tag):
                lines_wanted, root_moves = self._forget(tag)
                return [result_line(tag.request_id, search_result(event, lines_wanted, root_moves))]
            case SearchCancelled(search_tag=tag):
                self._forget(tag)
                return [error_line(tag.request_id, CANCELLED, "cancelled", {})]
            case Identity(tag=tag):
                return [result_line(tag, self._hello_result(event))] if tag is not None else []
            case OptionsSet(values=values, tag=tag):
                self._note_options(values)
                return [result_line(tag, {"options": values})] if tag is not None else []
            case OptionError(option=option, message=message, tag=tag):
                data = {"field": "options", "detail": message, "option": option}
                return [error_line(tag, INVALID_PARAMS, f"invalid params: options: {message}", data)] if tag is not None else []
            case NewGameDone(tag=tag) | Acknowledged(tag=tag):
                return [result_line(tag, {})] if tag is not None else []
            case Goodbye(tag=tag):
                self.closed = True
                return [result_line(tag, {})] if tag is not None else []
        return []

    def _forget(self, tag: SearchTag) -> tuple[int, tuple[chess.Move, ...]]:
        """The search of `tag` has answered: its id is unknown from now on."""
        running = self.running
        if running is not None and running.tag == tag:
            self.running = None
            return running.lines_wanted, running.root_moves
        return 1, ()

    def _note_options(self, values: dict[str, Any]) -> None:
        self.max_time_ms = values.get("maxTimeMs", self.max_time_ms)
        self.multipv = values.get("MultiPV", self.multipv)
        self.move_overhead = values.get("Move Overhead", self.move_overhead)

    def _hello_result(self, identity: Identity) -> dict[str, Any]:
        return {
            "protocol": PROTOCOL,
            "engine": {"name": identity.name, "version": identity.version, "author": identity.author},
            "capabilities": CAPABILITIES,
            "options": [option_description(spec) for spec in identity.options if "cnp" in spec.protocols],
            "maxTimeMs": self.max_time_ms,
        }


# -- validation ---------------------------------------------------------------------------------


def _validate(model: type[M], params: dict[str, Any]) -> M:
    try:
        return model.model_validate(params)
    except ValidationError as error:
        first = error.errors()[0]
        raise InvalidParams(_dotted(first["loc"]) or "params", first["msg"]) from None


#: Names pydantic adds to an error's location for the member of a union that failed.
_UNION_TAGS = frozenset({"int", "str", "bool", "float", "list", "dict", "none"})


def _dotted(loc: tuple[int | str, ...]) -> str:
    """`('limits', 'clock', 'whiteMs')` -> `limits.clock.whiteMs`; a list index ends the path
    (`position.moves`, not `position.moves.2`) and union tags are left out."""
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            break
        if part in _UNION_TAGS or "[" in part or "-" in part:
            continue
        parts.append(part)
    return ".".join(parts)


def _board(fen: str | None, moves: list[str] | None, chess960: bool) -> chess.Board:
    if fen is None:
        board = chess.Board(chess960=chess960)
    else:
        try:
            board = parse_fen(fen, chess960=chess960, strict=True)
        except FenError as error:
            raise InvalidParams("position.fen", str(error)) from None
    for text in moves or ():
        board.push(_parse_move(board, text, "position.moves"))
    return board


def _parse_move(board: chess.Board, text: str, field: str) -> chess.Move:
    try:
        move = board.parse_uci(text.lower())
    except ValueError:
        move = chess.Move.null()
    if not move:
        raise InvalidParams(field, f"illegal move {text[:20]!r}", move=text[:20])
    return move


def _search_moves(board: chess.Board, texts: list[str] | None) -> tuple[chess.Move, ...]:
    if texts is None:
        return ()
    moves = [_parse_move(board, text, "searchMoves") for text in texts]
    return tuple(dict.fromkeys(moves))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _same_id(a: Any, b: Any) -> bool:
    """Ids match by JSON type and value: 7 is not "7"."""
    return type(a) is type(b) and a == b


# -- output -------------------------------------------------------------------------------------


def _dumps(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":"))


def result_line(request_id: RequestId, result: dict[str, Any]) -> str:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "result": result})


def error_line(request_id: RequestId | None, code: int, message: str, data: dict[str, Any]) -> str:
    return _dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message, "data": data}})


def score_json(score: Score) -> dict[str, int]:
    return {"mate": score.mate} if score.mate is not None else {"cp": score.cp or 0}


def _uci(moves: tuple[chess.Move, ...]) -> list[str]:
    """Moves as the board made them: on a Chess960 board castling is king takes rook."""
    return [move.uci() for move in moves]


def info_params(request_id: RequestId, info: SearchInfo, board: chess.Board) -> dict[str, Any]:
    return {
        "id": request_id, "depth": info.depth, "seldepth": max(info.seldepth, info.depth),
        "multipv": info.multipv, "score": score_json(info.score), "nodes": info.nodes, "nps": info.nps,
        "timeMs": info.time, "pv": _uci(info.pv), "hashfull": info.hashfull, "tbhits": info.tbhits,
    }


def search_result(event: BestMove, lines_wanted: int, root_moves: tuple[chess.Move, ...]) -> dict[str, Any]:
    result = event.result
    best = result.best_move
    pv = result.pv or ((best,) if best is not None else ())
    return {
        "bestMove": best.uci() if best is not None else None,
        "ponderMove": result.ponder_move.uci() if best is not None and result.ponder_move is not None else None,
        "score": score_json(result.score),
        "depth": result.depth,
        "seldepth": max(result.seldepth, result.depth),
        "nodes": result.nodes,
        "timeMs": event.elapsed_ms,
        "ponderMs": event.ponder_ms,
        "pv": _uci(pv) if best is not None else [],
        "lines": _lines(result, lines_wanted, root_moves) if best is not None else [],
        "source": result.source,
        "stopped": event.stopped,
    }


def _lines(result: SearchResult, wanted: int, root_moves: tuple[chess.Move, ...]) -> list[dict[str, Any]]:
    """The final MultiPV lines, exactly `wanted` of them. A search stopped before its first
    iteration has none: the best move stands at depth 0, and other root moves fill the rest."""
    lines: list[dict[str, Any]] = [
        {"multipv": info.multipv, "depth": info.depth, "score": score_json(info.score), "pv": _uci(info.pv)}
        for info in sorted(result.lines, key=lambda info: info.multipv)[:wanted]
    ]
    if not lines and result.best_move is not None:
        pv = result.pv or (result.best_move,)
        lines.append({"multipv": 1, "depth": result.depth, "score": score_json(result.score), "pv": _uci(pv)})
    taken = {line["pv"][0] for line in lines if line["pv"]}
    spare = (move for move in root_moves if move.uci() not in taken)
    while len(lines) < wanted:
        move = next(spare, None)
        if move is None:
            break
        lines.append({"multipv": len(lines) + 1, "depth": 0, "score": score_json(result.score), "pv": [move.uci()]})
    return lines


def option_description(spec: OptionSpec) -> dict[str, Any]:
    option: dict[str, Any] = {"name": spec.name, "type": spec.type, "default": spec.default}
    if spec.type == "spin":
        option.update(min=spec.min, max=spec.max)
    elif spec.type == "combo":
        option["choices"] = list(spec.choices)
    return option


# -- the schema (`cb-async cnp-schema` prints it) ----------------------------------------------


def schema_text() -> str:
    """The JSON Schema of CNP as docs/cnp.schema.json holds it."""
    return json.dumps(json_schema(), indent=2) + "\n"
