#!/bin/sh
# tune-rounds.sh N [fusebox tune arguments]: the budgeted search of fusebox tune (docs/tune.md,
# "Beyond one machine") round by round, each round's runs as N shards run by GNU parallel:
#
#   fusebox tune ARGS --merge N -o $OUT        plans round 1 (exit 3: a round is planned)
#   parallel fusebox tune ARGS --shard {}/N    runs the round's runs, shard K of N each
#   fusebox tune ARGS --merge N -o $OUT        merges them, plans the next round (exit 3) or
#                                              writes the answer (exit 0, or 1: nothing feasible)
#
# until the merge writes the answer: $OUT/tune.json and tune.html, byte-identical to one
# process's `fusebox tune ARGS -o $OUT`. The same loop drives any batch engine: on Slurm, each
# round an array job (--array=1-N, each element --shard $SLURM_ARRAY_TASK_ID/N) and the merge
# a job that depends on it (tune-slurm.sh); on Kubernetes, an indexed Job per round
# and a merge Job (tune-k8s.sh).
#
# Exits with the last merge's status (0 or 1 with the answer written), 2 when GNU parallel is
# missing (naming the package), or a failing shard's status (--halt now,fail=1: unmerged).
# Assumes: fusebox on PATH or $FUSEBOX; OUT (default out/tune) the state and output folder.
set -u
if [ $# -lt 2 ]; then
    echo "usage: tune-rounds.sh N SCENARIO|DIR... --knob ... --minimize|--maximize METRIC ..." >&2
    exit 2
fi
n=$1
shift
if ! command -v parallel >/dev/null 2>&1; then
    echo "tune-rounds.sh: GNU parallel is not installed (Debian: apt-get install parallel)" >&2
    exit 2
fi
fusebox=${FUSEBOX:-fusebox}
OUT=${OUT:-out/tune}
round=0
while :; do
    "$fusebox" tune "$@" --merge "$n" -q -o "$OUT"
    rc=$?
    [ "$rc" -eq 3 ] || break
    round=$((round + 1))
    # each shard on one core: parallel runs one shard per CPU at a time
    # -q: the arguments as they are, not through a shell (a ">=" is no redirection)
    seq 1 "$n" | parallel -q --halt now,fail=1 "$fusebox" tune "$@" --shard {}/"$n" --jobs 1 -q \
        -o "$OUT" || exit $?
done
[ "$rc" -le 1 ] && echo "tune-rounds.sh: $round rounds of $n shards; open $OUT/tune.html"
exit "$rc"
