#!/bin/sh
# tests/e2e/fuzz_import.sh - the import's readers under libFuzzer (tests/fuzz/fuzz_import.c):
# built with clang -fsanitize=fuzzer,address,undefined from the sources of core/, sim/ and
# import/ into out/fuzz-import/ (rebuilt when a source changes), then run from the seeds in
# tests/fuzz/corpus/import/ for FUZZ_RUNS inputs (default 30000) or FUZZ_SECONDS (default
# 60), whichever comes first, with libFuzzer's seed FUZZ_SEED (default 1: the same inputs
# every run, so CI does not fail on a new find; FUZZ_SEED=0 explores, e.g. with
# FUZZ_SECONDS=600 FUZZ_RUNS=100000000). A crash, a leak, undefined behaviour or a scenario
# the loader rejects fails the suite; libFuzzer's report and the input are kept in
# out/e2e-fuzz_import/.
. tests/tap.sh
T=$E2E_TMP
OUTD=$ROOT/out/fuzz-import
L=$(logs_dir fuzz_import)
mkdir -p "$OUTD"

case "${BUILD:-}" in
*asan*)
    # the target is fusebox's sources built anew with its own sanitizers: one run is enough
    skip "build the import fuzz target" "the release run fuzzes (the target has its own ASan and UBSan)"
    finish
    exit 0
    ;;
esac
need clang "$OUTD/apt.log" clang
if ! command -v clang >/dev/null 2>&1; then
    skip "build the import fuzz target" "clang is not installed and could not be (see $OUTD/apt.log)"
    finish
    exit 0
fi
SRC="tests/fuzz/fuzz_import.c $(ls core/*.c sim/*.c import/*.c)"
# shellcheck disable=SC2086
STAMP=$(cat $SRC core/*.h sim/*.h import/*.h | cksum | cut -d' ' -f1)
BIN=$OUTD/fuzz_import
if [ "$(cat "$OUTD/stamp" 2>/dev/null)" != "$STAMP" ] || [ ! -x "$BIN" ]; then
    LIBS="$(pkg-config --libs libcjson 2>/dev/null || echo -lcjson) $(pkg-config --libs yaml-0.1 2>/dev/null || echo -lyaml) -lm"
    # shellcheck disable=SC2086
    clang -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I. -O1 -g \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined $SRC $LIBS \
        -o "$BIN" >"$OUTD/build.log" 2>&1
    r=$?
    [ $r -eq 0 ] && echo "$STAMP" >"$OUTD/stamp"
else
    r=0
fi
[ $r -ne 0 ] && sed 's/^/# /' "$OUTD/build.log" | head -n 20
ok $r "build the import fuzz target (clang, libFuzzer, ASan, UBSan)"
if [ $r -ne 0 ]; then
    finish
    exit 1
fi

mkdir -p "$T/corpus"
cp tests/fuzz/corpus/import/* "$T/corpus/"
(cd "$L" && ASAN_OPTIONS=detect_leaks=1 "$BIN" "$T/corpus" -runs="${FUZZ_RUNS:-30000}" \
    -seed="${FUZZ_SEED:-1}" -max_total_time="${FUZZ_SECONDS:-60}" -max_len=16384 -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1) >"$L/fuzz.log" 2>&1
r=$?
[ $r -ne 0 ] && tail -n 30 "$L/fuzz.log" | sed 's/^/# /'
ok $r "libFuzzer finds no crash, leak or undefined behaviour in the readers and the fitting"
grep -q "Done [0-9]* runs" "$L/fuzz.log"
ok $? "... having run to the end ($(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "$L/fuzz.log"))"
finish
