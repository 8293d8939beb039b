#!/bin/sh
# Install the engines that docs/conformance.md's results table was measured against, from
# Debian's own packages: stockfish (UCI), fairy-stockfish (UCI and XBoard) and hoichess (XBoard).
# Run as root (or through sudo). The test suite does not need them.
set -eu
if [ "$(id -u)" -ne 0 ]; then
    echo "install-debian-engines.sh: run as root (apt-get needs it)" >&2
    exit 2
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends stockfish fairy-stockfish hoichess
