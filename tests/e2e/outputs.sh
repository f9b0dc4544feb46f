#!/bin/sh
# outputs.sh - `fusebox run`'s output folder can be trusted (issue 14): it is replaced whole, a
# signal stops the run and writes what was simulated marked "interrupted", a write that fails
# (a full disk) gives one message and exit 2 and leaves the folder as it was.
#
# Signals: SIGINT and SIGTERM mid-simulation (a long run, signalled after 0.3 s); then a run
# that replaces an earlier run (another seed) signalled after several delays, from before the
# scenario is loaded to after the charts: each time the folder must hold exactly the earlier
# run, exactly the new complete run (as a reference run of the same seed wrote it), or the new
# run marked "interrupted" whose rows and events are a prefix of the reference's. Never a mix.
# SIGKILL leaves the earlier run untouched and the next run clears the staging folder. Variants
# run at once (run --jobs, the CPUs by default): an interrupted run's rows are, variant by
# variant, a prefix of the reference's; and --jobs 1 and 2 write the same bytes.
#
# Full disk: as root, a 64 KiB tmpfs (mount -t tmpfs -o size=64k), really ENOSPC; anywhere,
# `ulimit -f` with SIGXFSZ ignored, so that a file past the limit fails with EFBIG (no
# LD_PRELOAD shim: glibc's stdio writes through an internal write that a shim cannot catch).
# Under ASan the delays loop (timing, not memory) is skipped.
set -u
. tests/tap.sh
T=$E2E_TMP
S=scenarios/thundering-herd.json

# state DIR OLD NEW: "old", "new", "interrupted", or what makes DIR a mix of runs.
state() {
    python3 - "$@" <<'EOF'
import json, os, sys
d, old, new = sys.argv[1:4]
def files(root):
    out = {}
    for base, dirs, names in os.walk(root):
        for n in names:
            p = os.path.join(base, n)
            out[os.path.relpath(p, root)] = open(p, 'rb').read()
    return out
have = files(d)
if have == files(old): print('old'); sys.exit()
ref = files(new)
if have == ref: print('new'); sys.exit()
if sorted(have) != ['events.jsonl', 'report.json', 'timeseries.csv']:
    print('mix: files ' + ' '.join(sorted(have))); sys.exit()
r = json.loads(have['report.json'])
if r.get('complete') is not False or r.get('interrupted') is not True:
    print('mix: report.json is neither whole nor interrupted'); sys.exit()
# variants run at once (run --jobs): each variant's rows a prefix of its rows in the new run
def by_variant(f, text):
    lines = text.split(b'\n')
    out = {}
    for line in (lines[1:] if f.endswith('.csv') else lines)[:-1]:
        v = line.split(b',')[0] if f.endswith('.csv') else json.loads(line)['variant'].encode()
        out.setdefault(v, []).append(line)
    return out
for f in ('timeseries.csv', 'events.jsonl'):
    if have[f] and not have[f].endswith(b'\n'):
        print('mix: %s is not whole rows of the new run' % f); sys.exit()
    h, w = by_variant(f, have[f]), by_variant(f, ref[f])
    for v, rows in h.items():
        if w.get(v, [])[:len(rows)] != rows:
            print('mix: %s is not whole rows of the new run (variant %s)' % (f, v.decode())); sys.exit()
print('interrupted')
EOF
}

# signal_after SIG SECONDS DIR ARGS...: run fusebox run into DIR, send SIG after SECONDS; rc in $got.
# With SECONDS "running", the signal goes 0.2 s after the staging folder appears (the handlers are
# in place by then: a background job starts with SIGINT ignored until fusebox takes it).
signal_after() {
    _sig=$1 _after=$2 _dir=$3
    shift 3
    "$FUSEBOX" run "$S" -o "$_dir" -q "$@" >"$T/sig.out" 2>"$T/sig.err" &
    _pid=$!
    if [ "$_after" = running ]; then
        _i=0
        while [ ! -d "$_dir/.fusebox-new" ] && [ $_i -lt 200 ]; do
            sleep 0.05
            _i=$((_i + 1))
        done
        _after=0.2
    fi
    sleep "$_after"
    kill -s "$_sig" "$_pid" 2>/dev/null
    wait "$_pid"
    got=$?
}

# ---- a signal mid-simulation ----
for sig in INT TERM; do
    want=130
    [ $sig = TERM ] && want=143
    signal_after $sig running "$T/mid-$sig" --set duration=24h
    [ "$got" -eq $want ]
    ok $? "SIG$sig mid-run exits $want (got $got)"
    r=$(json "$T/mid-$sig/report.json" "r['complete'], r['interrupted'], list(r['variants'])" 2>&1)
    [ "$r" = "False True ['no-jitter']" ] || [ "$r" = "False True ['no-jitter', 'full-jitter']" ]
    ok $? "SIG$sig: report.json says complete false, interrupted true, holds the variants it stopped (one, or two at once with --jobs; got $r)"
    r=$(json "$T/mid-$sig/report.json" "r['variants']['no-jitter']['stopped']" 2>&1)
    contains "$r" "interrupted by a signal at t=" "SIG$sig: the variant says where it stopped"
    contains "$(cat "$T/sig.err")" "fusebox run: interrupted (SIG$sig); $T/mid-$sig/ holds what was simulated" \
        "SIG$sig: one line says so"
    [ "$(wc -l <"$T/sig.err")" -eq 1 ]
    ok $? "SIG$sig: and only that line on stderr"
    ls -A "$T/mid-$sig" >"$T/ls"
    [ "$(tr '\n' ' ' <"$T/ls")" = "events.jsonl report.json timeseries.csv " ]
    ok $? "SIG$sig: the folder holds report.json, timeseries.csv and events.jsonl, no staging (got $(tr '\n' ' ' <"$T/ls"))"
    python3 -c "import sys
rows = open(sys.argv[1]).read().split('\n')
assert rows[-1] == '' and len(rows) > 2, 'no rows'
n = rows[0].count(',')
assert all(r.count(',') == n for r in rows[1:-1]), 'a row cut'" "$T/mid-$sig/timeseries.csv"
    ok $? "SIG$sig: timeseries.csv is whole rows"
done

# ---- the folder replaced whole ----
"$FUSEBOX" run "$S" -o "$T/ref" -q
ok $? "a reference run (seed 42)"
"$FUSEBOX" run "$S" -o "$T/old" -q --seed 7
ok $? "an earlier run (seed 7)"
cp -R "$T/old" "$T/rep"
echo mine >"$T/rep/notes.txt"
echo mine >"$T/rep/charts/mine.png"
echo '{}' >"$T/rep/live.json"
echo stale >"$T/rep/charts/data_gone.dat"
run_kept "$FUSEBOX" run "$S" -o "$T/rep" --no-charts
contains "$OUT" "replaced $T/rep/ (an earlier run of thundering-herd)" "run says which folder it replaced"
[ -f "$T/rep/notes.txt" ] && [ -f "$T/rep/charts/mine.png" ]
ok $? "a user's files in the folder are kept"
[ ! -e "$T/rep/live.json" ] && [ ! -e "$T/rep/charts/data_gone.dat" ] && [ ! -e "$T/rep/report.html" ] &&
    [ ! -e "$T/rep/charts/compare.svg" ]
ok $? "fusebox's own files of the earlier run are gone (live.json, charts, report.html)"
same_files "$T/rep" "$T/ref" report.json timeseries.csv events.jsonl
ok $? "the new files are the run's, byte for byte"
run_kept "$FUSEBOX" run "$S" -o "$T/fresh" --no-charts
case "$OUT" in *replaced*) r=1 ;; *) r=0 ;; esac
ok $r "a new folder: nothing said replaced"

cp -R "$T/old" "$T/killed"
signal_after KILL running "$T/killed" --set duration=24h
[ -d "$T/killed/.fusebox-new" ]
ok $? "SIGKILL mid-run leaves the staging folder"
cp -R "$T/killed" "$T/killed-view"
rm -rf "$T/killed-view/.fusebox-new"
st=$(state "$T/killed-view" "$T/old" "$T/ref" 2>&1)
[ "$st" = old ]
ok $? "SIGKILL mid-run: the earlier run is untouched beside it (got $st)"
"$FUSEBOX" run "$S" -o "$T/killed" -q
st=$(state "$T/killed" "$T/old" "$T/ref" 2>&1)
[ "$st" = new ]
ok $? "the next run clears what the killed one left and writes the new run whole (got $st)"

case "${BUILD:-}" in
*asan*)
    skip "signals at several points leave an earlier, a new or an interrupted run" \
        "timing, not memory: the release run sends them"
    ;;
*)
    seen=""
    bad=0
    # the simulation takes ~0.2 s of this scenario's ~1.2 s, the charts the rest
    for at in 0:INT 0.1:TERM 0.3:INT 0.6:TERM 1:INT 1.6:TERM; do
        after=${at%:*} sig=${at#*:}
        {
            rm -rf "$T/at"
            cp -R "$T/old" "$T/at"
            signal_after $sig $after "$T/at"
            st=$(state "$T/at" "$T/old" "$T/ref" 2>&1)
            case "$st:$got" in
            old:13[0] | old:143 | interrupted:130 | interrupted:143 | new:130 | new:143 | new:0) ;;
            *)
                bad=1
                echo "# SIG$sig after ${after}s: $st, exit $got; stderr: $(cat "$T/sig.err")"
                ;;
            esac
            seen="$seen $st"
        }
    done
    ok $bad "SIGINT, SIGTERM after 0 to 1.6 s: the folder holds the earlier, the new or an interrupted run (saw:$seen)"
    ;;
esac

# ---- a full disk ----
# check_full WHAT DIR REASON: after run_kept, exit 2, one message naming a file in DIR and REASON.
check_full() {
    _what=$1 _dir=$2 _reason=$3
    [ "$got" -eq 2 ]
    ok $? "$_what: exit 2 (got $got)"
    [ "$(printf '%s\n' "$ERR" | wc -l)" -eq 1 ]
    ok $? "$_what: one line on stderr (got: $ERR)"
    contains "$ERR" "cannot write $_dir/" "$_what: the message names the file"
    contains "$ERR" "$_reason" "$_what: and the system's reason ($_reason)"
    case "$OUT" in *wrote* | *open* | *pass* | *FAIL*) r=1 ;; *) r=0 ;; esac
    [ $r -ne 0 ] && echo "# stdout: $OUT"
    ok $r "$_what: no wrote/open line, no expectation verdicts"
}

cp -R "$T/old" "$T/lim"
(
    trap '' XFSZ
    ulimit -f 40 # 20 KiB a file: timeseries.csv is larger
    exec "$FUSEBOX" run "$S" -o "$T/lim" >"$T/lim.out" 2>"$T/lim.err"
)
got=$?
OUT=$(cat "$T/lim.out")
ERR=$(cat "$T/lim.err")
check_full "a file too large (ulimit -f)" "$T/lim" "File too large"
[ "$(state "$T/lim" "$T/old" "$T/ref")" = old ]
ok $? "a file too large: the earlier run is left as it was"

if [ "$(id -u)" -eq 0 ] && mkdir -p "$T/mnt" && mount -t tmpfs -o size=64k tmpfs "$T/mnt" 2>"$T/mount.err"; then
    run_kept "$FUSEBOX" run "$S" -o "$T/mnt/x" -q --no-charts
    check_full "a full disk, -q --no-charts" "$T/mnt/x" "No space left on device"
    ls -A "$T/mnt/x" >"$T/ls"
    [ ! -s "$T/ls" ]
    ok $? "a full disk: no 0-byte report.json, nothing left (got $(tr '\n' ' ' <"$T/ls"))"
    umount "$T/mnt"
    # room for the data files, not for the charts: the file named is the first that could not
    # be written, a chart's script or report.html after the drawings (all the scripts are
    # written first, then drawn at once)
    mount -t tmpfs -o size=400k tmpfs "$T/mnt"
    run_kept "$FUSEBOX" run "$S" -o "$T/mnt/x"
    check_full "a full disk while drawing the charts" "$T/mnt/x" "No space left on device"
    umount "$T/mnt"
else
    skip "a full disk (tmpfs)" "needs root to mount a tmpfs: $(cat "$T/mount.err" 2>/dev/null)"
fi
# ---- variants at once: the same bytes as one after the other ----
"$FUSEBOX" run "$S" -o "$T/j1" -q --no-charts --jobs 1 >/dev/null 2>&1
r1=$?
"$FUSEBOX" run "$S" -o "$T/j2" -q --no-charts --jobs 2 >/dev/null 2>&1
r2=$?
same=0
for f in report.json timeseries.csv events.jsonl; do cmp -s "$T/j1/$f" "$T/j2/$f" || same=1; done
ok "$([ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ $same -eq 0 ] && echo 0 || echo 1)" \
    "run --jobs 2 writes the same bytes as --jobs 1 (thundering-herd, five variants, two at a time)"
"$FUSEBOX" run scenarios/retry-storm.json -o "$T/j0" -q --jobs 0 >"$T/j0.out" 2>&1
r0=$?
ok "$([ $r0 -eq 2 ] && grep -q -- "--jobs needs a number from 1 to 64, got '0'" "$T/j0.out" && echo 0 || echo 1)" \
    "run --jobs 0 is bad input (exit 2, says the range)"

finish
