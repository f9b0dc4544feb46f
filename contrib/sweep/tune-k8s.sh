#!/bin/sh
# tune-k8s.sh [fusebox tune arguments]: the budgeted search of fusebox tune (docs/tune.md,
# "Beyond one machine") on Kubernetes, round by round (contrib/sweep/k8s/): the ConfigMap
# fusebox-tune (the arguments, one a line, and the scenario files and folders they name, laid
# out as here, and the shard count: tune.yaml's completions, the one place it is written), the
# ReadWriteMany claim (volume.yaml), then the merge Job (tune-merge.yaml), which plans round 1;
# while the merge's pod exits 3, the round as an Indexed Job (tune.yaml, pod i runs
# --shard i+1/N) and the merge again. The state and the answer are in the claim, folder tune.
# Exits with the last merge's status, 0 (or 1: nothing feasible) with tune.json and tune.html
# written, byte-identical to one process's `fusebox tune ARGS`, and its log (the answer)
# printed; 2 when a round's Job failed (naming the failed indexes and printing the first one's
# log: nothing merged, no answer) or the merge failed otherwise (its log printed); 2 before
# anything when an argument names a file outside the working directory or cannot be carried,
# or no node has the CPUs a pod requests.
#
# Assumes what k8s.sh does: kubectl talks to the cluster, in the namespace to use; the image of
# the manifests built from contrib/sweep/Containerfile; a storage class with ReadWriteMany.
# Paths in ARGS are relative to the working directory. Re-running replaces both Jobs; the
# merge goes on from the rounds already in the claim when the arguments are the same (a
# round from other arguments is an error naming it: clear the folder tune first).
set -eu
if [ $# -lt 1 ]; then
    echo "usage: tune-k8s.sh SCENARIO|DIR... --knob ... --minimize|--maximize METRIC ..." >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
D=$here/k8s
# k ARGS: kubectl ARGS, or exit 2 naming it (1 is the tune's "nothing feasible")
k() {
    kubectl "$@" || {
        echo "tune-k8s.sh: kubectl $* failed" >&2
        exit 2
    }
}
# job_wait NAME: until the Job is Complete (0) or Failed (1).
job_wait() {
    while :; do
        state=$(k get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}') || exit 2
        case " $state " in
        *" Complete "*) return 0 ;;
        *" Failed "*) return 1 ;;
        esac
        sleep 10
    done
}
# The CPUs a shard's pod requests, against the largest node's allocatable CPUs (when this user
# may list nodes), as k8s.sh checks
need=$(sed -n 's/.*limits: {cpu: "\([0-9]*\)"}.*/\1/p' "$D/tune.yaml")
if nodes=$(kubectl get nodes -o jsonpath='{.items[*].status.allocatable.cpu}' 2>/dev/null); then
    most=0
    for c in $nodes; do
        case $c in *m) c=$((${c%m} / 1000)) ;; esac
        [ "$c" -gt "$most" ] && most=$c
    done
    if [ "$most" -lt "${need:-1}" ]; then
        echo "tune-k8s.sh: a pod of tune.yaml requests ${need:-1} CPUs, the largest node offers $most: it would pend" >&2
        exit 2
    fi
fi
shards=$(sed -n 's/^  completions: &shards \([0-9]*\)$/\1/p' "$D/tune.yaml")
if [ -z "$shards" ]; then
    echo "tune-k8s.sh: $D/tune.yaml has no line '  completions: &shards N' (the shard count)" >&2
    exit 2
fi
# The ConfigMap: the arguments as tune.args, one a line, and every argument that names a file
# or a folder, at its path, in one gzipped tar that each pod unpacks in its working directory.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/tune"
nl='
'
for a in "$@"; do
    case $a in *"$nl"*)
        echo "tune-k8s.sh: an argument holds a line break; tune.args carries one a line" >&2
        exit 2
        ;;
    esac
    printf '%s\n' "$a" >>"$tmp/tune/tune.args"
    case $a in -*) continue ;; esac
    [ -e "$a" ] || continue
    case /$a/ in */../* | //*)
        echo "tune-k8s.sh: the argument '$a': the pods see only paths below the working directory" >&2
        exit 2
        ;;
    esac
    mkdir -p "$tmp/tune/$(dirname "$a")"
    cp -R "$a" "$tmp/tune/$a"
done
# gzipped: binary, so that kubectl keeps it in binaryData (base64), not as text in data
tar -czf "$tmp/tune.tgz" -C "$tmp/tune" .
k create configmap fusebox-tune --from-file=tune.tgz="$tmp/tune.tgz" \
    --from-literal=shards="$shards" --dry-run=client -o yaml | k apply -f -
k apply -f "$D/volume.yaml"
k delete job tune-round tune-merge --ignore-not-found --cascade=foreground
round=0
while :; do
    k apply -f "$D/tune-merge.yaml"
    job_wait tune-merge || :
    uid=$(k get job tune-merge -o jsonpath='{.metadata.uid}')
    rc=$(k get pods -l "batch.kubernetes.io/controller-uid=$uid" \
        -o jsonpath='{.items[*].status.containerStatuses[0].state.terminated.exitCode}')
    [ "$rc" = 3 ] || break
    k delete job tune-merge --cascade=foreground
    round=$((round + 1))
    echo "tune-k8s.sh: round $round: the Indexed Job tune-round, $shards shards; then the merge"
    k delete job tune-round --ignore-not-found --cascade=foreground
    k apply -f "$D/tune.yaml"
    if ! job_wait tune-round; then
        failed=$(k get job tune-round -o jsonpath='{.status.failedIndexes}')
        first=${failed%%[,-]*}
        echo "tune-k8s.sh: round $round: the Job tune-round failed; failed indexes: $failed (shard index+1 of $shards); not merged, no answer" >&2
        sel="batch.kubernetes.io/job-name=tune-round,batch.kubernetes.io/job-completion-index=$first"
        echo "tune-k8s.sh: index $first's log (kubectl logs -l $sel):" >&2
        kubectl logs -l "$sel" --tail=20 >&2 || :
        exit 2
    fi
done
kubectl logs job/tune-merge || echo "tune-k8s.sh: the merge's log could not be read" >&2
case $rc in
0 | 1)
    echo "tune-k8s.sh: $round rounds of $shards shards; the answer is in the claim sweep-results, folder tune: open tune/tune.html (kubectl cp it from a pod that mounts the claim)"
    exit "$rc"
    ;;
esac
echo "tune-k8s.sh: the merge failed (its pod's exit code: ${rc:-none}); no answer" >&2
exit 2
