#!/bin/sh
# Rerun the results table of docs/conformance.md: the conformance checks against the engines
# Debian ships (install them with scripts/install-debian-engines.sh) and against cb-async.
# Prints each engine's full report; the last two lines of each are its row of the table.
set -u
cd "$(dirname "$0")/.."
python3 dev.py engine --version >/dev/null  # sets up .venv on a fresh clone
CB=.venv/bin/cb-async
for run in \
    "/usr/games/stockfish|uci" \
    "/usr/games/fairy-stockfish|uci" \
    "/usr/games/fairy-stockfish|xboard" \
    "/usr/games/hoichess|xboard" \
    "$CB|uci" \
    "$CB|xboard"; do
    engine=${run%|*}
    protocol=${run#*|}
    echo "== $CB conformance --engine $engine --protocol $protocol"
    "$CB" conformance --engine "$engine" --protocol "$protocol"
    echo
done
