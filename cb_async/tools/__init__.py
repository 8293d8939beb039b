"""Commands for developers and testers: the `cb-async` subcommands (bench, perft, latency, match,
stress, cnp-schema; `cb_async.cli.SUBCOMMANDS` lists them) and `python -m cb_async.tools.docs`,
which rewrites the docs' generated blocks.

Nothing in the engine imports from here; these import whatever they measure.
"""
