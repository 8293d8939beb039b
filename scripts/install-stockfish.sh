#!/bin/sh
# Install Debian's Stockfish (the reference engine of `cb-async analysis-bench` and of the
# strength checks in docs/levels.md). Needs root, as apt-get does; does nothing when it is there.
set -eu
if command -v stockfish >/dev/null 2>&1 || [ -x /usr/games/stockfish ]; then
    exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stockfish
