"""Commands for developers and testers: the `cb-async` subcommands (bench, perft, latency, match,
stress, cnp-schema, analyse, analysis-bench; `cb_async.cli.SUBCOMMANDS` lists them) and
`python -m cb_async.tools.docs`, which rewrites the docs' generated blocks. (`analyse` is for
users too: a thin shell over the library's `cb_async.analysis`.)

Nothing in the engine imports from here; these import whatever they measure.
"""
