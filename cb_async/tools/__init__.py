"""The `cb-async` subcommands users run (analyse, bench, perft, latency, match, conformance,
cnp-schema; `cb_async.cli.SUBCOMMANDS` lists them). `analyse` is a thin shell over the library's
`cb_async.analysis`; `conformance` is the `gui_habits` package. The tools that only work in a
clone (the docs generator, tune, stress, analysis-bench) are the repository's `devtools/`.

Nothing in the engine imports from here; these import whatever they measure.
"""
