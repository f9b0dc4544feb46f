#!/bin/sh
# parallel.sh N [HOSTS [copy]]: run the sweep as N shards with GNU parallel, then merge them
# into $OUT (default out/rs), printing the answer (fusebox merge's) and the page to open. Exits
# 2 when GNU parallel is missing (naming the package), non-zero, without merging, as soon as a shard fails
# (--halt now,fail=1: the other shards are stopped).
#
#   parallel.sh N               on this machine: one shard per CPU at a time, each --jobs 1
#   parallel.sh N HOSTS         over ssh on HOSTS, parallel's --sshlogin list (4/node1,4/node2:
#                               4 shards at a time on each); the working directory must be
#                               shared (NFS), at the same path on every host
#   parallel.sh N HOSTS copy    no shared folder: shard.sh, the sweep file and every file it
#                               names are copied to a scratch folder on each host, the part
#                               files brought back, the scratch removed; needs rsync on this
#                               machine and on every host, and $OUT relative
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
OUT=${OUT:-out/rs}
SWEEP=${SWEEP:-contrib/sweep/retry-storm.args}
export OUT SWEEP
set --
if [ -n "$hosts" ]; then
    set -- --sshlogin "$hosts" --env OUT --env SWEEP
    if [ "$mode" = copy ]; then
        case $OUT in /*) echo "parallel.sh: copy needs a relative OUT, got '$OUT'" >&2 && exit 2 ;; esac
        set -- "$@" --cleanup --basefile contrib/sweep/shard.sh --basefile "$SWEEP" \
            --return "$OUT/sweep.part-{}-of-$n.json"
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
seq 1 "$n" | parallel --halt now,fail=1 "$@" sh contrib/sweep/shard.sh {} "$n" --jobs 1
"${FUSEBOX:-fusebox}" merge "$OUT"/sweep.part-*-of-"$n".json -o "$OUT"
echo "parallel.sh: open $OUT/sweep.html"
