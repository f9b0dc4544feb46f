#!/bin/sh
# shard.sh K N [fusebox sweep options]: shard K of N of the sweep that $SWEEP lists, written
# to $OUT/sweep.part-K-of-N.json for fusebox merge (docs/sweeps.md, "Batch engines").
#
#   SWEEP    the sweep file (default contrib/sweep/retry-storm.args): fusebox sweep's
#            arguments, one per line, taken as they are (no quoting, so '>=' is safe);
#            blank lines and lines starting with # are skipped. Paths in it are relative to
#            the working directory; those of the default, to the folder above contrib/ (the
#            checkout's root, or PREFIX/share/fusebox), from whatever folder it runs.
#   OUT      the output folder (default out/rs); every shard of a sweep writes to the same one
#   FUSEBOX  the fusebox binary (default: fusebox, found on PATH)
#
# Exits with fusebox's status: 0 when the shard's part file is written.
set -u
if [ $# -lt 2 ]; then
    echo "usage: shard.sh K N [fusebox sweep options]" >&2
    exit 2
fi
k=$1 n=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out/rs}
# Without $SWEEP, the default sweep, whose paths are relative to the folder above contrib/:
# run from there, $OUT staying where it was meant (installed as fusebox-shard, there is none).
if [ -z "${SWEEP:-}" ] && [ -r "$here/retry-storm.args" ]; then
    case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
    cd "$here/../.." || exit 2
fi
sweep=${SWEEP:-contrib/sweep/retry-storm.args}
fusebox=${FUSEBOX:-fusebox}
if ! command -v "$fusebox" >/dev/null 2>&1; then
    echo "shard.sh: '$fusebox' not found: put fusebox on PATH or set FUSEBOX" >&2
    exit 2
fi
if [ ! -r "$sweep" ]; then
    echo "shard.sh: cannot read the sweep file '$sweep' (set SWEEP)" >&2
    exit 2
fi
# The sweep's arguments after the caller's options: fusebox sweep takes them in any order.
while IFS= read -r line || [ -n "$line" ]; do
    case $line in '' | '#'*) continue ;; esac
    set -- "$@" "$line"
done <"$sweep"
exec "$fusebox" sweep "$@" --shard "$k/$n" -q -o "$OUT"
