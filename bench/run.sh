#!/bin/sh
# bench/run.sh BUILD_DIR - run every benchmark binary and print its figures.
# Benchmarks print numbers; they never pass or fail on a stopwatch.
set -u
BUILD=${1:?usage: bench/run.sh BUILD_DIR}
cd "$(dirname "$0")/.." || exit 2
echo "fusebox benchmarks ($(uname -m), $(nproc) cores, $(date -u +%Y-%m-%d))"
for bin in "$BUILD"/bench/bench_*; do
    case "$bin" in *.o | *.d) continue ;; esac
    [ -x "$bin" ] || continue
    echo
    echo "== $(basename "$bin")"
    "$bin" || echo "($(basename "$bin") exited $?)"
done
for script in bench/*.sh; do
    [ "$(basename "$script")" = run.sh ] && continue
    [ -f "$script" ] || continue
    echo
    echo "== $(basename "$script" .sh)"
    BUILD=$BUILD sh "$script" || echo "($(basename "$script") exited $?)"
done
