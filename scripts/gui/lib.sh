# Shared by the GUI drives in this folder (sourced, not run): a virtual display, the engine
# wrapped so that its log and stderr are kept, screenshots, waiting on windows, and the checks
# that turn an engine's misbehaviour into a non-zero exit.
#
# A drive script sets GUI (its name), sources this file, calls `gui_setup PACKAGE...`, and then
# drives the program. Everything it writes goes to $OUT (default /tmp/cb-gui-$GUI): the engine's
# log (engine.log, every line in and out), its stderr, full-size screenshots, and small ones
# (NAME-small.png). With GUI_DOCS=1 the small screenshots named in $DOCS_SHOTS are also copied
# to docs/gui/GUI-NAME.png, for docs/gui-compat.md.
set -eu
export PATH="$PATH:/usr/games"

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-/tmp/cb-gui-$GUI}
CB=$ROOT/.venv/bin/cb-async
PY=$ROOT/.venv/bin/python
ENGINE=$OUT/cb-async.sh
LOG=$OUT/engine.log
XVFB_PID=
CLEANUP_PIDS=

# xdotool's keys sent to a window warn when no window has the focus (there is no window manager).
xdotool() { command xdotool "$@" 2> >(grep -v XGetInputFocus >&2); }
say() { printf '%s: %s\n' "$GUI" "$*" >&2; }
fail() { say "FAIL: $*"; exit 1; }

cleanup() {
    for pid in $CLEANUP_PIDS; do kill "$pid" 2>/dev/null || true; done
    [ -n "$XVFB_PID" ] && kill "$XVFB_PID" 2>/dev/null || true
}

# Install the Debian packages that are missing (the drives need root or sudo for that).
need_packages() {
    missing=
    for package in "$@"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing="$missing $package"
    done
    [ -z "$missing" ] && return 0
    say "installing$missing"
    sudo_=; [ "$(id -u)" = 0 ] || sudo_=sudo
    $sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >&2
}

# The display, the engine and the output folder. The engine command is a small script, so
# that GUIs which take a bare file name (no arguments) still run it with --log.
gui_setup() {
    need_packages xvfb x11-utils xdotool imagemagick "$@"
    (cd "$ROOT" && python3 dev.py engine --version >/dev/null)
    rm -rf "$OUT"; mkdir -p "$OUT/home"
    export HOME=$OUT/home XDG_CONFIG_HOME=$OUT/home/.config XDG_DATA_HOME=$OUT/home/.local/share
    export XDG_CACHE_HOME=$OUT/home/.cache NO_AT_BRIDGE=1 GTK_A11Y=none
    make_engine cb-async engine
    trap cleanup EXIT
    trap 'exit 130' INT TERM
    # Xvfb picks a free display itself and writes its number on descriptor 3; another one
    # starting at the same moment can take it first, so a failed start is tried again.
    for _ in 1 2 3; do
        : >"$OUT/display"
        Xvfb -displayfd 3 -screen 0 1280x960x24 -nolisten tcp 3>"$OUT/display" >"$OUT/xvfb.log" 2>&1 &
        XVFB_PID=$!
        for _ in $(seq 100); do [ -s "$OUT/display" ] && break; sleep 0.1; done
        export DISPLAY=":$(head -1 "$OUT/display")"
        for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
        xdpyinfo >/dev/null 2>&1 && break
        kill "$XVFB_PID" 2>/dev/null || true
        sleep 1
    done
    xdpyinfo >/dev/null 2>&1 || fail "Xvfb did not start: $(cat "$OUT/xvfb.log")"
    say "display $DISPLAY, output in $OUT, engine $("$CB" --version)"
}

# An engine command $OUT/NAME.sh that runs cb-async with its log in $OUT/LOG.log and its stderr
# in $OUT/LOG.stderr (a second engine in the same GUI gets a log of its own).
make_engine() {
    printf '#!/bin/sh\nexec "%s" --log "%s" "$@" 2>>"%s"\n' "$CB" "$OUT/$2.log" "$OUT/$2.stderr" >"$OUT/$1.sh"
    chmod +x "$OUT/$1.sh"
    : >"$OUT/$2.stderr"
}

# Run a program in the background on the display; its pid in $APP_PID.
start_app() {
    "$@" >"$OUT/app.log" 2>&1 &
    APP_PID=$!
    CLEANUP_PIDS="$CLEANUP_PIDS $APP_PID"
}

# The id of the first visible window whose name matches REGEX, within SECONDS (default 30).
wait_window() {
    pattern=$1; seconds=${2:-30}
    end=$(( $(date +%s) + seconds ))
    while [ "$(date +%s)" -le "$end" ]; do
        id=$(xdotool search --onlyvisible --name "$pattern" 2>/dev/null | head -1 || true)
        if [ -n "$id" ]; then echo "$id"; return 0; fi
        sleep 0.3
    done
    shot "timeout-$(echo "$pattern" | tr -c 'A-Za-z0-9\n' _)"
    fail "no window named /$pattern/ within ${seconds}s; there are: $(xdotool search --onlyvisible --name . getwindowname %@ 2>/dev/null | sort -u | tr '\n' '|')"
}

# Wait until a line of the engine's log (or of LOG) matches the extended REGEX, within SECONDS
# (default 30).
wait_log() {
    pattern=$1; seconds=${2:-30}
    end=$(( $(date +%s) + seconds ))
    while [ "$(date +%s)" -le "$end" ]; do
        grep -Eq -- "$pattern" "${3:-$LOG}" 2>/dev/null && return 0
        sleep 0.3
    done
    shot "timeout-log"
    fail "the engine's log has no line /$pattern/ within ${seconds}s"
}

# Wait until no cb-async process of this drive runs, within SECONDS (default 10).
wait_engines_gone() {
    end=$(( $(date +%s) + ${1:-10} ))
    while pgrep -f -- "--log $OUT/" >/dev/null; do
        [ "$(date +%s)" -le "$end" ] || { shot timeout-engine-exit; fail "cb-async still runs: $(pgrep -af -- "--log $OUT/")"; }
        sleep 0.3
    done
}

# Count the lines of the engine's log (or of LOG) that match REGEX.
count_log() { grep -Ec -- "$1" "${2:-$LOG}" 2>/dev/null || true; }

# Screenshot of the whole screen (or of window ID) as $OUT/NAME.png, and a small copy for the
# docs: the empty (black) screen around the windows cut off, at most WIDTH pixels wide (default
# 640), 64 colours.
shot() {
    name=$1; window=${2:-root}; width=${3:-640}
    import -window "$window" "$OUT/$name.png" 2>/dev/null || import -window root "$OUT/$name.png"
    convert "$OUT/$name.png" -trim +repage -resize "${width}x>" -dither None -colors 64 -strip "PNG8:$OUT/$name-small.png"
    if [ "${GUI_DOCS:-0}" = 1 ] && [[ " $DOCS_SHOTS " == *" $name "* ]]; then
        mkdir -p "$ROOT/docs/gui"
        cp "$OUT/$name-small.png" "$ROOT/docs/gui/$GUI-$name.png"
    fi
    say "screenshot $OUT/$name.png"
}

# The engine's side, after the GUI is gone: every cb-async process started by this drive has
# exited within SECONDS (default 10), nothing on stderr, and no line the engine wrote since the
# last check is an error, an illegal move or a complaint about the GUI's input, unless it
# matches $EXPECTED_COMPLAINTS (an extended regex for a GUI's known habits, each explained in
# its drive and replayed by a conformance transcript): those are counted, not failed.
EXPECTED_COMPLAINTS=
check_engine() {
    wait_engines_gone "${1:-10}"
    # On stderr only the note of an engine whose GUI vanished (the drive killed it) is fine.
    for err in "$OUT"/*.stderr; do
        other=$(grep -v '^cb-async: the output was closed: ending$' "$err" || true)
        [ -z "$other" ] || { cat "$err" >&2; fail "the engine wrote to stderr ($err)"; }
    done
    for log in "$OUT"/*.log; do
        case $log in "$OUT"/app*.log|"$OUT/xvfb.log") continue;; esac
        seen=$(cat "$log.checked" 2>/dev/null || echo 0)
        total=$(wc -l <"$log")
        echo "$total" >"$log.checked"
        new=$(tail -n +"$((seen + 1))" "$log")
        # A search process that missed its grace after a stop or deadline is replaced, and the
        # engine answers with the best move it had and says so: `info string` (UCI) or a `#`
        # line (XBoard, which shows `telluser` in a dialog: TELLUSER_DIALOG=1 fails the drive on
        # one). Counted, not a failure.
        stalls=$(printf '%s\n' "$new" | grep -Ec '>> (telluser|info string|#) the search process did not answer' || true)
        if [ "$stalls" != 0 ]; then
            say "$(basename "$log"): $stalls stalled searches answered by the engine's fallback (load: $(cut -d' ' -f1-3 /proc/loadavg))"
            [ "${TELLUSER_DIALOG:-0}" = 1 ] || new=$(printf '%s\n' "$new" | grep -Ev '>> telluser the search process did not answer' || true)
        fi
        complaints=$(printf '%s\n' "$new" | grep -E '^\S+ +\S+ >> (Error|Illegal move|tellusererror|telluser|info string (unknown|error|illegal|invalid|bad|no such))' || true)
        if [ -n "$EXPECTED_COMPLAINTS" ] && [ -n "$complaints" ]; then
            expected=$(printf '%s\n' "$complaints" | grep -Ec -- "$EXPECTED_COMPLAINTS" || true)
            [ "$expected" = 0 ] || say "$(basename "$log"): $expected expected complaints (/$EXPECTED_COMPLAINTS/)"
            complaints=$(printf '%s\n' "$complaints" | grep -Ev -- "$EXPECTED_COMPLAINTS" || true)
        fi
        [ -z "$complaints" ] || fail "the engine complained in $log: $complaints"
        say "engine side clean in $(basename "$log"): $(printf '%s\n' "$new" | grep -c ' << ') lines in, $(printf '%s\n' "$new" | grep -c ' >> ') lines out"
    done
}
