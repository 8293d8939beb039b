"""Lichess's analysis board, served by a local engine: `cb-async lichess-engine`.

Lichess lets a user plug their own engine into the analysis board (the external-engine API):
the provider registers the engine, long-polls Lichess's broker for work and streams UCI `info`
lines back. `work` checks a job, `engines` runs it on cb-async or any UCI engine, `api` speaks
HTTP, `provider` ties them together, `command` is the command line, and `broker` is a local
stand-in for Lichess's broker (for tests and `--measure`). Needs the `lichess` extra (httpx).
"""
