"""docs/cnp.md's error table against the real engine (its sessions are generated blocks,
checked with the others in test_docs)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conformance.engine_process import EngineProcess

CNP_MD = Path(__file__).resolve().parent.parent / "docs" / "cnp.md"


def request(request_id: Any, method: str, params: dict[str, Any] | None = None) -> str:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message)


#: An example of every error, each sent when the previous one has been answered; a search for
#: id 50 runs (infinite) from its request to its cancel, for the errors that need one.
EXAMPLES: list[tuple[str, int]] = [
    ("not json", -32700),
    ("[" + request(1, "engine/hello") + "]", -32600),
    (json.dumps({"jsonrpc": "2.0", "id": 2}), -32600),
    (json.dumps({"jsonrpc": "1.0", "id": 3, "method": "engine/hello"}), -32600),
    (json.dumps({"jsonrpc": "2.0", "id": 1.5, "method": "engine/hello"}), -32600),
    ("x" * ((1 << 20) + 1), -32600),
    (request(4, "engine/nope"), -32601),
    (request(5, "engine/search", {"limits": {"depth": 0}}), -32602),
    (request(6, "engine/search", {"position": {"moves": ["e2e5"]}}), -32602),
    (request(7, "engine/setOptions", {"options": {"Hash": 0}}), -32602),
    (request(8, "engine/stop", {"id": 99}), -32002),
    (request(50, "engine/search", {"info": False}), 0),
    (request(50, "engine/search", {"info": False}), -32600),
    (request(9, "engine/search", {"info": False}), -32001),
    (request(10, "engine/ponderHit", {"id": 50}), -32003),
    (request(11, "engine/cancel", {"id": 50}), -32800),
]


def documented_data() -> dict[int, set[str]]:
    """code -> the `data` members the error table names."""
    table = CNP_MD.read_text().split("## Errors", 1)[1]
    rows = re.findall(r"^\| (-\d+) \|.*\| ([^|]*) \|$", table, re.M)
    assert rows, "no error table"
    return {int(code): set(re.findall(r"`(\w+)`", data)) for code, data in rows}


def test_the_error_tables_data_column_is_what_the_engine_sends() -> None:
    seen: dict[int, set[str]] = {}
    with EngineProcess("--protocol", "cnp") as engine:
        for line, code in EXAMPLES:
            engine.send(line)
            if code == 0:
                continue  # the search: it answers when cancelled
            answers = [json.loads(engine.expect(r"\{.*", timeout=10).text)]
            if code == -32800:  # the cancelled search's error and the cancel's {} (either order)
                answers.append(json.loads(engine.expect(r"\{.*", timeout=10).text))
            errors = [answer["error"] for answer in answers if "error" in answer]
            assert [error["code"] for error in errors] == [code], (line[:80], answers)
            assert isinstance(errors[0]["data"], dict)
            seen.setdefault(code, set()).update(errors[0]["data"])
        engine.close_input()
        assert engine.remaining_output() == []
    documented = documented_data()
    assert set(documented) == set(seen), "the table lists other codes than the examples reach"
    for code, members in seen.items():
        assert documented[code] == members, f"{code}: the table says {documented[code]}, the engine sends {members}"
