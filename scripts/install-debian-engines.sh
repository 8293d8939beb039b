#!/bin/sh
# Install engines from Debian's own packages, as /usr/games/NAME: by default the three the
# project measures against (stockfish: the strength yardstick and the analysis benchmark's
# reference; fairy-stockfish and hoichess: the conformance results), or only those named:
#   sh scripts/install-debian-engines.sh stockfish
# An engine already installed is left alone. Needs root (or sudo); the test suite needs none.
set -eu
if [ "$#" -eq 0 ]; then
    set -- stockfish fairy-stockfish hoichess
fi
missing=""
for engine in "$@"; do
    [ -x "/usr/games/$engine" ] || missing="$missing $engine"
done
if [ -z "$missing" ]; then
    echo "install-debian-engines.sh: already installed: $*"
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
fi
$SUDO apt-get update
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
