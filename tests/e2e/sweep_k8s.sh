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

check "docs/sweeps.md quotes k8s/job.yaml and k8s/nightly.yaml verbatim" python3 tests/e2e/doc_files.py \
    docs/sweeps.md contrib/sweep/k8s/job.yaml contrib/sweep/k8s/nightly.yaml

engines_setup

# A stand-in kubectl that logs its calls and answers what the test sets: $NODES (allocatable
# CPUs), $STATE (the Job's true conditions). `create configmap` lays the ConfigMap out in
# $T/cm as its volume shows it to the pods: a file per key.
mkdir -p "$T/kube"
cat >"$T/kube/kubectl" <<KUBE
#!/bin/sh
echo "\$*" >>"$T/kube/calls"
case "\$*" in
"create configmap"*)
    rm -rf "$T/cm" && mkdir -p "$T/cm"
    for a in "\$@"; do
        case \$a in
        --from-file=*=*) a=\${a#--from-file=} && cp "\${a#*=}" "$T/cm/\${a%%=*}" ;;
        --from-literal=*=*) a=\${a#--from-literal=} && printf %s "\${a#*=}" >"$T/cm/\${a%%=*}" ;;
        esac
    done
    ;;
"get nodes"*) echo "\$NODES" ;;
*failedIndexes*) printf 1 ;;
"get job rs-sweep"*) echo "\$STATE " ;;
"get job rs-merge"*) echo "Complete " ;;
"logs job/rs-merge") echo "best: point 7 (the merge's answer)" ;;
"apply -f -") cat >/dev/null ;;
esac
KUBE
chmod +x "$T/kube/kubectl"
# kube NODES STATE [SWEEP [MODE]]: k8s.sh [MODE] against it, its output in $OUT/$ERR, its exit
# code in $got
kube() {
    rm -f "$T/kube/calls"
    run_kept env PATH="$T/kube:$PATH" NODES="$1" STATE="$2" SWEEP="${3:-}" sh contrib/sweep/k8s.sh ${4:+"$4"}
}

# k8s.sh with the suite's sweep ($SWEEP honoured): the ConfigMap the pods below run in
kube "4 1500m" Complete "$ARGS"
[ "$got" -eq 0 ] && [ "$(tar -tf "$T/cm/sweep.tgz" | sort | tr '\n' ' ')" = \
    "./ ./sweep.args ./tests/ ./tests/e2e/ ./tests/e2e/sweep-small.json " ] &&
    [ "$(cat "$T/cm/shards")" = "$(sed -n 's/^  completions: &shards //p' contrib/sweep/k8s/job.yaml)" ]
ok $? "k8s.sh with SWEEP=$ARGS exits 0 (got $got); its ConfigMap: the sweep file and its scenario, the shard count"
cp -r "$T/cm" "$T/cm-small"

# The checks and the runs, in Python (yaml). Prints TAP-like "RESULT 0|1 NAME" lines.
cat >"$T/k8s.py" <<'PY'
import os, re, subprocess, sys, tarfile, tempfile, yaml
d, tmp, cm = "contrib/sweep/k8s", sys.argv[1], sys.argv[2]
def res(ok, name, why=""):
    print("RESULT %d %s" % (0 if ok else 1, name))
    if not ok and why: print("# " + why)
def code(path):  # a file's text without its comments
    return "".join(l for l in open(path) if not l.lstrip().startswith("#"))
job = yaml.safe_load(open(d + "/job.yaml"))
merge = yaml.safe_load(open(d + "/merge.yaml"))
pvc = yaml.safe_load(open(d + "/volume.yaml"))
sh = open("contrib/sweep/k8s.sh").read()
s = job["spec"]; pod = s["template"]["spec"]; c = pod["containers"][0]
mc = merge["spec"]["template"]["spec"]["containers"][0]
res(s.get("completionMode") == "Indexed", "job.yaml is an Indexed Job")
res(isinstance(s.get("backoffLimitPerIndex"), int) and pod.get("restartPolicy") == "Never",
    "job.yaml sets backoffLimitPerIndex (with restartPolicy Never, which it needs)")
vols = {v["name"]: v for v in pod["volumes"]}
claim = vols["results"]["persistentVolumeClaim"]["claimName"]
res(claim == pvc["metadata"]["name"] and pvc["spec"]["accessModes"] == ["ReadWriteMany"],
    "the Job's claim is volume.yaml's, ReadWriteMany")
cmname = vols["config"]["configMap"]["name"]
mount = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
res(re.search(r"create configmap %s " % cmname, sh) is not None and "emptyDir" in vols["sweep"]
    and mount["sweep"] == c["workingDir"] and c["command"][-1].startswith("tar -xzf %s/sweep.tgz && " % mount["config"]),
    "each pod unpacks k8s.sh's ConfigMap's tar into its working directory, an emptyDir")
env = {e["name"]: e.get("value") for e in c["env"]}
cpus = c["resources"]["limits"]["cpu"]
tar = tarfile.open(os.path.join(cm, "sweep.tgz"))
def member(name):
    try: return tar.extractfile("./" + name).read()
    except KeyError: return None
files = [l for l in open(sys.argv[3]).read().splitlines() if os.path.isfile(l)]
res(member(env.get("SWEEP", "")) == open(sys.argv[3], "rb").read() and files and
    all(member(f) == open(f, "rb").read() for f in files),
    "the Job's sweep file is $SWEEP (%s), with the files it names at their paths" % sys.argv[3])
res(c["env"][-1].get("valueFrom", {}).get("resourceFieldRef", {}).get("resource") == "limits.cpu",
    "the shard's --jobs is its CPU limit (Downward API)")
# The shard count: completions, once; the pods and the merge read it from the ConfigMap
n = s["completions"]
def from_cm(container):
    return {e["name"]: e["valueFrom"]["configMapKeyRef"] for e in container["env"]
            if "configMapKeyRef" in e.get("valueFrom", {})}
written = [f for f in (d + "/job.yaml", d + "/merge.yaml", "contrib/sweep/k8s.sh")
           for _ in re.findall(r"(?<![\w.$-])%d(?![\w.])" % n, code(f))]
res(written == [d + "/job.yaml"] and s["parallelism"] == n and
    from_cm(c).get("SHARDS") == {"name": cmname, "key": "shards"} and
    from_cm(mc).get("SHARDS") == {"name": cmname, "key": "shards"} and
    "$SHARDS" in c["command"][-1] and "$SHARDS" in mc["command"][-1] and
    open(os.path.join(cm, "shards")).read() == str(n),
    "the shard count is written once (job.yaml's completions); k8s.sh puts it in the ConfigMap, "
    "the pods and the merge read it there", "%d written in %s" % (n, written))
base = {"PATH": tmp + "/bin:/usr/bin:/bin", "HOME": tmp}
def pod_env(container, over, index=None):
    e = dict(base)
    for v in container["env"]:
        if "value" in v: e[v["name"]] = v["value"]
        elif "configMapKeyRef" in v["valueFrom"]:
            e[v["name"]] = open(os.path.join(cm, v["valueFrom"]["configMapKeyRef"]["key"])).read()
        else: e[v["name"]] = str(cpus)
    e.update(over)
    if index is not None: e["JOB_COMPLETION_INDEX"] = str(index)
    return e
# a pod: its command, the ConfigMap's mount path replaced by the test's copy, in a fresh folder
def run_pod(env, **kw):
    cmd = c["command"][:-1] + [c["command"][-1].replace(mount["config"] + "/", cm + "/")]
    with tempfile.TemporaryDirectory(dir=tmp) as wd:
        return subprocess.run(cmd, cwd=wd, env=env, **kw).returncode
out = tmp + "/k8s"
bad = [i for i in range(n) if run_pod(pod_env(c, {"OUT": out}, i))]
res(not bad, "the Indexed Job's command succeeds for JOB_COMPLETION_INDEX 0..%d, in the ConfigMap" % (n - 1),
    "failed indexes: %s" % bad)
res(subprocess.run(mc["command"], env=pod_env(mc, {"OUT": out})).returncode == 0,
    "the merge Job's command succeeds")
e = pod_env(c, {"OUT": tmp + "/k8s-failing", "PATH": tmp + "/failing:" + base["PATH"]}, 1)
res(run_pod(e, stderr=subprocess.DEVNULL) != 0,
    "a pod whose shard fails exits non-zero (the Job retries or fails the index)")
PY
mkdir -p "$T/failing"
printf '#!/bin/sh\necho "stand-in: this shard fails" >&2\nexit 1\n' >"$T/failing/fusebox"
chmod +x "$T/failing/fusebox"
# results FILE: the "RESULT 0|1 NAME" lines of FILE as TAP tests, its other lines as they are
results() {
    while IFS= read -r line; do
        case $line in
        "RESULT "*)
            r=${line#RESULT }
            ok "${r%% *}" "${r#* }"
            ;;
        *) echo "$line" ;;
        esac
    done <"$1"
}
python3 "$T/k8s.py" "$T" "$T/cm-small" "$ARGS" >"$T/k8s.out" 2>"$L/k8s.err"
[ -s "$T/k8s.out" ] || echo "# the checks did not run: $(head -n 5 "$L/k8s.err")"
results "$T/k8s.out"
same_single "$T/k8s"
ok $? "the Indexed Job's shards merged == the single-process sweep, byte for byte"

# k8s.sh's steps, with its default sweep
kube "4 1500m" Complete
# the ConfigMap is `create --dry-run -o yaml | apply -f -`: the two ends of the pipe run at once
# and may log in either order
calls=$(cut -d' ' -f1-3 "$T/kube/calls" | tr '\n' ';' |
    sed 's/;apply -f -;create configmap fusebox-sweep;/;create configmap fusebox-sweep;apply -f -;/')
K=$PWD/contrib/sweep/k8s
[ "$got" -eq 0 ] && [ "$calls" = "get nodes -o;create configmap fusebox-sweep;apply -f -;\
apply -f $K/volume.yaml;delete job rs-sweep;apply -f $K/job.yaml;\
get job rs-sweep;apply -f $K/merge.yaml;get job rs-merge;logs job/rs-merge;" ] ||
    { echo "# exit $got; calls: $calls" && false; }
ok $? "k8s.sh (stand-in kubectl): ConfigMap, claim, Job, wait, merge, its log, in that order, exit 0"
echo "$OUT" | grep -q "^best: point 7 (the merge's answer)$" && echo "$OUT" | grep -q "open rs/sweep.html"
ok $? "... and prints the merge's answer (its pod's log) and the page to open"
mkdir -p "$T/unpacked" && tar -xf "$T/cm/sweep.tgz" -C "$T/unpacked" &&
    cmp -s "$T/unpacked/sweep.args" contrib/sweep/retry-storm.args &&
    cmp -s "$T/unpacked/scenarios/retry-storm.json" scenarios/retry-storm.json
ok $? "without SWEEP, the ConfigMap holds retry-storm.args and its scenario at its path"
# from another folder: its manifests found, the default sweep's scenario found
rm -rf "$T/unpacked" "$T/cm"
mkdir -p "$T/elsewhere"
rm -f "$T/kube/calls"
(cd "$T/elsewhere" && PATH="$T/kube:$PATH" NODES=4 STATE=Complete sh "$OLDPWD/contrib/sweep/k8s.sh" >/dev/null 2>&1)
got=$?
[ "$got" -eq 0 ] && mkdir -p "$T/unpacked" && tar -xf "$T/cm/sweep.tgz" -C "$T/unpacked" &&
    cmp -s "$T/unpacked/scenarios/retry-storm.json" scenarios/retry-storm.json &&
    grep -q "^apply -f $K/job.yaml" "$T/kube/calls"
ok $? "k8s.sh run from another folder finds its manifests and the default sweep's scenario (exit $got)"
kube 4 "FailureTarget Failed"
[ "$got" -eq 1 ] && ! grep -q merge.yaml "$T/kube/calls"
ok $? "k8s.sh exits 1 and does not merge when the Job failed (exit $got)"
contains "$ERR" "failed indexes: 1" "k8s.sh names the failed indexes"
kube "1 1500m" Complete
[ "$got" -eq 2 ] && ! grep -q apply "$T/kube/calls"
ok $? "k8s.sh exits 2 before applying anything when no node has a shard's CPUs (exit $got)"
mkdir -p "$T/other"
cp "$(grep '\.json$' "$ARGS")" "$T/other/"
# a scenario named by an absolute path
{ cat "$ARGS" && echo "$T/other/$(basename "$(grep '\.json$' "$ARGS")")"; } >"$T/abs.args"
kube 4 Complete "$T/abs.args"
[ "$got" -eq 2 ] && ! grep -q apply "$T/kube/calls" && echo "$ERR" | grep -q "the pods see only paths below"
ok $? "k8s.sh exits 2 before applying anything when the sweep names a file the pods cannot see (exit $got)"
kube 4 Complete "$T/none.args"
[ "$got" -eq 2 ] && ! grep -q apply "$T/kube/calls" && echo "$ERR" | grep -q "cannot read the sweep file"
ok $? "k8s.sh exits 2 naming an unreadable sweep file (exit $got)"

# The nightly CronJob (k8s/nightly.yaml): its checks, and its pod's command run for two nights
# in the ConfigMap of the suite's sweep (GNU parallel, nightly.sh where the image installs it:
# this checkout's contrib/sweep here; the claim a folder of $T).
need parallel "$L/apt-parallel.log" parallel
cat >"$T/nightly.py" <<'PY'
import os, re, subprocess, sys, tempfile, yaml
d, tmp, cm = "contrib/sweep/k8s", sys.argv[1], sys.argv[2]
def res(ok, name, why=""):
    print("RESULT %d %s" % (0 if ok else 1, name))
    if not ok and why: print("# " + why)
cj = yaml.safe_load(open(d + "/nightly.yaml"))
job = yaml.safe_load(open(d + "/job.yaml"))
res(cj.get("apiVersion") == "batch/v1" and cj.get("kind") == "CronJob", "nightly.yaml is a batch/v1 CronJob")
sched = cj["spec"]["schedule"]
f = sched.split()
bounds = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]
def field(x, lo, hi):
    return x == "*" or (x.isdigit() and lo <= int(x) <= hi)
res(len(f) == 5 and all(field(x, *b) for x, b in zip(f, bounds)) and f[0] != "*" and f[1] != "*"
    and f[2:] == ["*", "*", "*"],
    "its schedule %r is a five-field cron schedule, once a day" % sched)
spec = cj["spec"]; jt = spec["jobTemplate"]["spec"]; pod = jt["template"]["spec"]; c = pod["containers"][0]
res(spec.get("concurrencyPolicy") == "Forbid" and jt.get("backoffLimit") == 0 and
    pod.get("restartPolicy") == "Never",
    "nights do not overlap (Forbid), and a regressed night is not run again (backoffLimit 0)")
jpod = job["spec"]["template"]["spec"]
vols = {v["name"]: v for v in pod["volumes"]}; jvols = {v["name"]: v for v in jpod["volumes"]}
res(vols["config"] == jvols["config"] and vols["results"] == jvols["results"] and
    vols["sweep"] == jvols["sweep"] and c["image"] == jpod["containers"][0]["image"],
    "the CronJob uses job.yaml's ConfigMap, claim, working folder and image")
cmd = c["command"][-1]
m = re.search(r"exec sh (/\S+)/nightly\.sh parallel \$CPUS$", cmd)
cf = open("contrib/sweep/Containerfile").read()
stage2 = cf[cf.index("FROM", cf.index("FROM") + 1):]
res(m is not None and
    re.search(r"^COPY contrib/sweep/nightly\.sh contrib/sweep/parallel\.sh contrib/sweep/shard\.sh \\\n\s+%s/$"
              % re.escape(m.group(1)), stage2, re.M) is not None and
    re.search(r"install -y[^&]*\sparallel\s", stage2) is not None and
    {e["name"]: e.get("valueFrom", {}).get("resourceFieldRef", {}).get("resource") for e in c["env"]}.get("CPUS")
    == "limits.cpu",
    "its command runs nightly.sh on GNU parallel, one shard per CPU of its limit, where the "
    "Containerfile installs nightly.sh, parallel.sh, shard.sh and GNU parallel", cmd)
if m is None:
    res(False, "the CronJob's command runs for two nights", "no nightly.sh in %r" % cmd)
    sys.exit(0)
mounts = {v["name"]: v["mountPath"] for v in c["volumeMounts"]}
env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
env["NIGHTLY"] = env["NIGHTLY"].replace(mounts["results"], tmp + "/results", 1)
env.update(PATH=tmp + "/bin:/usr/bin:/bin", HOME=tmp, CPUS=str(c["resources"]["limits"]["cpu"]))
run = cmd.replace(mounts["config"] + "/", cm + "/").replace(m.group(1) + "/", os.getcwd() + "/contrib/sweep/")
def night():
    with tempfile.TemporaryDirectory(dir=tmp) as wd:
        p = subprocess.run(["sh", "-c", run], cwd=wd, env=env, capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr
rc, out = night()
res(rc == 0 and "the first night" in out and os.path.isfile(env["NIGHTLY"] + "/last/sweep.json"),
    "the CronJob's command, the first night: exit 0 (got %d), its merged sweep the baseline in the claim" % rc, out[-400:])
rc, out = night()
res(rc == 0 and "no regression" in out, "the CronJob's command, the next night: compared, no regression, exit 0 (got %d)" % rc,
    out[-400:])
PY
if command -v parallel >/dev/null 2>&1; then
    python3 "$T/nightly.py" "$T" "$T/cm-small" >"$T/nightly.out" 2>"$L/nightly.err"
    [ -s "$T/nightly.out" ] || echo "# the checks did not run: $(head -n 5 "$L/nightly.err")"
    results "$T/nightly.out"
    same_files "$T/single" "$T/results/nightly/last" sweep.json
    ok $? "the CronJob's nights in the claim: the baseline == the single-process sweep"
else
    skip "the nightly CronJob's checks" "parallel is not installed and could not be (see $L/apt-parallel.log)"
fi
kube "4 1500m" Complete "" nightly
calls=$(cut -d' ' -f1-3 "$T/kube/calls" | tr '\n' ';' |
    sed 's/;apply -f -;create configmap fusebox-sweep;/;create configmap fusebox-sweep;apply -f -;/')
[ "$got" -eq 0 ] && [ "$calls" = "get nodes -o;create configmap fusebox-sweep;apply -f -;\
apply -f $K/volume.yaml;apply -f $K/nightly.yaml;" ] || { echo "# exit $got; calls: $calls" && false; }
ok $? "k8s.sh nightly (stand-in kubectl): ConfigMap, claim, CronJob, in that order, exit 0; no Job replaced"
kube "4 1500m" Complete "" weekly
[ "$got" -eq 2 ] && echo "$ERR" | grep -q "usage: k8s.sh \[nightly\]" && [ ! -e "$T/kube/calls" ]
ok $? "k8s.sh with a mode it does not know prints its usage, exit 2 (got $got), before calling kubectl"

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
