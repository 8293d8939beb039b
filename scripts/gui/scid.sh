#!/bin/bash
# Scid with cb-async as its analysis engine, driven under Xvfb (docs/gui-compat.md): Scid
# starts engine 1 when it opens; its analysis pane is started on the start position, MultiPV
# raised to 3 with the pane's spin box, a move played on the board into the running analysis,
# and the pane closed, which ends the engine the way Scid does (`stop`, `quit`, both pipes
# closed); then Scid quits. Exits non-zero when the engine misbehaves: an error line,
# anything on its stderr, a search with no bestmove or an illegal one, or an engine left
# running after Scid quits. Screenshots and logs go to $OUT (default /tmp/cb-gui-scid).
GUI=scid
DOCS_SHOTS="analysis analysis-e4"
. "$(dirname "$0")/lib.sh"
gui_setup scid
version=$(dpkg-query -W -f '${Version}' scid | sed 's/^[0-9]*://; s/^\([0-9]*\.[0-9]*\).*/\1/')
config=$HOME/.scid$version/config
mkdir -p "$config"
cat >"$config/engines.dat" <<CONF
# Analysis engines list file for Scid with UCI support

engine {
  Name cb-async
  Cmd  $ENGINE
  Args {}
  Dir  $OUT
  Elo  0
  Time 0
  URL  {}
  UCI 1
  UCIoptions {}
}
CONF
# Scid's main window at its default size under Xvfb (no window manager): the board's
# a8 corner at (19, 84), squares of 45 pixels; the analysis pane at the top right.
square() {
    file=$(( $(printf %d "'$(echo "$1" | cut -c1)") - 97 )); rank=$(echo "$1" | cut -c2)
    echo $((19 + file * 45 + 22)) $((84 + (8 - rank) * 45 + 22))
}
start_app scid
main=$(wait_window "^Scid" 60)
wait_log '>> uciok' 30   # Scid starts engine 1 by itself, but not its analysis
sleep 2
xdotool mousemove 334 177 click 1   # the tip of the day: Close
sleep 1
xdotool mousemove 505 43 click 1    # the "Analysis: cb-async" tab
sleep 1
xdotool mousemove 436 283 click 1   # start the analysis
wait_log '<< go infinite' 30
# MultiPV 3 with the spin box's up arrow, twice.
xdotool mousemove 631 278 click 1 sleep 0.5 click 1
wait_log '<< setoption name MultiP[Vv] value 3' 20   # Scid writes MultiPv
wait_log '>> info .*multipv 3 ' 30
sleep 6
shot analysis
xdotool mousemove $(square e2) click 1 sleep 0.3 mousemove $(square e4) click 1
wait_log '<< position .*moves e2e4' 20
sleep 6
shot analysis-e4
# Close the analysis pane (its tab's cross): Scid writes `stop` and `quit` and closes both
# pipes at once, so the engine may see its output closed before it reads them. Then Scid
# itself: File, Exit (its last item).
xdotool mousemove 431 43 click 1
wait_engines_gone 15
xdotool mousemove 19 14 click 1 sleep 1 mousemove 19 208 click 1
sleep 2
shot quit
xdotool mousemove 448 383 click 1   # "Do you really want to exit Scid?" (the game has e4): Yes
for _ in $(seq 100); do kill -0 "$APP_PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$APP_PID" 2>/dev/null && { shot quit-timeout; fail "Scid did not quit"; }
check_engine 10
"$PY" "$ROOT/scripts/gui/check_uci_log.py" "$LOG"
say "OK"
