#!/bin/sh
# sweep_k8s.sh - the Kubernetes recipe of docs/sweeps.md (contrib/sweep/k8s/, k8s.sh,
# Containerfile). No cluster runs it here: the suite checks that the manifests hold together
# (Indexed, backoffLimitPerIndex set, the claim ReadWriteMany, the ConfigMap items are the
# files k8s.sh puts in it), runs the Indexed Job's container command verbatim once per index
# with JOB_COMPLETION_INDEX and the manifest's environment set (fusebox and fusebox-shard on
# PATH, as in the image), then the merge Job's command, and compares the result byte for byte
# with a single-process sweep; and it checks that the Containerfile installs the package of
# every library fusebox links, and drives k8s.sh against a stand-in kubectl (the order of its
# steps, its exit codes). Orchestration, not memory: skipped under asan.
. tests/tap.sh
. tests/e2e/sweep_engines.subr
T=$E2E_TMP
L=$(logs_dir sweep_k8s)
engines_asan "the Kubernetes recipe"
# python3-yaml has no command of its own for need to look for: a name that is never there
python3 -c "import yaml" 2>/dev/null || need python3-yaml-module "$L/apt.log" python3-yaml
if ! python3 -c 'import yaml' 2>/dev/null; then
    skip "the Kubernetes recipe" "python3-yaml is not installed and could not be (see $L/apt.log)"
    finish
    exit 0
fi

check "docs/sweeps.md quotes k8s/job.yaml verbatim" python3 tests/e2e/doc_files.py docs/sweeps.md \
    contrib/sweep/k8s/job.yaml

engines_setup

# The checks and the runs, in Python (yaml). Prints TAP-like "RESULT 0|1 NAME" lines.
cat >"$T/k8s.py" <<'PY'
import os, re, subprocess, sys, yaml
d, tmp, sweep = "contrib/sweep/k8s", sys.argv[1], sys.argv[2]
def res(ok, name, why=""):
    print("RESULT %d %s" % (0 if ok else 1, name))
    if not ok and why: print("# " + why)
job = yaml.safe_load(open(d + "/job.yaml"))
merge = yaml.safe_load(open(d + "/merge.yaml"))
pvc = yaml.safe_load(open(d + "/volume.yaml"))
sh = open("contrib/sweep/k8s.sh").read()
s = job["spec"]; pod = s["template"]["spec"]; c = pod["containers"][0]
res(s.get("completionMode") == "Indexed", "job.yaml is an Indexed Job")
res(isinstance(s.get("backoffLimitPerIndex"), int) and pod.get("restartPolicy") == "Never",
    "job.yaml sets backoffLimitPerIndex (with restartPolicy Never, which it needs)")
vols = {v["name"]: v for v in pod["volumes"]}
claim = vols["results"]["persistentVolumeClaim"]["claimName"]
res(claim == pvc["metadata"]["name"] and pvc["spec"]["accessModes"] == ["ReadWriteMany"],
    "the Job's claim is volume.yaml's, ReadWriteMany")
cm = vols["sweep"]["configMap"]
files = re.findall(r"--from-file=(\S+)", sh)
res(re.search(r"create configmap %s " % cm["name"], sh) is not None and
    sorted((i["key"], i["path"]) for i in cm["items"]) == sorted((os.path.basename(f), f) for f in files)
    and all(os.path.isfile(f) for f in files),
    "the ConfigMap items are the files k8s.sh puts in it, at their checkout paths",
    "items %s, k8s.sh --from-file %s" % (cm["items"], files))
env = {e["name"]: e.get("value") for e in c["env"]}
cpus = c["resources"]["limits"]["cpu"]
res(env.get("SWEEP") in files and any(l.strip() in files for l in open(env["SWEEP"])),
    "the Job's sweep file and its scenario are in the ConfigMap")
res(c["env"][-1].get("valueFrom", {}).get("resourceFieldRef", {}).get("resource") == "limits.cpu",
    "the shard's --jobs is its CPU limit (Downward API)")
base = {"PATH": tmp + "/bin:/usr/bin:/bin", "HOME": tmp}
def pod_env(over, index=None):
    e = dict(base); e.update({k: v for k, v in env.items() if v is not None})
    e["CPUS"] = str(cpus); e.update(over)
    if index is not None: e["JOB_COMPLETION_INDEX"] = str(index)
    return e
out = tmp + "/k8s"
bad = [i for i in range(s["completions"])
       if subprocess.run(c["command"], env=pod_env({"SWEEP": sweep, "OUT": out}, i)).returncode]
res(not bad, "the Indexed Job's command succeeds for JOB_COMPLETION_INDEX 0..%d" % (s["completions"] - 1),
    "failed indexes: %s" % bad)
mc = merge["spec"]["template"]["spec"]["containers"][0]
menv = dict(base); menv.update({e["name"]: e["value"] for e in mc["env"]}); menv["OUT"] = out
res(subprocess.run(mc["command"], env=menv).returncode == 0, "the merge Job's command succeeds")
e = pod_env({"SWEEP": sweep, "OUT": tmp + "/k8s-failing", "PATH": tmp + "/failing:" + base["PATH"]}, 1)
res(subprocess.run(c["command"], env=e, stderr=subprocess.DEVNULL).returncode != 0,
    "a pod whose shard fails exits non-zero (the Job retries or fails the index)")
PY
mkdir -p "$T/failing"
printf '#!/bin/sh\necho "stand-in: this shard fails" >&2\nexit 1\n' >"$T/failing/fusebox"
chmod +x "$T/failing/fusebox"
python3 "$T/k8s.py" "$T" "$ARGS" >"$T/k8s.out" 2>"$L/k8s.err"
[ -s "$T/k8s.out" ] || echo "# the checks did not run: $(head -n 5 "$L/k8s.err")"
while IFS= read -r line; do
    case $line in
    "RESULT "*)
        r=${line#RESULT }
        ok "${r%% *}" "${r#* }"
        ;;
    *) echo "$line" ;;
    esac
done <"$T/k8s.out"
same_single "$T/k8s"
ok $? "the Indexed Job's shards merged == the single-process sweep, byte for byte"

# k8s.sh against a stand-in kubectl that logs its calls and answers what the test sets:
# $NODES (allocatable CPUs), $STATE (the Job's true conditions).
mkdir -p "$T/kube"
cat >"$T/kube/kubectl" <<KUBE
#!/bin/sh
echo "\$*" >>"$T/kube/calls"
case "\$*" in
"get nodes"*) echo "\$NODES" ;;
*failedIndexes*) printf 1 ;;
"get job rs-sweep"*) echo "\$STATE " ;;
"get job rs-merge"*) echo "Complete " ;;
"apply -f -") cat >/dev/null ;;
esac
KUBE
chmod +x "$T/kube/kubectl"
kube() { rm -f "$T/kube/calls"; run_kept env PATH="$T/kube:$PATH" NODES="$1" STATE="$2" sh contrib/sweep/k8s.sh; }
kube "4 1500m" Complete
# the ConfigMap is `create --dry-run -o yaml | apply -f -`: the two ends of the pipe run at once
# and may log in either order
calls=$(cut -d' ' -f1-3 "$T/kube/calls" | tr '\n' ';' |
    sed 's/;apply -f -;create configmap fusebox-sweep;/;create configmap fusebox-sweep;apply -f -;/')
[ "$got" -eq 0 ] && [ "$calls" = "get nodes -o;create configmap fusebox-sweep;apply -f -;\
apply -f contrib/sweep/k8s/volume.yaml;delete job rs-sweep;apply -f contrib/sweep/k8s/job.yaml;\
get job rs-sweep;apply -f contrib/sweep/k8s/merge.yaml;get job rs-merge;" ] ||
    { echo "# exit $got; calls: $calls" && false; }
ok $? "k8s.sh (stand-in kubectl): ConfigMap, claim, Job, wait, merge, in that order, exit 0"
kube 4 "FailureTarget Failed"
[ "$got" -eq 1 ] && ! grep -q merge.yaml "$T/kube/calls"
ok $? "k8s.sh exits 1 and does not merge when the Job failed (exit $got)"
contains "$ERR" "failed indexes: 1" "k8s.sh names the failed indexes"
kube "1 1500m" Complete
[ "$got" -eq 2 ] && ! grep -q apply "$T/kube/calls"
ok $? "k8s.sh exits 2 before applying anything when no node has a shard's CPUs (exit $got)"

# The image: every library fusebox links comes from a package the Containerfile installs.
# (the packages named in the runtime stage: after the second FROM)
runtime=$(awk '/^FROM/ { n++ } n == 2' contrib/sweep/Containerfile | tr ' \\' '\n\n' | grep -E '^lib|^gnuplot')
triplet=$(cc -dumpmachine)
missing=
for lib in $(readelf -d "$FUSEBOX" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    pkg=$(dpkg -S "*/$triplet/$lib" 2>/dev/null | head -n 1 | cut -d: -f1)
    [ "$pkg" = libc6 ] && continue # in the base image
    echo "$runtime" | grep -qx "$pkg" || missing="$missing $lib ($pkg)"
done
[ -n "$runtime" ] && [ -z "$missing" ]
ok $? "the Containerfile installs the package of every library fusebox links${missing:+; missing:$missing}"
finish
