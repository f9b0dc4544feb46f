#!/bin/sh
# word-split option lists, sh -c scripts, $got set by tap.sh:
# shellcheck disable=SC2086,SC2016,SC2154
# sweep_interrupt.sh - a sweep stopped at any moment (SIGINT, SIGTERM, SIGKILL) leaves its
# folder holding either the previous sweep, untouched, or the new one, complete, never a mix;
# --resume continues from the partial file to the same bytes as an uninterrupted sweep; a
# write that fails (a full tmpfs, a file size limit) gives one message and exit 2; merge
# without -o keeps off a sweep it did not merge. The signals are sent at fractions of the
# uninterrupted sweep's wall time: whatever moment they land on, the same rule must hold.
. tests/tap.sh
T=$E2E_TMP
SC=tests/e2e/sweep-small.json
trap 'umount "$T/tmpfs" 2>/dev/null; mock_stop; rm -rf "$E2E_TMP"' EXIT

GRID="--grid breaker.failure_rate=0.3,0.5,0.7 --grid breaker.open=5s,20s"
# 900 runs, about half a second in release (180 took 0.85 s until a run stopped faulting its
# memory in, then 0.3 s, mostly the start and the end, and a signal at 95% found the sweep done);
# asan and debug (-O0) runs are slower, so fewer do
case "${BUILD:-}" in
*asan* | *debug*) SEEDS=10 ;;
*) SEEDS=150 ;;
esac
FILES="sweep.csv sweep-points.csv sweep.json sweep.html charts/heatmap.gp charts/heatmap.dat
charts/pareto.gp charts/pareto.dat"
now() { date +%s.%N; }

# The previous sweep (other values) and the uninterrupted new one, timed.
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC --grid breaker.failure_rate=0.4 --grid breaker.open=10s --seeds 2 -q \
    -o "$T/prev"
t0=$(now)
# shellcheck disable=SC2086
expect_exit 0 "the uninterrupted sweep exits 0" "$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" \
    --minimize cost_usd -q -o "$T/ref"
WALL=$(echo "$t0 $(now)" | awk '{ printf "%.3f", $2 - $1 }')
echo "# the uninterrupted sweep took $WALL s"

# state DIR: previous, new, or mixed (some files of each, or others)
state() {
    # shellcheck disable=SC2086
    if same_files "$1" "$T/prev" $FILES >/dev/null; then
        echo previous
    elif same_files "$1" "$T/ref" $FILES >/dev/null; then
        echo new
    else
        echo mixed
    fi
}

# interrupt NAME SIGNAL FRACTION [--resume]: the sweep into $T/NAME (a copy of the previous
# sweep, or NAME's partial state with --resume), SIGNAL after FRACTION of $WALL.
interrupt() {
    _n=$1 _sig=$2 _frac=$3 _resume=${4:-}
    [ -n "$_resume" ] || { rm -rf "${T:?}/$_n" && cp -r "$T/prev" "$T/$_n"; }
    # shellcheck disable=SC2086
    "$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --minimize cost_usd -q -o "$T/$_n" $_resume \
        >"$T/$_n.out" 2>"$T/$_n.err" &
    _pid=$!
    sleep "$(echo "$WALL $_frac" | awk '{ printf "%.3f", $1 * $2 }')"
    kill -"$_sig" $_pid 2>/dev/null
    wait $_pid 2>/dev/null
    RC=$?
    ST=$(state "$T/$_n")
    echo "# $_n: SIG$_sig after ${_frac} x $WALL s: exit $RC, folder holds the $ST sweep;" \
        "stderr: $(cat "$T/$_n.err")"
}

# After SIGINT/SIGTERM: exit 0 (it had finished) with the new sweep, or 130/143 with the
# previous sweep and a partial file, or with the new one complete (the signal came while
# the outputs were renamed into place, and it says so).
after_signal() {
    _n=$1 _code=$2
    case "$RC/$ST" in
    0/new) r=0 ;;
    "$_code/previous")
        [ -s "$T/$_n/sweep.partial.json" ] && grep -q "interrupted by" "$T/$_n.err"
        ;;
    "$_code/new") grep -q "came while the outputs were written" "$T/$_n.err" ;;
    *) false ;;
    esac
    ok $? "$_n: exit $RC with the $ST sweep in the folder (never a mix)"
    if [ -e "$T/$_n/sweep.partial.json" ]; then
        [ "$(grep -c . "$T/$_n.err")" -eq 1 ]
        ok $? "$_n: one line on stderr says so"
    fi
}

# resume_to_end NAME: --resume when there is a partial file; the folder then holds the new sweep.
resume_to_end() {
    if [ ! -e "$T/$1/sweep.partial.json" ]; then
        skip "$1: --resume gives the uninterrupted bytes" \
            "no partial file: the signal came after the last run (the outputs are complete)"
        return
    fi
    # shellcheck disable=SC2086
    expect_exit 0 "$1: --resume exits 0" "$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" \
        --minimize cost_usd -q -o "$T/$1" --resume --jobs 3
    # shellcheck disable=SC2086
    same_files "$T/$1" "$T/ref" $FILES charts/heatmap.png charts/pareto.png &&
        [ ! -e "$T/$1/sweep.partial.json" ] && [ ! -e "$T/$1/.sweep-staging" ]
    ok $? "$1: --resume gives the uninterrupted sweep's bytes and removes the partial file"
}

interrupt int30 INT 0.3
after_signal int30 130
resume_to_end int30
interrupt term60 TERM 0.6
after_signal term60 143
resume_to_end term60
interrupt int95 INT 0.95
after_signal int95 130
resume_to_end int95
interrupt int0 INT 0
after_signal int0 130
resume_to_end int0

# Interrupted twice: the second attempt's partial file holds the first one's runs too.
interrupt twice INT 0.25
if [ -e "$T/twice/sweep.partial.json" ]; then
    first=$(grep -c '"task":' "$T/twice/sweep.partial.json")
    interrupt twice TERM 0.25 --resume
    case "$RC/$ST" in
    143/previous)
        [ "$(grep -c '"task":' "$T/twice/sweep.partial.json")" -ge "$first" ]
        ok $? "an interrupted --resume keeps the earlier runs ($first) and its own"
        ;;
    *) ok 0 "an interrupted --resume (it had finished: exit $RC, $ST sweep)" ;;
    esac
    resume_to_end twice
else
    skip "an interrupted --resume keeps the earlier runs" "the first sweep was not interrupted"
fi

# SIGKILL cannot be caught: the folder holds one sweep or the other, and the next sweep
# clears what the killed one had staged.
interrupt kill50 KILL 0.5
[ "$ST" != mixed ]
ok $? "SIGKILL: the folder holds the $ST sweep, not a mix"
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --minimize cost_usd -q -o "$T/kill50" &&
    [ "$(state "$T/kill50")" = new ] && [ ! -e "$T/kill50/.sweep-staging" ]
ok $? "SIGKILL: the next sweep writes the folder in full and leaves no staging folder"

# What --resume checks.
interrupt checks INT 0.3
if [ -e "$T/checks/sweep.partial.json" ]; then
    # shellcheck disable=SC2086
    expect_exit 2 "--resume of another grid exits 2" "$FUSEBOX" sweep $SC \
        --grid breaker.failure_rate=0.3,0.5 --grid breaker.open=5s,20s --seeds "$SEEDS" -q \
        -o "$T/checks" --resume
    contains "$ERR" "is from a different sweep ('grid' differs)" "--resume names what differs"
    cp "$T/checks/sweep.partial.json" "$T/keep.json"
    sed 's/"fusebox": "[^"]*"/"fusebox": "0.0.0-old"/' "$T/keep.json" \
        >"$T/checks/sweep.partial.json"
    # shellcheck disable=SC2086
    expect_exit 2 "--resume of another version's file exits 2" "$FUSEBOX" sweep $SC $GRID \
        --seeds "$SEEDS" -q -o "$T/checks" --resume
    contains "$ERR" "written by fusebox 0.0.0-old, this is" "--resume names both versions"
    cp "$T/keep.json" "$T/checks/sweep.partial.json"
    expect_exit 2 "merge refuses an interrupted sweep's partial file" "$FUSEBOX" merge \
        "$T/checks/sweep.partial.json" -o "$T/m-int"
    contains "$ERR" "an interrupted sweep's partial file" "merge says it is interrupted"
else
    skip "--resume checks the definition and the version" "the sweep was not interrupted"
fi
cp "$SC" "$T/sc.json"
"$FUSEBOX" sweep "$T/sc.json" $GRID --seeds "$SEEDS" -q -o "$T/changed" >/dev/null 2>&1 &
pid=$!
sleep "$(echo "$WALL" | awk '{ printf "%.3f", $1 * 0.3 }')"
kill -INT $pid
wait $pid
if [ -e "$T/changed/sweep.partial.json" ]; then
    printf '\n' >>"$T/sc.json"
    # shellcheck disable=SC2086
    expect_exit 2 "--resume after the scenario file changed exits 2" "$FUSEBOX" sweep \
        "$T/sc.json" $GRID --seeds "$SEEDS" -q -o "$T/changed" --resume
    contains "$ERR" "the scenario file changed" "--resume says the scenario changed"
else
    skip "--resume after the scenario file changed exits 2" "the sweep was not interrupted"
fi
expect_exit 2 "--resume with nothing to resume exits 2" "$FUSEBOX" sweep $SC $GRID -q \
    -o "$T/nothing" --resume
contains "$ERR" "no interrupted sweep to continue ($T/nothing/sweep.partial.json" \
    "--resume names the file it looked for"

# A shard: interrupted, it keeps sweep.part-K-of-N.partial.json (which a merge of
# sweep.part-*-of-N.json does not pick up); resumed, it writes the shard's file as usual.
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --shard 1/2 -q -o "$T/shard" >/dev/null 2>&1 &
pid=$!
sleep "$(echo "$WALL" | awk '{ printf "%.3f", $1 * 0.15 }')"
kill -TERM $pid
wait $pid
rc=$?
if [ $rc -eq 143 ] && [ -e "$T/shard/sweep.part-1-of-2.partial.json" ]; then
    [ ! -e "$T/shard/sweep.part-1-of-2.json" ]
    ok $? "an interrupted shard writes no sweep.part-1-of-2.json"
    # shellcheck disable=SC2086
    "$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --shard 1/2 -q -o "$T/shard" --resume &&
        "$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --shard 2/2 -q -o "$T/shard" &&
        "$FUSEBOX" merge "$T"/shard/sweep.part-*-of-2.json --minimize cost_usd -q -o "$T/shard" &&
        same_files "$T/shard" "$T/ref" sweep.csv sweep-points.csv sweep.json sweep.html &&
        [ ! -e "$T/shard/sweep.part-1-of-2.partial.json" ]
    ok $? "a resumed shard merges into the uninterrupted sweep's bytes"
else
    skip "an interrupted shard resumes" "the shard was not interrupted (exit $rc)"
fi

# The partial and shard files' numbers are checked, not trusted (the same reader serves
# --resume and merge): a success_rate of 5, a string where a number goes, a duplicated key
# (cJSON would keep the first), text after the document and 400 KB of [0,0,...] are each an
# error naming the file and the JSON path (or the cap), exit 2.
"$FUSEBOX" sweep $SC $GRID --seeds 2 --shard 1/2 -q -o "$T/parts" &&
    "$FUSEBOX" sweep $SC $GRID --seeds 2 --shard 2/2 -q -o "$T/parts"
ok $? "two shards for the part-file checks"
P1=$T/parts/sweep.part-1-of-2.json
cp "$P1" "$T/p1.json"
damage() { # damage NAME FRAGMENT PYTHON: PYTHON edits the text t of the shard file
    python3 -c "import json, sys
t = open(sys.argv[1]).read()
d = json.loads(t)
$3
open(sys.argv[2], 'w').write(t)" "$T/p1.json" "$P1"
    expect_exit 2 "merge of a part file with $1 exits 2" "$FUSEBOX" merge \
        "$T"/parts/sweep.part-*-of-2.json -q -o "$T/parts-m"
    contains "$ERR" "$2" "... naming the file and the place"
}
damage "success_rate 5" "sweep.part-1-of-2.json: tasks[0].values[2] (success_rate): 5 is out of range [0, 1]" \
    "i = d['metrics'].index('success_rate'); d['tasks'][0]['values'][i] = 5; t = json.dumps(d)"
damage "a string for a number" "tasks[1].values[0] (requests): not a number or null" \
    "d['tasks'][1]['values'][0] = 'NaN'; t = json.dumps(d)"
damage "a duplicated key" "sweep.part-1-of-2.json: tasks[0].ok: duplicate key 'ok'" \
    "t = json.dumps(d).replace('\"ok\": ', '\"ok\": false, \"ok\": ', 1)"
damage "text after the document" "unexpected text after the JSON document" "t = t + '{}'"
damage "400 KB of [0,0,...]" "JSON values in" "t = t[:-1] + ', \"x\": [' + '0,' * 200000 + '0]}'"
cp "$T/p1.json" "$P1"
expect_exit 0 "... and the undamaged shards merge" "$FUSEBOX" merge "$T"/parts/sweep.part-*-of-2.json \
    -q -o "$T/parts-m"
# --resume reads its partial file the same way (T3-8: a success_rate of 5 there moved the
# recommended point): shard 1's file marked interrupted, damaged, then resumed.
mkdir -p "$T/res"
resume_damage() { # resume_damage NAME FRAGMENT PYTHON: PYTHON edits the partial file's d
    python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
d['interrupted'] = True
$3
open(sys.argv[2], 'w').write(json.dumps(d))" "$T/p1.json" "$T/res/sweep.part-1-of-2.partial.json"
    expect_exit "$4" "--resume of a partial file with $1 exits $4" "$FUSEBOX" sweep $SC $GRID \
        --seeds 2 --shard 1/2 -q -o "$T/res" --resume
    [ -n "$2" ] && contains "$ERR" "$2" "... naming the file and the place"
}
resume_damage "success_rate 5" \
    "sweep.part-1-of-2.partial.json: tasks[0].values[2] (success_rate): 5 is out of range [0, 1]" \
    "d['tasks'][0]['values'][d['metrics'].index('success_rate')] = 5" 2
resume_damage "a string for a number" "tasks[1].values[0] (requests): not a number or null" \
    "d['tasks'][1]['values'][0] = 'NaN'" 2
resume_damage "nothing damaged" "" "pass" 0

# A write that fails. A file size limit (SIGXFSZ ignored, so write(2) fails with EFBIG)
# works anywhere; a 64 KiB tmpfs (ENOSPC) where mount works (CI runs as root).
# disk_full NAME DIR CMD...: CMD exits 2 with one message naming a file under DIR and
# the system's reason, prints no "wrote" line, and leaves DIR's earlier files as they were.
disk_full() {
    _n=$1 _d=$2
    shift 2
    mkdir -p "$_d"
    (cd "$_d" && find . -type f | sort | xargs cat 2>/dev/null | cksum) >"$T/before"
    expect_exit 2 "$_n exits 2" "$@"
    (cd "$_d" && find . -type f | sort | xargs cat 2>/dev/null | cksum) >"$T/after"
    case "$ERR" in
    *"cannot write $_d/"*": No space left on device"* | *"cannot write $_d/"*": File too large"*)
        r=0
        ;;
    *) r=1 ;;
    esac
    [ $r -eq 0 ] && [ "$(echo "$ERR" | grep -c .)" -eq 1 ] && ! echo "$OUT" | grep -q '^wrote' &&
        cmp -s "$T/before" "$T/after" && [ ! -e "$_d/.sweep-staging" ] &&
        [ -z "$(find "$_d" -name '*.tmp')" ]
    r=$?
    [ $r -ne 0 ] && echo "# stdout: $OUT"
    ok $r "$_n: one message naming the file and the reason, no wrote line, the folder as it was"
}
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds 2 --shard 1/2 -q -o "$T/p2" &&
    "$FUSEBOX" sweep $SC $GRID --seeds 2 --shard 2/2 -q -o "$T/p2"
mkdir -p "$T/limit"
cp -r "$T/prev" "$T/limit/sweep"
# shellcheck disable=SC2086
disk_full "sweep over a file size limit" "$T/limit/sweep" sh -c 'trap "" XFSZ; ulimit -f 8;
    exec "$@"' sh "$FUSEBOX" sweep $SC $GRID --seeds 3 -o "$T/limit/sweep"
disk_full "merge over a file size limit" "$T/limit/sweep" sh -c 'trap "" XFSZ; ulimit -f 8;
    exec "$@"' sh "$FUSEBOX" merge "$T"/p2/sweep.part-*-of-2.json -o "$T/limit/sweep"
# shellcheck disable=SC2086
disk_full "a shard over a file size limit" "$T/limit/part" sh -c 'trap "" XFSZ; ulimit -f 4;
    exec "$@"' sh "$FUSEBOX" sweep $SC $GRID --seeds 3 --shard 1/2 -o "$T/limit/part"

mkdir -p "$T/tmpfs"
if mount -t tmpfs -o size=64k tmpfs "$T/tmpfs" 2>"$T/mount.err"; then
    # shellcheck disable=SC2086
    "$FUSEBOX" sweep $SC --grid breaker.open=5s,20s --seeds 2 --no-charts -q -o "$T/tmpfs/s"
    # shellcheck disable=SC2086
    disk_full "sweep on a full tmpfs" "$T/tmpfs/s" "$FUSEBOX" sweep $SC $GRID --seeds 30 \
        -o "$T/tmpfs/s"
    disk_full "merge on a full tmpfs" "$T/tmpfs/s" "$FUSEBOX" merge "$T"/p2/sweep.part-*-of-2.json \
        -o "$T/tmpfs/s"
    # shellcheck disable=SC2086
    disk_full "a shard on a full tmpfs" "$T/tmpfs/s" "$FUSEBOX" sweep $SC $GRID --seeds 30 \
        --shard 1/2 -o "$T/tmpfs/s"
    umount "$T/tmpfs"
else
    skip "sweep and merge on a full tmpfs" "mount -t tmpfs failed: $(cat "$T/mount.err")"
fi

# merge without -o writes out/<name>-sweep, but over a sweep there only when it merged it
# from the same parts (merge.json holds their digests).
mkdir -p "$T/cwd"
name=$(json "$SC" "r['name']")
(cd "$T/cwd" && "$FUSEBOX" merge "$T"/p2/sweep.part-*-of-2.json -q) &&
    [ -s "$T/cwd/out/$name-sweep/merge.json" ]
ok $? "merge without -o writes out/$name-sweep and its merge.json"
in_cwd() { run_kept sh -c 'cd "$1" && shift && "$@"' sh "$T/cwd" "$@"; }
in_cwd "$FUSEBOX" merge "$T"/p2/sweep.part-*-of-2.json
[ "$got" -eq 0 ]
ok $? "merge again from the same parts writes over its own folder"
contains "$OUT" "(replacing the sweep that was there)" "merge says which folder it replaces"
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds 3 --shard 1/2 -q -o "$T/p3" &&
    "$FUSEBOX" sweep $SC $GRID --seeds 3 --shard 2/2 -q -o "$T/p3"
cp -r "$T/cwd/out/$name-sweep" "$T/merged-before"
in_cwd "$FUSEBOX" merge "$T"/p3/sweep.part-*-of-2.json
[ "$got" -eq 2 ] && same_files "$T/cwd/out/$name-sweep" "$T/merged-before" sweep.csv sweep.json \
    merge.json
ok $? "merge of other parts without -o exits 2 and leaves the merged sweep there"
contains "$ERR" "out/$name-sweep holds a sweep that was not merged from these parts" \
    "merge names the folder it keeps off"
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds 2 -q -o "$T/cwd/out/$name-sweep" &&
    [ ! -e "$T/cwd/out/$name-sweep/merge.json" ]
ok $? "a sweep into a merged folder removes its merge.json"
in_cwd "$FUSEBOX" merge "$T"/p2/sweep.part-*-of-2.json
[ "$got" -eq 2 ]
ok $? "merge without -o keeps off a sweep it did not merge, even from the same definition"
expect_exit 0 "merge -o writes over any sweep" "$FUSEBOX" merge "$T"/p3/sweep.part-*-of-2.json \
    -o "$T/cwd/out/$name-sweep"
contains "$OUT" "(replacing the sweep that was there)" "merge -o says it replaces a sweep"

# A folder never mixes two sweeps: --no-charts over a sweep with charts removes its page
# and charts, and the wrote line says it replaced a sweep.
cp -r "$T/prev" "$T/nocharts"
expect_exit 0 "--no-charts over a sweep with charts exits 0" "$FUSEBOX" sweep $SC $GRID --seeds 2 \
    --no-charts -o "$T/nocharts"
[ ! -e "$T/nocharts/sweep.html" ] && [ ! -e "$T/nocharts/charts" ] && [ -s "$T/nocharts/sweep.json" ]
ok $? "--no-charts over a sweep with charts leaves no sweep.html or charts/ of the earlier one"
contains "$OUT" "sweep.json (replacing the sweep that was there)" "sweep says it replaced a sweep"

# --jobs never changes the bytes (e2e/sweep.sh compares 1, 2, 3 on a smaller sweep).
# shellcheck disable=SC2086
"$FUSEBOX" sweep $SC $GRID --seeds "$SEEDS" --minimize cost_usd -q --jobs 3 -o "$T/jobs3"
# shellcheck disable=SC2086
same_files "$T/jobs3" "$T/ref" $FILES
ok $? "--jobs 3 writes the bytes of the default --jobs ($SEEDS seeds, charts)"

finish
