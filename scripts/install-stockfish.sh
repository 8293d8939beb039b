#!/usr/bin/env bash
# Install the strength yardstick: Debian's Stockfish (15.1 on Debian 12), as /usr/games/stockfish.
#
# The strength figures in docs/strength.md and docs/levels.md are measured against it, and
# the tuning data (scripts/make-tuning-data.sh) is labelled by it. Needs root (or sudo) and
# Debian's package archive; nothing else is downloaded.
set -euo pipefail
if [ -x /usr/games/stockfish ]; then
    echo "stockfish is installed: $(/usr/games/stockfish <<< quit | head -1)"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends stockfish
echo "installed: $(/usr/games/stockfish <<< quit | head -1)"
