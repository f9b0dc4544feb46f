#!/bin/sh
# k8s.sh [nightly]: run the sweep that $SWEEP lists (as in shard.sh) on Kubernetes
# (contrib/sweep/k8s/): the ConfigMap fusebox-sweep (the sweep file and the files it names, laid
# out as here, and the shard count: job.yaml's completions, the one place it is written), the
# ReadWriteMany claim, the Indexed Job (job.yaml), and once every index has succeeded, the
# merge (merge.yaml). Exits 0 when the merge has written the outputs into the claim, 1 when the
# Job or the merge failed (naming the failed indexes), 2 before anything when the sweep file
# cannot be read or names a file outside the working directory, or no node has the CPUs a pod
# requests.
#
# k8s.sh nightly: the same ConfigMap and claim, then the CronJob of k8s/nightly.yaml (nightly.sh
# in one pod, every night); exits 0 once they are applied.
#
# Assumes: kubectl talks to the cluster, in the namespace to use; the image of the manifests
# was built from contrib/sweep/Containerfile and pushed where the cluster pulls from; the
# claim's storage class offers ReadWriteMany (k8s/volume.yaml). It runs from any folder:
# $SWEEP's paths are relative to the working directory (the default sweep's, to the folder
# above contrib/). Re-running replaces both Jobs (a Job's template cannot be changed in place).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
D=$here/k8s
mode=${1:-run}
case $mode in
run) manifest=$D/job.yaml ;;
nightly) manifest=$D/nightly.yaml ;;
*)
    echo "usage: k8s.sh [nightly]" >&2
    exit 2
    ;;
esac
# job_wait NAME: until the Job is Complete (0) or Failed (1).
job_wait() {
    while :; do
        state=$(kubectl get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
        case " $state " in
        *" Complete "*) return 0 ;;
        *" Failed "*)
            echo "k8s.sh: job $1 failed; failed indexes: $(kubectl get job "$1" -o jsonpath='{.status.failedIndexes}')" >&2
            return 1
            ;;
        esac
        sleep 10
    done
}
# The CPUs a pod requests, against the largest node's allocatable CPUs (when this user may
# list nodes: many may not, and then the check is left to the scheduler).
need=$(sed -n 's/.*limits: {cpu: "\([0-9]*\)"}.*/\1/p' "$manifest")
if nodes=$(kubectl get nodes -o jsonpath='{.items[*].status.allocatable.cpu}' 2>/dev/null); then
    most=0
    for c in $nodes; do
        case $c in *m) c=$((${c%m} / 1000)) ;; esac
        [ "$c" -gt "$most" ] && most=$c
    done
    if [ "$most" -lt "${need:-1}" ]; then
        echo "k8s.sh: a pod of ${manifest##*/} requests ${need:-1} CPUs, the largest node offers $most: it would pend" >&2
        exit 2
    fi
fi
# The ConfigMap: the sweep file as sweep.args and the files it names (its lines that name a
# file, as parallel.sh's copy form finds them) at their paths, in one gzipped tar that each pod
# unpacks in its working directory; and the shard count.
# Without $SWEEP, the default sweep, whose paths are relative to the folder above contrib/
if [ -z "${SWEEP:-}" ]; then cd "$here/../.."; fi
sweep=${SWEEP:-contrib/sweep/retry-storm.args}
if [ ! -r "$sweep" ]; then
    echo "k8s.sh: cannot read the sweep file '$sweep' (set SWEEP)" >&2
    exit 2
fi
shards=$(sed -n 's/^  completions: &shards \([0-9]*\)$/\1/p' "$D/job.yaml")
if [ -z "$shards" ]; then
    echo "k8s.sh: $D/job.yaml has no line '  completions: &shards N' (the shard count)" >&2
    exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/sweep"
cp "$sweep" "$tmp/sweep/sweep.args"
while IFS= read -r line || [ -n "$line" ]; do
    case $line in '' | '#'* | -*) continue ;; esac
    [ -f "$line" ] || continue
    case /$line/ in */../* | //*)
        echo "k8s.sh: $sweep names '$line': the pods see only paths below the working directory" >&2
        exit 2
        ;;
    esac
    mkdir -p "$tmp/sweep/$(dirname "$line")"
    cp "$line" "$tmp/sweep/$line"
done <"$sweep"
# gzipped: binary, so that kubectl keeps it in binaryData (base64), not as text in data
tar -czf "$tmp/sweep.tgz" -C "$tmp/sweep" .
set -- --from-file=sweep.tgz="$tmp/sweep.tgz" --from-literal=shards="$shards"
kubectl create configmap fusebox-sweep "$@" --dry-run=client -o yaml | kubectl apply -f -
kubectl apply -f "$D/volume.yaml"
if [ "$mode" = nightly ]; then
    kubectl apply -f "$manifest"
    echo "k8s.sh: the CronJob rs-nightly runs nightly.sh at 02:17 UTC; the nights are in the claim sweep-results, folder nightly"
    exit 0
fi
kubectl delete job rs-sweep rs-merge --ignore-not-found
kubectl apply -f "$D/job.yaml"
job_wait rs-sweep
kubectl apply -f "$D/merge.yaml"
job_wait rs-merge
kubectl logs job/rs-merge || echo "k8s.sh: merged, but its log (the answer) could not be read" >&2
echo "k8s.sh: merged into the claim sweep-results, folder rs: open rs/sweep.html (kubectl cp it from a pod that mounts the claim)"
