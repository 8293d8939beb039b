"""CNP notifications are not run and not answered on stdout, but noted on stderr."""

from __future__ import annotations

import time

from conformance.engine_process import EngineProcess


def test_notification_is_noted_on_stderr_only() -> None:
    with EngineProcess("--protocol", "cnp") as engine:
        engine.send('{"jsonrpc":"2.0","method":"engine/search","params":{"limits":{"depth":1}}}')
        engine.send('{"jsonrpc":"2.0","id":1,"method":"engine/newGame"}')
        engine.expect(r'\{"jsonrpc":"2\.0","id":1,"result":\{\}\}')
        engine.close_input()
        assert engine.remaining_output() == []
        assert engine.wait_exit() == 0
        deadline = time.monotonic() + 2
        while not any("engine/search" in line for line in engine.stderr_lines) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert any("notification" in line and "engine/search" in line for line in engine.stderr_lines)
