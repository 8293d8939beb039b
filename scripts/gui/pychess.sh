#!/bin/bash
# PyChess with cb-async twice, once as a UCI engine and once as a CECP engine, driven under Xvfb
# (docs/gui-compat.md). 1. A game from a PGN file with PyChess's hint (UCI) and spy (CECP)
# analysers running; the engine manager with the UCI engine's options. 2. A blitz game, the UCI
# engine with White against the CECP one, from the same opening. Exits non-zero when the engine
# misbehaves: an error or illegal-move line from it, anything on its stderr, an engine error in
# PyChess's own log, a game that does not finish or ends on time or by an illegal move, a
# move the saved game cannot replay, or an engine left running after PyChess quits.
# Screenshots and logs go to $OUT (default /tmp/cb-gui-pychess).
GUI=pychess
DOCS_SHOTS="analysis engines thinking game"
. "$(dirname "$0")/lib.sh"
gui_setup pychess
make_engine cb-async-uci engine-uci
make_engine cb-async-cecp engine-cecp
config=$XDG_CONFIG_HOME/pychess
mkdir -p "$config"
# The engines PyChess knows: found again at start-up ("recheck"), and listed by name, so the
# players' list reads Human Being, cb-async-cecp.sh, cb-async-uci.sh, then the others found.
cat >"$config/engines.json" <<JSON
[{"name": "cb-async-uci.sh", "command": "$OUT/cb-async-uci.sh", "protocol": "uci", "recheck": true,
  "country": "unknown", "comment": "", "level": 20, "analyze": true},
 {"name": "cb-async-cecp.sh", "command": "$OUT/cb-async-cecp.sh", "protocol": "xboard", "protover": 2,
  "recheck": true, "country": "unknown", "comment": "", "level": 20, "analyze": true}]
JSON
cat >"$OUT/opening.pgn" <<PGN
[Event "cb-async in PyChess"]
[White "?"]
[Black "?"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *
PGN
# PyChess's settings: the analysers are chosen by the md5 of the engine's file.
settings() {
    cat >"$config/config" <<CONF
[General]
dont_show_externals_at_startup = True
show_tip_at_startup = False
usesounds = False
ana_combobox = $(md5sum <"$OUT/cb-async-uci.sh" | cut -d' ' -f1)
inv_ana_combobox = $(md5sum <"$OUT/cb-async-cecp.sh" | cut -d' ' -f1)
$1
CONF
}
# Open the PGN given on PyChess's command line: it opens as a database; a double click on its
# game brings up the dialog that starts it, with the players and clock of the settings.
start_game() {
    start_app pychess --no-version-check --log-debug "$OUT/opening.pgn"
    main=$(wait_window "^Welcome - PyChess$" 60)
    xdotool windowmove "$main" 0 0
    sleep 8   # the engines are discovered (checked) before a game can start
    xdotool mousemove --window "$main" 60 150 click 1 sleep 0.15 click 1
    dialog=$(wait_window "^Enter Game$" 20)
    sleep 1
    shot "$1" "$dialog" 500
    # Start Game: the button at the dialog's bottom right (its height grows with engine players).
    height=$(xdotool getwindowgeometry "$dialog" | sed -n 's/.*Geometry: [0-9]*x\([0-9]*\).*/\1/p')
    xdotool mousemove --window "$dialog" 521 $((height - 27)) click 1
}
quit_pychess() {
    xdotool key --window "$main" ctrl+q
    for _ in $(seq 150); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$APP_PID" 2>/dev/null; then
        # PyChess 1.0.3 under Python 3.11 cannot end a UCI engine: UCIEngine.end raises
        # "wait_signal.cancel() takes 1 positional argument but 2 were given" and the quit
        # stops there. Its engines then see PyChess die, which they must survive too.
        grep -q "wait_signal.cancel() takes 1 positional argument" "$OUT/app.log" ||
            { shot quit-timeout; fail "PyChess did not quit"; }
        say "PyChess's own bug on quit (UCIEngine.end: wait_signal.cancel); ending PyChess with SIGTERM"
        kill "$APP_PID"
        for _ in $(seq 50); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.1; done
    fi
    check_engine 10
    # PyChess's warnings about an engine (its DEBUG lines echo the engine's output).
    bad=$(grep -hE "(WARNING|ERROR|CRITICAL): .*(illegal|died|crash|[Ee]rror)" "$XDG_DATA_HOME"/pychess/*.log |
        grep -v "is not in PyChess predefined known engines list" |
        grep -v "wait_signal.cancel() takes 1 positional argument" || true)
    [ -z "$EXPECTED_COMPLAINTS" ] || bad=$(printf '%s\n' "$bad" | grep -v '__parseLine: illegal move: line="Illegal move: ' || true)
    [ -z "$bad" ] || fail "PyChess's log: $bad"
    "$PY" "$ROOT/scripts/gui/check_uci_log.py" "$OUT/engine-uci.log"
    mv "$OUT/app.log" "$OUT/app-$1.log"
    rm -f "$XDG_DATA_HOME"/pychess/*.log
}

say "1. analysis: hint (UCI) and spy (CECP) on a game from a PGN file"
settings "hint_mode = True
spy_mode = True
infinite_analysis = True
analyzer_check = True
inv_analyzer_check = True
whiteplayercombobox = 0
blackplayercombobox = 0"
# The spy analyser is set up with the side to move flipped and then sent the game's moves from
# the start (illegal on that board), and its analysis is stopped with an empty board:
# conformance/transcripts/xboard/pychess_stop_analysis.txt. PyChess only logs the answers.
EXPECTED_COMPLAINTS='>> (Illegal move: [a-h][1-8][a-h][1-8]|tellusererror Illegal position: 8/8/8/8/8/8/8/8 )'
start_game enter-game
wait_log '<< go infinite' 30 "$OUT/engine-uci.log"
wait_log '<< analyze' 30 "$OUT/engine-cecp.log"
wait_log '>> info depth 8 ' 90 "$OUT/engine-uci.log"
xdotool mousemove --window "$main" 50 469 click 1   # the Hints tab: both analysers' lines
sleep 2
shot analysis
# Edit -> Engines: the engine manager, with the chosen engine's options.
xdotool key --window "$main" F10 Right Down Down Down Return
manager=$(wait_window "^Manage engines$|^Engines$" 10)
sleep 1
# The UCI engine in the list, then its Options tab.
xdotool mousemove --window "$manager" 90 49 click 1 sleep 0.5 mousemove --window "$manager" 330 28 click 1
sleep 1
shot engines "$manager" 640
xdotool mousemove --window "$manager" 438 389 click 1   # Cancel
sleep 1
quit_pychess analysis
EXPECTED_COMPLAINTS=

say "2. a blitz game, 1 min + 1 s: cb-async by UCI (White) against cb-async by CECP"
settings "analyzer_check = False
inv_analyzer_check = False
whiteplayercombobox = 2
blackplayercombobox = 1
blitzradio = True
ngblitz min = 1
ngblitz gain = 1"
start_game new-game
wait_log '<< go wtime' 30 "$OUT/engine-uci.log"
sleep 10
shot thinking
# The game's end, in PyChess's own log, at most 7 minutes: reason 29 is checkmate; 14-16 and
# 18-22 draws, 26 and 30-32 other wins (Utils/const.py). A flag (17, 27), a disconnection (28)
# or an engine's death (39-41) is the engine's fault.
end=$(( $(date +%s) + 420 ))
while ! reason=$(grep -ho "gamenanny.game_ended: reason=[0-9]*" "$XDG_DATA_HOME"/pychess/*.log | grep -o "[0-9]*$"); do
    [ "$(date +%s)" -le "$end" ] || { shot timeout-game; fail "the game did not end within 7 minutes"; }
    sleep 1
done
sleep 2
case $reason in
    14|15|16|18|19|20|21|22|26|29|30|31|32) say "the game ended normally (PyChess's reason $reason)";;
    *) shot game; fail "the game ended by PyChess's reason $reason (a flag, a disconnection, an engine's death?)";;
esac
shot game
quit_pychess game
say "OK"
