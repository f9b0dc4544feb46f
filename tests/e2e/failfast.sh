#!/bin/sh
# failfast.sh - the suites' failure paths, driven with stand-ins on PATH (issue 25, item 5):
# - a Slurm whose daemons die at start fails e2e/sweep_slurm at once, naming the dead daemons
#   and showing each one's last log lines, and leaves no daemon running;
# - an ApacheBench that gives up (what ab prints when apr_pollset_poll times out on a busy
#   machine) makes e2e/mock_load's batches inconclusive: skips with the reason, nothing failed;
#   one that reports failed requests fails the batch, with ab's own lines;
# - `need` says why apt-get failed; `mock_start` says why a mock printed no URL, and stops
#   waiting as soon as it has exited.
# The nested suites run with ROOT in the scratch folder, so that their logs (out/e2e-NAME) are
# not the real suites'; mock_load with MOCK_LOAD_AB_ONLY=1 (no lock-out part). Orchestration,
# not memory: the release run runs it.
. tests/tap.sh
set -u
T=$E2E_TMP
# A suite that notices a dead daemon fails in about 2 s here; sweep_slurm's own bounds are 10 s
# for munged's socket and 60 s for the node: a suite that waits for them (or hangs) misses this.
BOUND_S=30

case "${BUILD:-}" in
*asan*)
    skip "the suites' failure paths" "they test the suites' shell, not memory: the release run runs it"
    finish
    exit 0
    ;;
esac

# now_ms: the wall clock in milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# nested NAME DIR VAR=VALUE...: run e2e/NAME with the stand-ins of $B first on PATH and ROOT=DIR
# (and the VARs); its output in DIR.tap, its exit code in $rc, its wall time in $took_ms.
nested() {
    _name=$1 _dir=$2
    shift 2
    mkdir -p "$_dir"
    _t0=$(now_ms)
    env ROOT="$_dir" BUILD= PATH="$B:$PATH" "$@" sh "tests/e2e/$_name.sh" >"$_dir.tap" 2>&1
    rc=$?
    took_ms=$(($(now_ms) - _t0))
    TOOK="$((took_ms / 1000)).$((took_ms % 1000 / 100)) s"
}

# show FILE: FILE as TAP comments (after a failed test: what the nested suite printed).
show() { sed 's/^/#   | /' "$1"; }

# whole_tap FILE: FILE's TAP has a plan and as many results as it plans.
whole_tap() {
    _plan=$(sed -n 's/^1\.\.\([0-9][0-9]*\).*/\1/p' "$1" | head -n 1)
    [ -n "$_plan" ] && [ "$(grep -cE '^(not )?ok [0-9]+ ' "$1")" -eq "$_plan" ]
}

# ---- sweep_slurm with daemons that die at start ----
B=$T/slurm-bin
mkdir -p "$B"
# The stand-in daemon (munged, slurmctld, slurmd): writes its pid file and a first line to its
# log, as the real ones do; then, if its name is in $FAILFAST_DIES, an error to its log and a
# fatal line to stderr, and exits 1; otherwise it runs until it is stopped (munged listening on
# its --socket, which the suite waits for).
cat >"$B/standin-daemon" <<'SH'
#!/bin/sh
me=$(basename "$0") log= sock= pidf= conf=
while [ $# -gt 0 ]; do
    case $1 in
    --log-file=*) log=${1#*=} ;;
    --socket=*) sock=${1#*=} ;;
    --pid-file=*) pidf=${1#*=} ;;
    -f) shift && conf=$1 ;;
    esac
    shift
done
case $me in
slurmctld | slurmd)
    key=$(echo "$me" | sed 's/^slurmctld$/Slurmctld/; s/^slurmd$/Slurmd/')
    log=$(sed -n "s/^${key}LogFile=//p" "$conf") pidf=$(sed -n "s/^${key}PidFile=//p" "$conf")
    ;;
esac
echo $$ >"$pidf"
echo "$me: stand-in started, pid $$" >>"$log"
case " $FAILFAST_DIES " in
*" $me "*)
    echo "$me: error: stand-in $me cannot start" >>"$log"
    echo "$me: fatal: stand-in $me dies at start" >&2
    exit 1
    ;;
esac
[ -n "$sock" ] && exec python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
time.sleep(600)' "$sock"
exec sleep 600
SH
chmod +x "$B/standin-daemon"
for d in munged slurmctld slurmd; do ln -s standin-daemon "$B/$d"; done
# mungekey -c -k FILE writes a key; sinfo finds no controller (the node is never idle);
# squeue lists no job, scancel cancels nothing; hostname is one that resolves anywhere (the
# suite skips on a host name that does not, which is not what this suite tests).
cat >"$B/mungekey" <<'SH'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -k ] && head -c 32 /dev/urandom >"$2"; shift; done
SH
cat >"$B/sinfo" <<'SH'
#!/bin/sh
echo "slurm_load_partitions: Unable to contact slurm controller (connect failure)" >&2
exit 1
SH
printf '#!/bin/sh\nexit 0\n' >"$B/squeue"
printf '#!/bin/sh\nexit 0\n' >"$B/scancel"
printf '#!/bin/sh\necho localhost\n' >"$B/hostname"
chmod +x "$B/mungekey" "$B/sinfo" "$B/squeue" "$B/scancel" "$B/hostname"

# slurm_case DIES SAYS: sweep_slurm with the stand-ins, the daemons DIES dying at start; its
# cluster test must fail with "SAYS died at start", the last lines of each dead daemon's log and
# output, and no stand-in left running. Five tests.
slurm_case() {
    _dies=$1 _says=$2
    _r=$T/slurm-$(echo "$_dies" | tr ' ' -)
    nested sweep_slurm "$_r" FAILFAST_DIES="$_dies"
    _tap=$_r.tap
    _s=$_r/out/e2e-sweep_slurm/slurm
    [ "$rc" -eq 1 ] && [ "$took_ms" -lt $((BOUND_S * 1000)) ]
    _k=$?
    [ $_k -ne 0 ] && show "$_tap"
    ok $_k "sweep_slurm, $_dies dying at start: the suite exits 1 (got $rc) within $BOUND_S s (took $TOOK)"
    grep -q "^not ok [0-9]* - a single-node Slurm runs on 127.0.0.1: $_says died at start (last log lines" \
        "$_tap"
    ok $? "... its failing test says '$_says died at start'"
    # each dead daemon's log and output: their section, with the stand-in's last line in it
    _missing=
    for _d in $_dies; do
        case $_d in
        munged) _files="munge/munged.log munged.out" ;;
        *) _files="$_d.log $_d.out" ;;
        esac
        for _f in $_files; do
            case $_f in
            *.log) _last="$_d: error: stand-in $_d cannot start" ;;
            *) _last="$_d: fatal: stand-in $_d dies at start" ;;
            esac
            grep -A 8 -F -x "# --- $_s/$_f (last lines)" "$_tap" | grep -q -F -x "#   $_last" ||
                _missing="$_missing $_f"
        done
    done
    [ -z "$_missing" ]
    _k=$?
    [ $_k -ne 0 ] && echo "# missing or without its last line:$_missing" && show "$_tap"
    ok $_k "... it shows the last lines of each dead daemon's log and output ($_dies)"
    _alive=
    for _p in "$_s/munge/munged.pid" "$_s/slurmctld.pid" "$_s/slurmd.pid"; do
        [ -s "$_p" ] && kill -0 "$(cat "$_p")" 2>/dev/null && _alive="$_alive $(basename "$_p" .pid)"
    done
    [ -z "$_alive" ]
    ok $? "... no daemon it started outlives it${_alive:+ (alive:$_alive)}"
    whole_tap "$_tap"
    ok $? "... its TAP is whole: a plan, and as many results"
    # the stand-ins that outlived it (a failure above) are stopped here
    for _p in "$_s/munge/munged.pid" "$_s/slurmctld.pid" "$_s/slurmd.pid"; do
        [ -s "$_p" ] && kill "$(cat "$_p")" 2>/dev/null
    done
}
# the case of issue 25: no cgroup filesystem and a host name that does not resolve killed both
slurm_case "slurmctld slurmd" "slurmctld slurmd"
# the controller stays up: the suite sees the node's daemon die, and stops the controller
slurm_case "slurmd" "slurmd"
# munged never makes its socket: the Slurm daemons are never started
slurm_case "munged" "munged"
[ ! -e "$T/slurm-munged/out/e2e-sweep_slurm/slurm/slurmctld.out" ]
ok $? "... and with munged dead, slurmctld and slurmd are not started"

# ---- mock_load with an ApacheBench that cannot keep time ----
B=$T/ab-timeout
mkdir -p "$B"
# What ab prints when apr_pollset_poll times out (apr_err() in Apache httpd's support/ab.c: the
# APR error on stderr, the requests done on stdout, exit(70007), which is 119), after one real
# request to the URL it was given, as ab would have sent some.
cat >"$B/ab" <<'SH'
#!/bin/sh
for a; do url=$a; done
curl -s -m 5 -o /dev/null -H 'Content-Type: application/json' \
    -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}' "$url"
echo 'This is ApacheBench, Version 2.3 <$Revision: 1903618 $>'
echo "Benchmarking 127.0.0.1 (be patient)"
echo "apr_pollset_poll: The timeout specified has expired (70007)" >&2
echo "Total of 1 requests completed"
exit 119
SH
chmod +x "$B/ab"
nested mock_load "$T/load-timeout" MOCK_LOAD_AB_ONLY=1
TAP=$T/load-timeout.tap
[ "$rc" -eq 0 ] && ! grep -q '^not ok' "$TAP"
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "mock_load, ab giving up on every batch: 0 failed, exit 0 (got $rc, took $TOOK)"
why='# SKIP inconclusive: ab got no answer within its timeout (apr_pollset_poll: The timeout specified'
why="$why has expired; load average "
n=0
for t in "batch 1: " "batch 2: " "2000 concurrent 1 s requests"; do
    grep "^ok [0-9]* - $t" "$TAP" | grep -q -F "$why" && n=$((n + 1))
done
[ $n -eq 3 ]
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "... its three ab batches are skips, inconclusive with ab's reason and the load ($n of 3)"
[ "$(grep -c '# SKIP inconclusive: a batch did not complete' "$TAP")" -eq 4 ]
ok $? "... the four counts of what arrived are skips, inconclusive (a batch did not complete)"
grep -q '^ok [0-9]* - clean shutdown$' "$TAP"
ok $? "... the mock still shuts down cleanly"
whole_tap "$TAP"
ok $? "... its TAP is whole: a plan, and as many results"

# A batch with failed requests is a failure, never inconclusive: ab's own lines say why.
B=$T/ab-failed
mkdir -p "$B"
cat >"$B/ab" <<'SH'
#!/bin/sh
n=100000
for a; do [ "$prev" = -n ] && n=$a; prev=$a; done
echo "Complete requests:      $n"
echo "Failed requests:        7"
echo "   (Connect: 0, Receive: 0, Length: 7, Exceptions: 0)"
echo "Non-2xx responses:      7"
SH
chmod +x "$B/ab"
nested mock_load "$T/load-failed" MOCK_LOAD_AB_ONLY=1
TAP=$T/load-failed.tap
[ "$rc" -eq 1 ] && grep -q '^not ok 1 - batch 1: ' "$TAP" && grep -q '^not ok 2 - batch 2: ' "$TAP"
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "mock_load, ab reporting failed requests: batches 1 and 2 fail, exit 1 (got $rc)"
grep -q '^# Failed requests: *7$' "$TAP" && grep -q '^# Non-2xx responses: *7$' "$TAP"
ok $? "... ab's own lines (failed requests, non-2xx) are shown as TAP comments"
! grep -q '# SKIP inconclusive: ab got no answer' "$TAP"
ok $? "... and none of them is called inconclusive"

# ---- need: apt-get fails ----
B=$T/apt-bin
mkdir -p "$B"
# apt-get update works, install cannot find the package; sudo (when not root) runs it as is
cat >"$B/apt-get" <<'SH'
#!/bin/sh
[ "$1" = update ] && exit 0
for a; do pkg=$a; done
echo "E: Unable to locate package $pkg" >&2
exit 100
SH
printf '#!/bin/sh\nexec "$@"\n' >"$B/sudo"
chmod +x "$B/apt-get" "$B/sudo"
(
    PATH="$B:$PATH"
    need fusebox-no-such-command "$T/apt.log" fusebox-no-such-package
) >"$T/need.out" 2>&1
rc=$?
[ $rc -eq 100 ]
ok $? "need returns apt-get's exit code when the install fails (got $rc)"
said="# need: fusebox-no-such-command is missing and apt-get install fusebox-no-such-package"
said="$said failed (exit 100); the last lines of $T/apt.log:"
grep -q -F -x "$said" "$T/need.out" &&
    grep -q -F -x "#   E: Unable to locate package fusebox-no-such-package" "$T/need.out"
r=$?
[ $r -ne 0 ] && show "$T/need.out"
ok $r "... and says why as TAP comments: the command, the packages, apt-get's last lines"

# ---- a tool that cannot be installed: the suites that need it skip, saying why ----
# PATH: every command of this one but ab and valgrind, with the failing apt-get above
B=$T/no-tools
mkdir -p "$B"
cp "$T/apt-bin/apt-get" "$T/apt-bin/sudo" "$B/"
python3 - "$B" <<'PY'
import os, sys
b = sys.argv[1]
for d in os.environ["PATH"].split(":"):
    for n in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        f = os.path.join(d, n)
        to = os.path.join(b, n)
        if n not in ("ab", "valgrind") and os.access(f, os.X_OK) and not os.path.lexists(to):
            os.symlink(f, to)
PY
nested mock_load "$T/no-ab" MOCK_LOAD_AB_ONLY=1 PATH="$B"
TAP=$T/no-ab.tap
[ "$rc" -eq 0 ] && ! grep -q '^not ok' "$TAP" && whole_tap "$TAP"
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "mock_load where ab cannot be installed: 0 failed, exit 0 (got $rc, took $TOOK)"
no_ab='# SKIP ab is not installed and could not be (Debian: apache2-utils; see '
[ "$(grep -c "^ok [0-9]* - .* $no_ab" "$TAP")" -eq 8 ] &&
    grep -q -F -x "#   E: Unable to locate package apache2-utils" "$TAP"
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "... its 8 tests of ab are skips with that reason, after apt-get's own error"
nested mock_valgrind "$T/no-valgrind" PATH="$B"
TAP=$T/no-valgrind.tap
no_vg='# SKIP valgrind is not installed and could not be (Debian: valgrind; see '
[ "$rc" -eq 0 ] && whole_tap "$TAP" && [ "$(grep -c "^ok [0-9]* - .* $no_vg" "$TAP")" -eq 7 ]
r=$?
[ $r -ne 0 ] && show "$TAP"
ok $r "mock_valgrind where valgrind cannot be installed: its 7 tests are skips with the reason, exit 0 (took $TOOK)"

# ---- mock_start: a mock that exits, a mock that prints no URL ----
t0=$(now_ms)
(
    MOCK_WAIT=400
    mock_start "$T/bad.url" "$FUSEBOX" mock --port 0 --no-such-option
    echo "returned $? url=[$MOCK_URL] pid=[$MOCK_PID]"
) >"$T/bad.out" 2>&1
took_ms=$(($(now_ms) - t0))
grep -q -x 'returned 1 url=\[\] pid=\[\]' "$T/bad.out" && [ $took_ms -lt 10000 ]
r=$?
[ $r -ne 0 ] && show "$T/bad.out"
ok $r "mock_start of a mock that exits: false, no URL, at its exit, not after MOCK_WAIT's 20 s (${took_ms} ms)"
missing=0
[ -s "$T/bad.url.err" ] || missing=1
while IFS= read -r line; do
    grep -q -F -x "#   $line" "$T/bad.out" || missing=1
done <"$T/bad.url.err"
said="# mock_start: $FUSEBOX exited with 2 before printing its URL; the last lines of its stderr"
grep -q -F -x "$said ($T/bad.url.err):" "$T/bad.out" && [ $missing -eq 0 ]
r=$?
[ $r -ne 0 ] && show "$T/bad.out"
ok $r "... it says so, with the exit code and the mock's stderr"
(
    MOCK_WAIT=10
    mock_start "$T/mute.url" sh -c 'echo "stand-in: listening nowhere" >&2; exec sleep 60'
    echo "returned $? url=[$MOCK_URL]"
    mock_stop
) >"$T/mute.out" 2>&1
said="# mock_start: sh printed no URL within 500 ms; the last lines of its stderr ($T/mute.url.err):"
grep -q -x 'returned 1 url=\[\]' "$T/mute.out" && grep -q -F -x "$said" "$T/mute.out" &&
    grep -q -F -x "#   stand-in: listening nowhere" "$T/mute.out"
r=$?
[ $r -ne 0 ] && show "$T/mute.out"
ok $r "mock_start of a mock that prints no URL: false after MOCK_WAIT, with its stderr"
finish
