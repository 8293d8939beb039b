"""What bot frameworks (lichess-bot, BotLi) call on python-chess's engines, on cb-async's.

lichess-bot's `lib/engine_wrapper.py` configures the engine, tells it who it plays
(`send_opponent_information`), plays the game with clocks and pondering, reports the result
(`send_game_result`) and quits. `cb_async.SimpleEngine` must take the same calls, and the UCI
and XBoard front ends must take what python-chess sends for them.
"""

from __future__ import annotations

import inspect
from typing import Any

import anyio
import chess
import chess.engine
import pytest

import cb_async
from cb_async.adapters.uci import UciAdapter
from cb_async.adapters.xboard import XBoardAdapter
from cb_async.commands import IsReady, Quit, SetOptions
from cb_async.embedded import Engine
from cb_async.events import Ready
from cb_async.search.levels import MAX_ELO
from cb_async.session import Session
from cb_async.simple import SimpleEngine
from fake_runner import FakeRunner

#: python-chess's `Protocol` members that belong to its subprocess transport (asyncio's
#: `SubprocessProtocol` callbacks, the line plumbing, the command queue), or to starting a
#: subprocess: an embedded engine has no subprocess, so it has none of them.
TRANSPORT_ONLY = frozenset({
    "connection_made", "connection_lost", "process_exited", "pipe_data_received", "pipe_connection_lost",
    "pause_writing", "resume_writing", "eof_received", "send_line", "line_received", "error_line_received",
    "communicate", "popen", "loop", "transport", "buffer", "command", "next_command", "initialized",
    "returncode",  # an annotation on the class; checked on an instance below
})

#: python-chess's `SimpleEngine` members of the same kind.
SIMPLE_TRANSPORT_ONLY = frozenset({"popen", "popen_uci", "popen_xboard", "communicate", "shutdown_event"})


def public_names(cls: type) -> set[str]:
    return {name for name in dir(cls) if not name.startswith("_")}


def test_the_engine_has_python_chess_protocols_public_surface() -> None:
    wanted = public_names(chess.engine.Protocol) - TRANSPORT_ONLY
    missing = {name for name in wanted if not hasattr(Engine, name)}
    assert missing == set()
    engine = Engine()
    for name in ("id", "options", "config", "target_config", "returncode"):
        assert hasattr(engine, name), name
    for name in ("initialize", "ping", "configure", "send_opponent_information", "play", "analyse", "analysis",
                 "send_game_result", "quit"):
        ours = inspect.signature(getattr(Engine, name))
        theirs = inspect.signature(getattr(chess.engine.Protocol, name))
        assert list(ours.parameters) == list(theirs.parameters), name
        for parameter in theirs.parameters.values():
            assert ours.parameters[parameter.name].default == parameter.default, (name, parameter.name)


def test_the_simple_engine_has_python_chess_simple_engines_public_surface() -> None:
    wanted = public_names(chess.engine.SimpleEngine) - SIMPLE_TRANSPORT_ONLY
    assert {name for name in wanted if not hasattr(SimpleEngine, name)} == set()


def test_a_lichess_bot_shaped_game_on_the_simple_engine() -> None:
    """lichess-bot's order of calls, with its arguments: configure, opponent, play with clocks
    and ponder, the result, quit."""
    opponent = chess.engine.Opponent(name="someone", title=None, rating=1234, is_engine=False)
    board = chess.Board()
    game = object()
    with cb_async.SimpleEngine({"Hash": 8}) as engine:
        assert engine.transport is None and not engine.returncode.done()
        assert engine.protocol.id["name"] == engine.id["name"]
        engine.configure({"Move Overhead": 100, "UCI_LimitStrength": True, "Level Follows Opponent": True})
        engine.send_opponent_information(opponent=opponent, engine_rating=1500)
        assert engine.engine.config["UCI_Opponent"] == "none 1234 human someone"
        clock = 20.0
        for _ in range(4):
            limit = chess.engine.Limit(white_clock=clock, black_clock=clock, white_inc=1, black_inc=1)
            result = engine.play(board, limit, game=game, ponder=True, info=chess.engine.INFO_ALL,
                                 draw_offered=False, root_moves=None)
            assert result.move is not None and result.move in board.legal_moves
            board.push(result.move)
            reply = next(iter(board.legal_moves))
            board.push(reply)
        engine.send_game_result(board, chess.BLACK, "White resigned")
        engine.send_game_result(board, None, "Game aborted", False)
        with pytest.raises(chess.engine.EngineError):
            engine.send_game_result(board, None, "bad {ending}")
        engine.ping()
        returncode = engine.returncode
    assert returncode.done() and returncode.result() == 0


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_returncode_is_awaitable_on_either_backend(backend: str) -> None:
    async def scenario() -> int:
        engine = await Engine().start()
        async with anyio.create_task_group() as tasks:
            codes: list[int] = []

            async def wait() -> None:
                codes.append(await engine.returncode)

            tasks.start_soon(wait)
            await engine.quit()
        return codes[0]

    assert anyio.run(scenario, backend=backend) == 0


class _Harness:
    """A front end's lines through a session on the fake runner: what search each `go` begins."""

    def __init__(self, adapter: Any) -> None:
        self.adapter = adapter
        self.runner = FakeRunner()
        self.marker_seen = False

    def sink(self, event: Any) -> list[Any]:
        if isinstance(event, Ready) and event.tag == "marker":
            self.marker_seen = True
            return []
        lines, followups = self.adapter.on_event(event)
        return list(followups)

    async def run(self, *lines: str) -> FakeRunner:
        session = Session(self.runner, self.sink)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(session.run)
            for line in lines:
                for command in self.adapter.receive(line, 0.0):
                    session.submit(command)
            session.submit(IsReady(tag="marker"))
            with anyio.fail_after(5):
                while not self.marker_seen:
                    await anyio.sleep(0)
            session.submit(Quit())
        return self.runner


async def test_uci_opponent_sets_the_level_of_the_next_search_when_asked() -> None:
    runner = await _Harness(UciAdapter()).run(
        "uci", "setoption name UCI_LimitStrength value true", "setoption name UCI_Elo value 1000",
        "setoption name Level Follows Opponent value true", "ucinewgame",
        "setoption name UCI_Opponent value GM 2900 human Magnus Carlsen", "position startpos", "go depth 1")
    assert [search.settings.elo for search in runner.searches] == [MAX_ELO]


async def test_xboard_rating_sets_the_level_of_the_next_search_when_asked() -> None:
    runner = await _Harness(XBoardAdapter()).run(
        "xboard", "protover 2", "option UCI_LimitStrength=1", "option UCI_Elo=1000", "option LevelFollowsOpponent=1",
        "new", "name someone", "rating 1500 1321", "computer", "sd 1", "go")
    assert [search.settings.elo for search in runner.searches] == [1321]


async def test_without_the_option_the_opponent_changes_nothing() -> None:
    runner = await _Harness(XBoardAdapter()).run(
        "xboard", "protover 2", "option UCI_LimitStrength=1", "option UCI_Elo=1000",
        "new", "rating 1500 1700", "sd 1", "go")
    assert [search.settings.elo for search in runner.searches] == [1000]


def test_uci_declares_uci_opponent_so_python_chess_sends_it() -> None:
    commands = UciAdapter().receive("setoption name UCI_Opponent value none none computer Some Bot", 0.0)
    assert commands == [SetOptions((("UCI_Opponent", "none none computer Some Bot"),))]

