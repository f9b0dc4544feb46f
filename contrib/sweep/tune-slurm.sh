#!/bin/sh
# tune-slurm.sh N [fusebox tune arguments]: the budgeted search of fusebox tune (docs/tune.md,
# "Beyond one machine") on Slurm, round by round: a merge job (tune-merge.sbatch) plans round 1;
# then, while the merge exits 3, the round is an array job of N shards (tune.sbatch) on $CPUS
# CPUs each (default: 4, or fewer when the partition's smallest node has fewer) and the next
# merge a job that depends on it (--dependency=afterany, gated on each element's mark: an afterok
# one would pend forever after a failure). Waits for each merge (sbatch --wait) and exits with
# the last one's status: 0 (or 1: nothing feasible) with $OUT/tune.json and tune.html written,
# byte-identical to one process's `fusebox tune ARGS`; else non-zero, with the merge's log.
# Exits 2 when Slurm's client is missing.
#
# Assumes: it runs in a folder that every node sees at the same path, as $OUT (default
# out/tune) and contrib/sweep are; fusebox on the nodes' PATH or $FUSEBOX; paths in ARGS
# relative to this folder. sbatch options such as the partition come from the SBATCH_*
# variables (SBATCH_PARTITION=...).
set -u
if [ $# -lt 2 ]; then
    echo "usage: tune-slurm.sh N SCENARIO|DIR... --knob ... --minimize|--maximize METRIC ..." >&2
    exit 2
fi
n=$1
shift
for tool in sinfo sbatch; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "tune-slurm.sh: $tool is not installed (Debian: apt-get install slurm-client)" >&2
        exit 2
    fi
done
node_cpus=$(sinfo -h -N ${SBATCH_PARTITION:+-p "$SBATCH_PARTITION"} -o %c | sort -n | head -n 1)
if [ -z "$node_cpus" ]; then
    echo "tune-slurm.sh: sinfo lists no node${SBATCH_PARTITION:+ in partition $SBATCH_PARTITION}" >&2
    exit 2
fi
cpus=${CPUS:-$((node_cpus < 4 ? node_cpus : 4))}
case $cpus in '' | *[!0-9]* | 0)
    echo "tune-slurm.sh: CPUS must be a positive integer, got '$cpus'" >&2
    exit 2
    ;;
esac
if [ "$cpus" -gt "$node_cpus" ]; then
    echo "tune-slurm.sh: $cpus CPUs per shard, but the smallest node has $node_cpus" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out/tune}
export OUT
mkdir -p "$OUT"
round=0
jid=none
while :; do
    rc=0
    if [ "$jid" = none ]; then
        mid=$(sbatch --wait --parsable -o "$OUT/slurm-merge-%j.out" \
            "$here/tune-merge.sbatch" none "$n" "$@") || rc=$?
    else
        mid=$(sbatch --wait --parsable --dependency=afterany:"$jid" \
            -o "$OUT/slurm-merge-%j.out" "$here/tune-merge.sbatch" "$jid" "$n" "$@") || rc=$?
    fi
    [ "$rc" -eq 3 ] || break
    round=$((round + 1))
    jid=$(sbatch --parsable --array=1-"$n" --cpus-per-task="$cpus" -o "$OUT/slurm-%A_%a.out" \
        "$here/tune.sbatch" "$@") || exit
    jid=${jid%%;*}
    echo "tune-slurm.sh: round $round: array job $jid, $n shards on $cpus CPUs each; then the merge"
done
if [ "$rc" -le 1 ]; then
    echo "tune-slurm.sh: $round rounds of $n shards; open $OUT/tune.html"
else
    cat "$OUT/slurm-merge-${mid%%;*}.out" 2>/dev/null
fi
exit "$rc"
