#!/bin/bash
# GNOME Chess with cb-async as its UCI opponent (difficulty "hard", 2 minutes + 1 s a move),
# driven under Xvfb (docs/gui-compat.md): this drive plays White with the mouse, a random legal
# move each turn (scripts/gui/human_move.py, replayable), until the game ends. Exits non-zero
# when the engine misbehaves: an error line, anything on its stderr, a search with no
# bestmove or an illegal one, no move within 30 s, or an engine left running after GNOME Chess
# quits. Screenshots and logs go to $OUT (default /tmp/cb-gui-gnome-chess).
GUI=gnome-chess
DOCS_SHOTS="game-start game"
. "$(dirname "$0")/lib.sh"
gui_setup gnome-chess
# GNOME Chess reads engines from the user's engines.conf and its settings from GSettings,
# here the keyfile backend under $XDG_CONFIG_HOME.
mkdir -p "$XDG_CONFIG_HOME/gnome-chess" "$XDG_CONFIG_HOME/glib-2.0/settings"
cat >"$XDG_CONFIG_HOME/gnome-chess/engines.conf" <<CONF
[cb-async]
protocol=uci
binary=$ENGINE
CONF
cat >"$XDG_CONFIG_HOME/glib-2.0/settings/keyfile" <<CONF
[org/gnome/Chess]
opponent='cb-async'
play-as='white'
difficulty='hard'
duration=120
clock-type='fischer'
timer-increment=1
show-move-hints=false
width=800
height=700
CONF
export GSETTINGS_BACKEND=keyfile GSK_RENDERER=cairo

# The board at this window size: a8's top-left corner at (144, 93), squares of 64 pixels.
square() {
    file=$(( $(printf %d "'$(echo "$1" | cut -c1)") - 97 )); rank=$(echo "$1" | cut -c2)
    echo $((144 + file * 64 + 32)) $((93 + (8 - rank) * 64 + 32))
}

start_app gnome-chess
main=$(wait_window "to Move$" 30)
xdotool windowmove "$main" 0 0
wait_log '<< isready' 30
sleep 2
plies=0
while :; do
    move=$("$PY" "$ROOT/scripts/gui/human_move.py" "$LOG")
    case $move in over*) say "the game is over: ${move#over }"; break;; esac
    positions=$(count_log '<< position ')
    bests=$(count_log '>> bestmove ')
    xdotool mousemove $(square "${move:0:2}") click 1 sleep 0.3 mousemove $(square "${move:2:2}") click 1
    end=$(( $(date +%s) + 30 ))
    until [ "$(count_log '<< position ')" -gt "$positions" ] && [ "$(count_log '>> bestmove ')" -gt "$bests" ]; do
        # The engine's move may have ended the game: GNOME Chess then sends nothing more.
        [ "$(date +%s)" -le "$end" ] || { shot timeout-move; fail "no answer to $move within 30 s"; }
        sleep 0.2
    done
    plies=$((plies + 2))
    [ "$plies" = 12 ] && { sleep 0.5; shot game-start; }
    [ "$plies" -lt 300 ] || fail "no end after 300 plies"
done
sleep 2
shot game
xdotool mousemove 400 300 sleep 0.2 key ctrl+q   # the keys go to the window under the pointer
for _ in $(seq 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$APP_PID" 2>/dev/null && { shot quit-timeout; fail "GNOME Chess did not quit"; }
check_engine 10
"$PY" "$ROOT/scripts/gui/check_uci_log.py" "$LOG"
say "OK"
