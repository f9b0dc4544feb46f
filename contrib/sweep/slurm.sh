#!/bin/sh
# slurm.sh N [CPUS]: run the sweep on Slurm as an array job of N shards (sweep.sbatch), each on
# CPUS CPUs (default: 4, or fewer when the partition's smallest node has fewer: a request
# above a node's CPUs pends forever), then merge them (merge.sbatch). Waits for the merge and
# exits with its status: 0 only when every shard succeeded and the merge wrote $OUT; then prints
# the merge's answer and the page to open. Exits 2 when Slurm's client is missing.
#
# Assumes: it runs (from any folder) in a folder that every node sees at the same path, as
# $OUT (default out/rs) and contrib/sweep are; fusebox is on the nodes' PATH or $FUSEBOX
# names it; $SWEEP as in shard.sh (the default sweep runs from the folder above contrib/).
# sbatch options such as the partition come from the SBATCH_* variables (SBATCH_PARTITION=...).
set -eu
n=${1:?usage: slurm.sh N [CPUS]}
for tool in sinfo sbatch; do
    if ! command -v $tool >/dev/null 2>&1; then
        echo "slurm.sh: $tool is not installed (Debian: apt-get install slurm-client)" >&2
        exit 2
    fi
done
node_cpus=$(sinfo -h -N ${SBATCH_PARTITION:+-p "$SBATCH_PARTITION"} -o %c | sort -n | head -n 1)
if [ -z "$node_cpus" ]; then
    echo "slurm.sh: sinfo lists no node${SBATCH_PARTITION:+ in partition $SBATCH_PARTITION}" >&2
    exit 2
fi
cpus=${2:-$((node_cpus < 4 ? node_cpus : 4))}
case $cpus in '' | *[!0-9]* | 0)
    echo "slurm.sh: CPUS must be a positive integer, got '$cpus'" >&2
    exit 2
    ;;
esac
if [ "$cpus" -gt "$node_cpus" ]; then
    echo "slurm.sh: $cpus CPUs per shard, but the smallest node has $node_cpus" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-out/rs}
# Without $SWEEP, the default sweep, whose paths are relative to the folder above contrib/ (the
# checkout's root, or PREFIX/share/fusebox): run from there, $OUT staying where it was meant.
root=$(cd "$here/../.." && pwd -P)
if [ -z "${SWEEP:-}" ] && [ "$(pwd -P)" != "$root" ]; then
    case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
    cd "$root"
fi
SWEEP=${SWEEP:-contrib/sweep/retry-storm.args}
# sbatch runs a copy of sweep.sbatch: FUSEBOX_SHARD tells it where shard.sh is
FUSEBOX_SHARD=$here/shard.sh
export OUT SWEEP FUSEBOX_SHARD
mkdir -p "$OUT"
jid=$(sbatch --parsable --array=1-"$n" --cpus-per-task="$cpus" -o "$OUT/slurm-%A_%a.out" \
    "$here/sweep.sbatch")
jid=${jid%%;*}
echo "slurm.sh: array job $jid: $n shards on $cpus CPUs each; then the merge"
mid=$(sbatch --wait --parsable --dependency=afterany:"$jid" -o "$OUT/slurm-merge-%j.out" \
    "$here/merge.sbatch" "$jid" "$n") || rc=$?
cat "$OUT/slurm-merge-${mid%%;*}.out" 2>/dev/null || true
[ "${rc:-0}" -eq 0 ] && echo "slurm.sh: open $OUT/sweep.html"
exit "${rc:-0}"
