#!/bin/sh
# parallel.sh N [HOSTS [copy]]: run the sweep as N shards with GNU parallel, then merge them
# into $OUT (default out/rs), printing the answer (fusebox merge's) and the page to open. Exits
# 2 when GNU parallel is missing (naming the package), non-zero, without merging, as soon as a shard fails
# (--halt now,fail=1: the other shards are stopped).
#
#   parallel.sh N               on this machine: one shard per CPU at a time, each --jobs 1
#   parallel.sh N HOSTS         over ssh on HOSTS, parallel's --sshlogin list (4/node1,4/node2:
#                               4 shards at a time on each); the working directory must be
#                               shared (NFS), at the same path on every host, and so must
#                               this folder (contrib/sweep) be
#   parallel.sh N HOSTS copy    no shared folder: shard.sh, the sweep file and every file it
#                               names are copied to a scratch folder on each host, the part
#                               files brought back, the scratch removed; needs rsync on this
#                               machine and on every host, and $OUT relative
#
# It runs from any folder: $SWEEP's paths and $OUT are relative to the working directory (the
# default sweep's, to the folder above contrib/; the copy form then runs from that folder).
#
# Assumes: fusebox on PATH here and on every host (or $FUSEBOX, passed to the hosts only when
# the folder is shared); $SWEEP as in shard.sh; ssh to HOSTS without a password ($PARALLEL_SSH
# replaces ssh).
set -eu
n=${1:?usage: parallel.sh N [HOSTS [copy]]}
if ! command -v parallel >/dev/null 2>&1; then
    echo "parallel.sh: GNU parallel is not installed (Debian: apt-get install parallel)" >&2
    exit 2
fi
hosts=${2:-}
mode=${3:-shared}
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out/rs}
# Without $SWEEP, the default sweep, whose paths are relative to the folder above contrib/ (the
# checkout's root, or PREFIX/share/fusebox): run from there, $OUT staying where it was meant.
root=$(cd "$here/../.." && pwd -P)
if [ -z "${SWEEP:-}" ] && [ "$(pwd -P)" != "$root" ]; then
    if [ "$mode" = copy ]; then
        echo "parallel.sh: copy with the default sweep runs from $root (or set SWEEP)" >&2
        exit 2
    fi
    case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
    cd "$root"
fi
SWEEP=${SWEEP:-contrib/sweep/retry-storm.args}
export OUT SWEEP
set --
if [ -n "$hosts" ]; then
    set -- --sshlogin "$hosts" --env OUT --env SWEEP
    if [ "$mode" = copy ]; then
        case $OUT in /*) echo "parallel.sh: copy needs a relative OUT, got '$OUT'" >&2 && exit 2 ;; esac
        # $OUT's own basefile keeps it on every host until the last shard there is done: a
        # shard's --cleanup removes its part file and then its folder when empty, under the
        # feet of a shard on the same host that is still to write there
        mkdir -p "$OUT" && : >"$OUT/.parallel-keep"
        set -- "$@" --cleanup --basefile "$root/./contrib/sweep/shard.sh" --basefile "$SWEEP" \
            --basefile "$OUT/.parallel-keep" --return "$OUT/sweep.part-{}-of-$n.json"
        while IFS= read -r line || [ -n "$line" ]; do
            case $line in '' | '#'* | -*) continue ;; esac
            if [ -f "$line" ]; then set -- "$@" --basefile "$line"; fi
        done <"$SWEEP"
    else
        set -- "$@" --workdir .
        if [ -n "${FUSEBOX:-}" ]; then set -- "$@" --env FUSEBOX; fi
    fi
fi
mkdir -p "$OUT"
# in the copy form, shard.sh is in the scratch folder (at its path below /./), else beside this
shard=$here/shard.sh
[ "$mode" = copy ] && [ -n "$hosts" ] && shard=contrib/sweep/shard.sh
rc=0
seq 1 "$n" | parallel --halt now,fail=1 "$@" sh "$shard" {} "$n" --jobs 1 || rc=$?
rm -f "$OUT/.parallel-keep"
[ "$rc" -eq 0 ] || exit "$rc"
"${FUSEBOX:-fusebox}" merge "$OUT"/sweep.part-*-of-"$n".json -o "$OUT"
echo "parallel.sh: open $OUT/sweep.html"
