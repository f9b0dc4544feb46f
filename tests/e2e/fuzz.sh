#!/bin/sh
# tests/e2e/fuzz.sh - every libFuzzer target of tests/fuzz/ (fuzz_NAME.c, seeds in
# tests/fuzz/corpus/NAME/, a dictionary tests/fuzz/NAME.dict when there is one): built with
# `make V=fuzz CC=clang fuzz-build` (clang, -fsanitize=fuzzer,address,undefined, into
# build/fuzz/; make rebuilds what changed).
#
# The release run fuzzes each target from its seeds for FUZZ_RUNS inputs (default 20000) or
# FUZZ_SECONDS (default 8), whichever comes first, with libFuzzer's seed FUZZ_SEED (default 1:
# the same inputs every run, so CI does not fail on a new find; FUZZ_SEED=0 explores). `make
# fuzz FUZZ_SECONDS=N` runs this suite with N seconds a target and no cap on the inputs. The
# sanitizer run (BUILD=build/asan) replays the checked-in corpora through the same targets
# instead: every seed, under ASan and UBSan, nothing new. The targets run side by side,
# $TEST_JOBS at a time (default: the number of cores). A crash, a leak, undefined behaviour
# or a broken invariant fails the suite; libFuzzer's report and the input are kept in
# out/e2e-fuzz/ (NAME.log, NAME-crash-...). docs/testing.md: running them longer, and how a
# find becomes a regression test.
. tests/tap.sh
L=$(logs_dir fuzz)
case "${BUILD:-}" in
*asan*) MODE=replay ;;
*) MODE=fuzz ;;
esac
TARGETS=$(for f in tests/fuzz/fuzz_*.c; do f=${f##*/fuzz_}; echo "${f%.c}"; done)
# shellcheck disable=SC2086,SC2116
TARGETS=$(echo $TARGETS) # one line

need clang "$L/apt.log" clang
if ! command -v clang >/dev/null 2>&1; then
    for t in $TARGETS; do skip "fuzz target $t" "clang is not installed and could not be (see $L/apt.log)"; done
    finish
    exit 0
fi
# clang alone (Debian's clang without its Recommends) has no libFuzzer or sanitizer runtime:
# they are in libclang-rt-N-dev, N being clang's major version. Link a one-line target to see.
fuzz_links() {
    printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return (int)(n && !d); }\n' \
        >"$E2E_TMP/probe.c"
    clang -fsanitize=fuzzer,address,undefined "$E2E_TMP/probe.c" -o "$E2E_TMP/probe" \
        >"$L/probe.log" 2>&1
}
if ! fuzz_links; then
    major=$(clang -dumpversion | cut -d. -f1)
    _sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    { $_sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $_sudo apt-get install -y -qq --no-install-recommends "libclang-rt-$major-dev"; } \
        >>"$L/apt.log" 2>&1
    if ! fuzz_links; then
        sed 's/^/# /' "$L/probe.log" | tail -n 5
        for t in $TARGETS; do
            skip "fuzz target $t" "clang cannot link libFuzzer (-fsanitize=fuzzer: libclang-rt-$major-dev is missing and could not be installed, see $L/apt.log and $L/probe.log)"
        done
        finish
        exit 0
    fi
fi
make --no-print-directory V=fuzz CC=clang -j2 fuzz-build >"$L/build.log" 2>&1
r=$?
[ $r -ne 0 ] && grep -E 'error|Error' "$L/build.log" | head -n 20 | sed 's/^/# /'
ok $r "build the fuzz targets (clang, libFuzzer, ASan, UBSan): $TARGETS"
if [ $r -ne 0 ]; then
    finish
    exit 1
fi

# fuzz_one T: fuzz target T (or replay its seeds), libFuzzer's output in $L/T.log, its exit
# code in $E2E_TMP/T.rc; report_one T: T's test line.
fuzz_one() {
    _t=$1
    BIN=$ROOT/build/fuzz/fuzz/fuzz_$_t
    SEEDS=$ROOT/tests/fuzz/corpus/$_t
    rm -f "$L/$_t"-crash-* "$L/$_t"-leak-* "$L/$_t"-timeout-* "$L/$_t"-oom-*
    if [ "$MODE" = replay ]; then
        # every seed once, as files: libFuzzer runs them and adds nothing
        (cd "$L" && ASAN_OPTIONS=detect_leaks=1 "$BIN" -artifact_prefix="$L/$_t-" -timeout=30 \
            -rss_limit_mb=2048 "$SEEDS"/*) >"$L/$_t.log" 2>&1
        echo $? >"$E2E_TMP/$_t.rc"
        return
    fi
    # the seeds are copied: libFuzzer writes what it finds new into the corpus folder
    rm -rf "${E2E_TMP:?}/$_t"
    cp -r "$SEEDS" "$E2E_TMP/$_t"
    DICT=
    [ -f "tests/fuzz/$_t.dict" ] && DICT=-dict=$ROOT/tests/fuzz/$_t.dict
    # shellcheck disable=SC2086
    (cd "$L" && ASAN_OPTIONS=detect_leaks=1 "$BIN" "$E2E_TMP/$_t" -artifact_prefix="$L/$_t-" $DICT \
        -runs="${FUZZ_RUNS:-20000}" -seed="${FUZZ_SEED:-1}" -max_total_time="${FUZZ_SECONDS:-8}" \
        -max_len=16384 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1) >"$L/$_t.log" 2>&1
    echo $? >"$E2E_TMP/$_t.rc"
}
report_one() {
    _t=$1
    n=$(find "$ROOT/tests/fuzz/corpus/$_t" -type f | wc -l)
    r=$(cat "$E2E_TMP/$_t.rc" 2>/dev/null || echo 1)
    [ "$r" -ne 0 ] && tail -n 30 "$L/$_t.log" | sed 's/^/# /'
    if [ "$MODE" = replay ]; then
        ok "$r" "$_t: the $n seeds replay under ASan and UBSan without a crash, a leak or a broken invariant"
        return
    fi
    done_=$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$L/$_t.log")
    ok "$r" "$_t: libFuzzer from $n seeds finds no crash, leak or broken invariant (${done_:-did not finish})"
}

# The targets are independent processes: $TEST_JOBS lanes (default: the number of cores), each
# taking the next target no lane took (mkdir is atomic), so that a target that stops early at
# FUZZ_RUNS does not leave its core idle until its pair's time is up.
JOBS=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
lane() {
    for t in $TARGETS; do
        mkdir "$E2E_TMP/claim-$t" 2>/dev/null && fuzz_one "$t"
    done
}
pids=''
while [ "$JOBS" -gt 0 ]; do
    lane &
    pids="$pids $!"
    JOBS=$((JOBS - 1))
done
wait $pids
for t in $TARGETS; do report_one "$t"; done
finish
