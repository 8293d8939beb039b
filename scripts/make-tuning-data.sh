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
# Then fit: python3 dev.py tune fit OUT_DIR/positions.txt (prints the new structure.WEIGHTS).
#
# The sizes are set by the environment, for the larger set that fitting the piece-square
# tables needs (`python3 dev.py tune fit --tables`, about 800 weights where the structure has 20):
#   PAIRS (the node budgets that meet, "A B" pairs separated by commas; the same pair plays
#   the same games, so more positions need more pairs), POSITIONS (default 12000), NODES
#   (Stockfish's nodes per label, default 5000), JOBS (games at a time, default 2).
# The table set of docs/strength.md:
#   PAIRS="300 1000,600 2000,1000 3000,1500 1500,3000 3000,400 400,500 1500,700 700,800 2500,
#   900 900,1200 1200,1200 4000,2000 2000,2000 6000,2500 2500,4000 4000,5000 5000,6000 6000"
#   POSITIONS=120000 NODES=2000 JOBS=1
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-tuning-data}"
PAIRS="${PAIRS:-300 1000,600 2000,1000 3000,1500 1500,3000 3000}"
POSITIONS="${POSITIONS:-12000}"
NODES="${NODES:-5000}"
JOBS="${JOBS:-2}"
mkdir -p "$OUT"
sh scripts/install-debian-engines.sh stockfish
CB="python3 dev.py"
SF=/usr/games/stockfish
IFS=, read -r -a pairs <<< "$PAIRS"
for pair in "${pairs[@]}"; do
    set -- $pair
    $CB match --engine cmd=$SF name=sf$1 nodes=$1 --engine cmd=$SF name=sf$2 nodes=$2 \
        --tc 60+1 --games 128 --seed 3 --concurrency "$JOBS" --pgn "$OUT/games.pgn" > "$OUT/match-$1-$2.log"
done
$CB tune label --pgn "$OUT/games.pgn" --out "$OUT/positions.txt" --nodes "$NODES" --max-positions "$POSITIONS"
wc -l "$OUT/positions.txt"
