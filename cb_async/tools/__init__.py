"""Commands for developers and testers: bench, perft, latency, match, stress and their helpers.

Nothing in the engine imports from here; these import whatever they measure.
"""
