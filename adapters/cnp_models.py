"""The CNP messages as pydantic models: they validate what clients send and describe it all.

The same classes do two jobs, so the schema cannot drift from the code. The `*Params` models
validate incoming `params` (strict types: a fraction is not an integer, `true` is not `1`;
unknown members are ignored; `null` counts as absent). The result, notification and error
models describe what the engine writes; the adapter builds its output as plain dicts (faster
on the `engine/info` path) and the tests check every line it writes against these models.
`json_schema()` turns them into the document `cb-async cnp-schema` prints.

Only the CNP path imports this module: pydantic's import costs more than the whole UCI
start-up budget.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

PROTOCOL = "cnp/1"
MAX_MULTIPV = 256

Millis = Annotated[StrictInt, Field(ge=0)]
Count = Annotated[StrictInt, Field(ge=1)]
RequestId = Annotated[Union[StrictInt, StrictStr], Field(union_mode="left_to_right")]


class _Params(BaseModel):
    """Incoming: strict, camelCase on the wire, unknown members ignored."""

    # Each is built when its first request comes, not all at start-up.
    model_config = ConfigDict(strict=True, extra="ignore", alias_generator=to_camel, frozen=True, defer_build=True)


class _Output(BaseModel):
    """Outgoing: camelCase on the wire, nothing but the members described."""

    # Built on first use: the engine itself never validates its own output, so it should not
    # pay for building these at start-up.
    model_config = ConfigDict(strict=True, extra="forbid", alias_generator=to_camel, frozen=True, defer_build=True)


# -- params -----------------------------------------------------------------------------------


class ClientInfo(_Params):
    name: StrictStr | None = None
    version: StrictStr | None = None


class HelloParams(_Params):
    """`engine/hello`. `protocol` is `cnp/1` or `cnp/1.N`; another major version is refused."""

    protocol: StrictStr | None = None
    client: ClientInfo | None = None


class SetOptionsParams(_Params):
    """`engine/setOptions`: option names (case-insensitive) to JSON values."""

    options: dict[StrictStr, Any]


class Position(_Params):
    """The start position (FEN, X-FEN or Shredder-FEN; standard when absent) and the moves
    played from it, in UCI notation."""

    fen: StrictStr | None = None
    moves: list[StrictStr] | None = None


class Clock(_Params):
    white_ms: Millis | None = None
    black_ms: Millis | None = None
    white_inc_ms: Millis | None = None
    black_inc_ms: Millis | None = None
    moves_to_go: Count | None = None


class SearchLimits(_Params):
    """Every member optional; the first limit reached ends the search. None at all: infinite."""

    time_ms: Millis | None = None
    depth: Count | None = None
    nodes: Count | None = None
    mate: Count | None = None
    infinite: StrictBool | None = None
    clock: Clock | None = None


class SearchParams(_Params):
    """`engine/search`."""

    position: Position | None = None
    chess960: StrictBool | None = None
    limits: SearchLimits | None = None
    multi_pv: Annotated[StrictInt, Field(ge=1, le=MAX_MULTIPV)] | None = None
    search_moves: Annotated[list[StrictStr], Field(min_length=1)] | None = None
    ponder: StrictBool | None = None
    info: StrictBool | None = None


class SearchIdParams(_Params):
    """`engine/stop`, `engine/cancel`, `engine/ponderHit`: the id of the search request."""

    id: RequestId


class NoParams(_Params):
    """`engine/newGame`, `engine/shutdown`: no params (any given are ignored)."""


# -- results ----------------------------------------------------------------------------------


class CpScore(_Output):
    """Centipawns from the side to move's point of view."""

    cp: StrictInt


class MateScore(_Output):
    """Moves to mate; negative when the side to move is being mated, 0 when it is mated."""

    mate: StrictInt


Score = Union[CpScore, MateScore]


class EngineInfo(_Output):
    name: StrictStr
    version: StrictStr
    author: StrictStr


class Levels(_Output):
    """Elo range of playing levels; 0/0 means the engine has none."""

    min_elo: StrictInt
    max_elo: StrictInt


class Capabilities(_Output):
    ponder: StrictBool
    multi_pv: StrictInt
    chess960: StrictBool
    syzygy: StrictBool
    book: StrictBool
    levels: Levels


class OptionDescription(_Output):
    """One option `engine/setOptions` accepts, with UCI's types. `min`/`max` for spins,
    `choices` for combos; a button's `default` is null."""

    name: StrictStr
    type: Literal["check", "spin", "combo", "button", "string"]
    default: Any
    min: StrictInt | None = None
    max: StrictInt | None = None
    choices: list[StrictStr] | None = None


class HelloResult(_Output):
    protocol: StrictStr
    engine: EngineInfo
    capabilities: Capabilities
    options: list[OptionDescription]
    max_time_ms: StrictInt


class SetOptionsResult(_Output):
    """The effective value of every option named, by canonical name (buttons: null)."""

    options: dict[StrictStr, Any]


class EmptyResult(_Output):
    """`{}`: the answer of newGame, ponderHit, stop, cancel and shutdown."""


class Line(_Output):
    """The final state of one MultiPV line."""

    multipv: StrictInt
    depth: StrictInt
    score: Score
    pv: list[StrictStr]


class SearchResultModel(_Output):
    """The response of `engine/search`: every member is always present."""

    best_move: StrictStr | None
    ponder_move: StrictStr | None
    score: Score
    depth: StrictInt
    seldepth: StrictInt
    nodes: StrictInt
    time_ms: StrictInt
    ponder_ms: StrictInt
    pv: list[StrictStr]
    lines: list[Line]
    source: Literal["search", "book", "tablebase"]
    stopped: Literal["limit", "stop", "maxTime"]


class InfoParams(_Output):
    """`engine/info`: one completed iteration of one MultiPV line of search `id`."""

    id: RequestId
    depth: StrictInt
    seldepth: StrictInt | None = None
    multipv: StrictInt
    score: Score
    nodes: StrictInt
    nps: StrictInt | None = None
    time_ms: StrictInt
    pv: list[StrictStr]
    hashfull: StrictInt | None = None
    tbhits: StrictInt | None = None


class ErrorObject(_Output):
    """`code` from the table of the protocol; `data.field` (a dotted path from the root of
    params) in -32602 errors, with `data.move` or `data.option` when one is to blame."""

    code: StrictInt
    message: StrictStr
    data: dict[StrictStr, Any]


# -- envelopes --------------------------------------------------------------------------------


class Request(_Output):
    """Client to engine. Without `id` it is a notification, which the engine does not run."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    method: StrictStr
    params: dict[StrictStr, Any] | None = None


class ResultResponse(_Output):
    jsonrpc: Literal["2.0"]
    id: RequestId
    result: dict[StrictStr, Any]


class ErrorResponse(_Output):
    jsonrpc: Literal["2.0"]
    id: RequestId | None
    error: ErrorObject


class InfoNotification(_Output):
    jsonrpc: Literal["2.0"]
    method: Literal["engine/info"]
    params: InfoParams


#: Every method: its params model and its result model.
METHODS: dict[str, tuple[type[BaseModel], type[BaseModel]]] = {
    "engine/hello": (HelloParams, HelloResult),
    "engine/setOptions": (SetOptionsParams, SetOptionsResult),
    "engine/newGame": (NoParams, EmptyResult),
    "engine/search": (SearchParams, SearchResultModel),
    "engine/ponderHit": (SearchIdParams, EmptyResult),
    "engine/stop": (SearchIdParams, EmptyResult),
    "engine/cancel": (SearchIdParams, EmptyResult),
    "engine/shutdown": (NoParams, EmptyResult),
}

ERRORS: dict[int, str] = {
    -32700: "the line is not JSON (id null)",
    -32600: "not a valid request: a batch, no string method, a bad jsonrpc or id, a line over 1 MiB, "
            "or the running search's id reused",
    -32601: "unknown method",
    -32602: "invalid params; data.field is the dotted path of the culprit",
    -32001: "busy: a search is running",
    -32002: "no such search",
    -32003: "that search is not pondering",
    -32800: "cancelled",
}


def json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of CNP 1: every message under `$defs`, a line is any
    of the envelopes, and `x-cnp-methods` pairs each method with its params and result."""
    from pydantic.json_schema import models_json_schema  # only `cnp-schema` and the tests need it

    models: list[type[BaseModel]] = [Request, ResultResponse, ErrorResponse, InfoNotification]
    for params, result in METHODS.values():
        models.extend((params, result))
    unique = list(dict.fromkeys(models))
    _, top = models_json_schema([(model, "validation") for model in unique], ref_template="#/$defs/{model}")

    def ref(model: type[BaseModel]) -> dict[str, str]:
        return {"$ref": f"#/$defs/{model.__name__}"}

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "CNP 1, the Chess Node Protocol",
        "description": "JSON-RPC 2.0, one JSON value per line on stdio. A line is one of these messages.",
        "anyOf": [ref(Request), ref(ResultResponse), ref(ErrorResponse), ref(InfoNotification)],
        "x-cnp-methods": {
            name: {"params": ref(params), "result": ref(result)} for name, (params, result) in METHODS.items()
        },
        "x-cnp-errors": {str(code): meaning for code, meaning in ERRORS.items()},
        "$defs": top["$defs"],
    }
