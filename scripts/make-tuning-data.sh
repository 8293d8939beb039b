#!/usr/bin/env bash
# Make the evaluation's tuning data set from scratch: games, then quiet positions labelled by
# Debian's Stockfish. Nothing is downloaded. Usage: scripts/make-tuning-data.sh [OUT_DIR]
#
# 1. Games: Stockfish against itself at small, unequal node budgets (each pair plays the 64
#    openings of cb_async/data/openings.epd with both colours; unequal budgets give decisive
#    and unbalanced positions too), a few seconds a game, two at a time (node budgets make
#    the games the same however many run at once).
# 2. Labels: 12,000 quiet positions past the opening (a random sample), each evaluated by
#    Stockfish at 5,000 nodes (about 25 ms a position).
# Then fit: cb-async tune fit OUT_DIR/positions.txt (prints the new structure.WEIGHTS).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-tuning-data}"
mkdir -p "$OUT"
sh scripts/install-debian-engines.sh stockfish
CB="python3 dev.py"
SF=/usr/games/stockfish
for pair in "300 1000" "600 2000" "1000 3000" "1500 1500" "3000 3000"; do
    set -- $pair
    $CB match --engine cmd=$SF name=sf$1 nodes=$1 --engine cmd=$SF name=sf$2 nodes=$2 \
        --tc 60+1 --games 128 --seed 3 --concurrency 2 --pgn "$OUT/games.pgn" > "$OUT/match-$1-$2.log"
done
$CB tune label --pgn "$OUT/games.pgn" --out "$OUT/positions.txt" --nodes 5000 --max-positions 12000
wc -l "$OUT/positions.txt"
