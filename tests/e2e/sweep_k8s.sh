#!/bin/sh
# sweep_k8s.sh - the Kubernetes recipe of docs/sweeps.md (contrib/sweep/k8s/, k8s.sh,
# Containerfile). No cluster runs it here: the suite checks that the manifests hold together
# (Indexed, backoffLimitPerIndex set, the claim ReadWriteMany, the ConfigMap items are the
# files k8s.sh puts in it), runs the Indexed Job's container command verbatim once per index
# with JOB_COMPLETION_INDEX and the manifest's environment set (fusebox and fusebox-shard on
# PATH, as in the image), then the merge Job's command, and compares the result byte for byte
# with a single-process sweep; and it checks that the Containerfile installs the package of
# every library fusebox links, and drives k8s.sh against a stand-in kubectl (the order of its
# steps, its exit codes). contrib/sweep/tune-k8s.sh (fusebox tune round by round: an Indexed Job
# per round, a merge Job) runs against a stand-in kubectl that runs its Jobs here: its answer ==
# one process's, byte for byte. Orchestration, not memory: skipped under asan.
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

# contrib/sweep/tune-k8s.sh: fusebox tune's budgeted search round by round (k8s/tune.yaml, an
# Indexed Job per round, and k8s/tune-merge.yaml, the merge Job, looped while the merge's pod
# exits 3), against a stand-in kubectl that runs the Jobs it is given here, as a cluster would
# (the claim a folder of $T); the answer == one process's, byte for byte.
mkdir -p "$T/tk/bin"
cat >"$T/tk/bin/kubectl" <<'PY'
#!/usr/bin/env python3
# A stand-in kubectl for tune-k8s.sh: it logs its calls in $TK/calls and runs the Jobs it is
# given as a cluster would, on this machine: each pod its container's command, its env from
# the manifest (values, the ConfigMap's keys, limits.cpu), its mounts mapped to folders
# (the claim: $CLAIM; the ConfigMap: as `create configmap` laid it out; an emptyDir: a fresh
# folder), its PATH $POD_PATH; an Indexed Job's pods side by side, each index retried
# backoffLimitPerIndex times. A Job that exists is left as it is by apply (as a cluster does
# with an unchanged manifest). $NODES: the nodes' allocatable CPUs.
import json, os, re, shutil, subprocess, sys, tempfile
tk = os.environ["TK"]
a = sys.argv[1:]
open(os.path.join(tk, "calls"), "a").write(" ".join(a) + "\n")
def jobfile(name): return os.path.join(tk, "job-" + name + ".json")
def load(name):
    try: return json.load(open(jobfile(name)))
    except FileNotFoundError:
        sys.stderr.write('Error from server (NotFound): jobs.batch "%s" not found\n' % name); sys.exit(1)
def opt(flag):
    for i, x in enumerate(a):
        if x == flag: return a[i + 1]
        if x.startswith(flag + "="): return x[len(flag) + 1:]
    return ""
def ranges(ix):
    out, i = [], 0
    while i < len(ix):
        j = i
        while j + 1 < len(ix) and ix[j + 1] == ix[j] + 1: j += 1
        out.append(str(ix[i]) if i == j else "%d-%d" % (ix[i], ix[j])); i = j + 1
    return ",".join(out)
def pod(spec, cmname_dirs, index):
    c = spec["containers"][0]
    tmp = tempfile.mkdtemp(dir=tk)
    where = {}
    vols = {v["name"]: v for v in spec["volumes"]}
    for m in c["volumeMounts"]:
        v = vols[m["name"]]
        if "persistentVolumeClaim" in v: d = os.environ["CLAIM"]
        elif "configMap" in v: d = cmname_dirs(v["configMap"]["name"])
        else: d = tempfile.mkdtemp(dir=tmp)
        where[m["mountPath"]] = d
    def mapped(s):
        for mp, d in where.items():
            s = re.sub(r"(?<![\w/.])%s(?=/|\b|$)" % re.escape(mp), d, s)
        return s
    env = {"PATH": os.environ["POD_PATH"] + ":/usr/bin:/bin", "HOME": tmp}
    for e in c.get("env", []):
        if "value" in e: env[e["name"]] = mapped(e["value"])
        elif "configMapKeyRef" in e["valueFrom"]:
            r = e["valueFrom"]["configMapKeyRef"]
            env[e["name"]] = open(os.path.join(cmname_dirs(r["name"]), r["key"])).read()
        else: env[e["name"]] = str(c["resources"]["limits"]["cpu"])
    if index is not None: env["JOB_COMPLETION_INDEX"] = str(index)
    log = open(os.path.join(tmp, "log"), "w+")
    return subprocess.Popen([mapped(x) for x in c["command"]], cwd=mapped(c.get("workingDir", tmp)),
                            env=env, stdout=log, stderr=subprocess.STDOUT), log, tmp
def run_job(job):
    s = job["spec"]; spec = s["template"]["spec"]
    cm = lambda name: os.path.join(tk, "cm-" + name)
    indexed = s.get("completionMode") == "Indexed"
    idx = list(range(s["completions"])) if indexed else [None]
    tries = (s.get("backoffLimitPerIndex", 0) if indexed else s.get("backoffLimit", 6)) + 1
    pods, failed = [], []
    todo = idx
    for _ in range(tries):
        running = [(i, pod(spec, cm, i)) for i in todo]
        todo = []
        for i, (p, log, tmp) in running:
            rc = p.wait(); log.seek(0)
            pods.append({"index": i, "rc": rc, "log": log.read()})
            log.close(); shutil.rmtree(tmp)
            if rc: todo.append(i)
        if not todo: break
    failed = sorted(i for i in todo if i is not None) if indexed else []
    st = {"uid": "uid-%s-%d" % (job["metadata"]["name"], len(open(os.path.join(tk, "calls")).readlines())),
          "conditions": "Failed " if todo else "Complete ", "failedIndexes": ranges(failed), "pods": pods}
    json.dump(st, open(jobfile(job["metadata"]["name"]), "w"))
if a[:2] == ["get", "nodes"]: print(os.environ["NODES"])
elif a[:2] == ["create", "configmap"]:
    d = os.path.join(tk, "cm-" + a[2]); shutil.rmtree(d, ignore_errors=True); os.makedirs(d)
    for x in a[3:]:
        m = re.match(r"--from-(file|literal)=([^=]+)=(.*)", x, re.S)
        if m and m.group(1) == "file": shutil.copy(m.group(3), os.path.join(d, m.group(2)))
        elif m: open(os.path.join(d, m.group(2)), "w").write(m.group(3))
elif a[:3] == ["apply", "-f", "-"]: sys.stdin.read()
elif a[:2] == ["apply", "-f"]:
    import yaml
    doc = yaml.safe_load(open(a[2]))
    if doc["kind"] == "Job":
        if os.path.exists(jobfile(doc["metadata"]["name"])): print("job.batch/%s unchanged" % doc["metadata"]["name"])
        else: run_job(doc)
elif a[:2] == ["delete", "job"]:
    for n in [x for x in a[2:] if not x.startswith("-")]:
        if os.path.exists(jobfile(n)): os.remove(jobfile(n))
        elif "--ignore-not-found" not in a: load(n)
elif a[:2] == ["get", "job"]:
    j, path = load(a[2]), opt("-o")
    print(j["uid"] if "uid" in path else j["failedIndexes"] if "failedIndexes" in path else j["conditions"], end="")
elif a[:2] == ["get", "pods"]:
    uid = opt("-l").split("=", 1)[1]
    for f in os.listdir(tk):
        if f.startswith("job-"):
            j = json.load(open(os.path.join(tk, f)))
            if j["uid"] == uid: print(" ".join(str(p["rc"]) for p in j["pods"]), end="")
elif a[0] == "logs":
    sel = opt("-l")
    if sel:
        kv = dict(x.split("=", 1) for x in sel.split(","))
        j = load(kv["batch.kubernetes.io/job-name"])
        ps = [p for p in j["pods"] if str(p["index"]) == kv.get("batch.kubernetes.io/job-completion-index")]
    else: ps = load(a[1].split("/", 1)[1])["pods"]
    sys.stdout.write(ps[-1]["log"] if ps else "")
else:
    sys.stderr.write("stand-in kubectl: not modelled: %s\n" % " ".join(a)); sys.exit(1)
PY
chmod +x "$T/tk/bin/kubectl"
# tk CLAIM POD_PATH NODES ARGS...: tune-k8s.sh ARGS against it (calls and Jobs in $T/tk, the
# claim CLAIM, fusebox in the pods from POD_PATH), its output in $OUT/$ERR, its exit code in $got
tk() {
    rm -rf "$T/tk/calls" "$T"/tk/job-* "$T"/tk/cm-*
    touch "$T/tk/calls"
    mkdir -p "$1"
    _c=$1 _p=$2 _n=$3
    shift 3
    run_kept timeout 300 env TK="$T/tk" CLAIM="$_c" POD_PATH="$_p" NODES="$_n" PATH="$T/tk/bin:$PATH" \
        sh contrib/sweep/tune-k8s.sh "$@"
}
# the manifests: checks
python3 - >"$T/tune-k8s.out" 2>"$L/tune-k8s.err" <<'PY'
import re, yaml
d = "contrib/sweep/k8s"
def res(ok, name, why=""):
    print("RESULT %d %s" % (0 if ok else 1, name))
    if not ok and why: print("# " + why)
def code(path):
    return "".join(l for l in open(path) if not l.lstrip().startswith("#"))
job = yaml.safe_load(open(d + "/tune.yaml")); merge = yaml.safe_load(open(d + "/tune-merge.yaml"))
pvc = yaml.safe_load(open(d + "/volume.yaml"))
sh = open("contrib/sweep/tune-k8s.sh").read()
s = job["spec"]; pod = s["template"]["spec"]; c = pod["containers"][0]
mpod = merge["spec"]["template"]["spec"]; mc = mpod["containers"][0]
res(s.get("completionMode") == "Indexed" and isinstance(s.get("backoffLimitPerIndex"), int) and
    s.get("maxFailedIndexes") == 0 and pod.get("restartPolicy") == "Never",
    "tune.yaml is an Indexed Job, a shard retried per index, the Job failed by one failed shard")
res(merge["spec"].get("backoffLimit") == 0 and mpod.get("restartPolicy") == "Never",
    "tune-merge.yaml runs the merge once (backoffLimit 0): its one pod's exit code is the merge's")
def vols(p): return {v["name"]: v for v in p["volumes"]}
def env(x): return {e["name"]: e.get("value", e.get("valueFrom")) for e in x["env"]}
claims = {vols(p)["results"]["persistentVolumeClaim"]["claimName"] for p in (pod, mpod)}
cms = {vols(p)["config"]["configMap"]["name"] for p in (pod, mpod)}
res(claims == {pvc["metadata"]["name"]} and pvc["spec"]["accessModes"] == ["ReadWriteMany"] and
    len(cms) == 1 and re.search(r"create configmap %s " % cms.pop(), sh) is not None and
    env(c)["OUT"] == env(mc)["OUT"] and env(c)["OUT"].startswith(c["volumeMounts"][0]["mountPath"] + "/"),
    "the shards and the merge share volume.yaml's ReadWriteMany claim (OUT in it) and tune-k8s.sh's ConfigMap")
n = s["completions"]
written = [f for f in (d + "/tune.yaml", d + "/tune-merge.yaml", "contrib/sweep/tune-k8s.sh")
           for _ in re.findall(r"(?<![\w.$-])%d(?![\w.])" % n, code(f))]
ref = {"configMapKeyRef": {"name": vols(pod)["config"]["configMap"]["name"], "key": "shards"}}
res(written == [d + "/tune.yaml"] and s["parallelism"] == n and env(c)["SHARDS"] == ref and
    env(mc)["SHARDS"] == ref and "--shard \"$((JOB_COMPLETION_INDEX + 1))/$SHARDS\"" in c["command"][-1] and
    "--merge \"$SHARDS\"" in mc["command"][-1] and
    env(c)["CPUS"] == {"resourceFieldRef": {"containerName": c["name"], "resource": "limits.cpu"}},
    "the shard count is written once (tune.yaml's completions): the shards (--shard index+1/N, "
    "--jobs their CPU limit) and the merge (--merge N) read it in the ConfigMap", "%d written in %s" % (n, written))
PY
[ -s "$T/tune-k8s.out" ] || echo "# the checks did not run: $(head -n 5 "$L/tune-k8s.err")"
results "$T/tune-k8s.out"
TR="tests/e2e/tune --knob retry.attempts=1,2,3 --knob breaker.failure_rate=0.3,0.5,0.7
--knob breaker.open=5s,10s,20s --minimize cost_usd --budget 60"
# shellcheck disable=SC2086
"$FUSEBOX" tune $TR --subject-to "success_rate>=0.97" -q -o "$T/tune-one"
# shellcheck disable=SC2086
tk "$T/claim" "$T/bin" "4 1500m" $TR --subject-to "success_rate>=0.97"
TK=$PWD/contrib/sweep/k8s
rounds=$(grep -c "^apply -f $TK/tune.yaml$" "$T/tk/calls")
shards=$(cat "$T/tk/cm-fusebox-tune/shards")
[ "$got" -eq 0 ] && [ "$rounds" -ge 2 ] && same_files "$T/tune-one" "$T/claim/tune" tune.json tune.html &&
    [ -d "$T/claim/tune/tune.round-$rounds/part-$shards-of-$shards" ]
ok $? "tune-k8s.sh (exit $got): $rounds rounds of $shards shards in the claim, the answer == one process's, byte for byte"
echo "$OUT" | grep -q "^recommended:$" &&
    echo "$OUT" | grep -q "^tune-k8s.sh: $rounds rounds of $shards shards; .*open tune/tune.html"
ok $? "... it prints the merge's answer (its pod's log), the number of rounds and the page to open"
# shellcheck disable=SC2086
args=$(printf '%s\n' $TR "--subject-to" "success_rate>=0.97")
mkdir -p "$T/tune-cm" && tar -xzf "$T/tk/cm-fusebox-tune/tune.tgz" -C "$T/tune-cm" &&
    [ "$(cd "$T/tune-cm" && find . -type f | sort | tr '\n' ' ')" = \
        "$(find ./tests/e2e/tune -type f | sort | tr '\n' ' ')./tune.args " ] &&
    [ "$(cat "$T/tune-cm/tune.args")" = "$args" ] &&
    [ "$shards" = "$(sed -n 's/^  completions: &shards //p' contrib/sweep/k8s/tune.yaml)" ]
ok $? "its ConfigMap: the arguments one a line, the folder they name at its path, the shard count"
# the order: the first merge plans round 1; each round's Job replaces the last; a merge after each
calls=$(sed -n "s,^apply -f $TK/,,p; s,^delete job tune-round .*,delete,p" "$T/tk/calls" | tr '\n' ' ')
want=tune-merge.yaml
i=0
while [ "$i" -lt "$rounds" ]; do
    want="$want delete tune.yaml tune-merge.yaml"
    i=$((i + 1))
done
[ "$calls" = "volume.yaml delete $want " ] || { echo "# calls: $calls" && false; }
ok $? "... the claim, the merge (round 1 planned), then each round's Job (the last one deleted first) and a merge"
# run again in the same claim: the merge finds every round there, runs none, writes the same answer
cp "$T/claim/tune/tune.json" "$T/tune-first.json"
# shellcheck disable=SC2086
tk "$T/claim" "$T/bin" 4 $TR --subject-to "success_rate>=0.97"
[ "$got" -eq 0 ] && ! grep -q tune.yaml "$T/tk/calls" && cmp -s "$T/tune-first.json" "$T/claim/tune/tune.json"
ok $? "tune-k8s.sh again on the same claim: no round run, the same answer (exit $got)"
# a shard that fails (3 of N, in round 1): exit 2, no merge after it, no answer, its log named and shown
mkdir -p "$T/failbin"
ln -sf "$(failing_fusebox "3/$shards")" "$T/failbin/fusebox"
# shellcheck disable=SC2086
tk "$T/claim-failing" "$T/failbin" 4 $TR
[ "$got" -eq 2 ] && [ ! -e "$T/claim-failing/tune/tune.json" ] &&
    [ "$(grep -c "tune-merge.yaml" "$T/tk/calls")" -eq 1 ] &&
    echo "$ERR" | grep -q "round 1: the Job tune-round failed; failed indexes: 2 " &&
    echo "$ERR" | grep -q "job-completion-index=2):$" && echo "$ERR" | grep -q "^stand-in: shard 3/$shards fails$"
r=$?
[ $r -ne 0 ] && echo "$ERR" | sed 's/^/# /'
ok $r "a failing shard stops tune-k8s.sh: exit 2 (got $got), not merged, no answer, the index named and its log shown"
# a merge that fails (a knob no scenario has): exit 2 with its log, no round
tk "$T/claim-bad" "$T/bin" 4 tests/e2e/tune --knob retry.nosuch=1,2 --minimize cost_usd
[ "$got" -eq 2 ] && ! grep -q tune.yaml "$T/tk/calls" && echo "$ERR" | grep -q "the merge failed (its pod's exit code: 2)" &&
    echo "$OUT$ERR" | grep -qv "^tune-k8s.sh:"
ok $? "a merge that fails: exit 2 (got $got), its pod's exit code and its log, no round run"
tk "$T/claim-abs" "$T/bin" 4 "$PWD/tests/e2e/tune" --knob retry.attempts=1,2 --minimize cost_usd
[ "$got" -eq 2 ] && ! grep -q apply "$T/tk/calls" && echo "$ERR" | grep -q "the pods see only paths below"
ok $? "tune-k8s.sh exits 2 before applying anything when an argument names a path the pods cannot see (exit $got)"
# shellcheck disable=SC2086
tk "$T/claim-small" "$T/bin" "1 1500m" $TR
[ "$got" -eq 2 ] && ! grep -q apply "$T/tk/calls" && echo "$ERR" | grep -q "it would pend"
ok $? "tune-k8s.sh exits 2 before applying anything when no node has a shard's CPUs (exit $got)"
tk "$T/claim-none" "$T/bin" 4
[ "$got" -eq 2 ] && echo "$ERR" | grep -q "^usage: tune-k8s.sh" && [ ! -s "$T/tk/calls" ]
ok $? "tune-k8s.sh without arguments prints its usage, exit 2 (got $got), before calling kubectl"

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
