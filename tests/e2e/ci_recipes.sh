#!/bin/sh
# ci_recipes.sh - the CI recipes of contrib/ci/ as a CI system runs them: the GitHub Actions
# workflow and the GitLab CI job, their shell steps executed as written (tests/e2e/ci/ci_run.py
# emulates what the CI system provides: the cache, the artifacts API, the step conditions), on
# a project holding one scenario. The default branch's first run passes with no baseline and
# stores its results; a change that slows the primary provider fails against that baseline,
# naming the figures; an unchanged change passes against it. Then gate.sh's own errors. TAP.
set -u
. tests/tap.sh
T=$E2E_TMP
R=tests/e2e/ci/ci_run.py


if ! python3 -c 'import yaml' 2>/dev/null; then
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $sudo apt-get install -y -qq --no-install-recommends python3-yaml; } >"$T/apt.log" 2>&1
fi
if ! python3 -c 'import yaml' 2>/dev/null; then
    skip "the CI recipes" "python3-yaml is not installed and could not be (Debian: python3-yaml)"
    finish
    exit 0
fi

# ---- the recipes parse, and have the shape their systems require ----
python3 - contrib/ci/github-actions.yml <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
on = d.get("on", d.get(True))          # YAML 1.1 reads a bare `on` as true
assert set(on) >= {"push", "pull_request", "schedule"}, on
(job,) = d["jobs"].values()
assert job["container"].startswith("debian:"), job["container"]
for s in job["steps"]:
    assert ("run" in s) != ("uses" in s), s
PY
ok $? "github-actions.yml parses: push, pull_request and a schedule; one job in a Debian container; each step runs or uses"
python3 - contrib/ci/gitlab-ci.yml <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
job = d["fusebox"]
assert job["image"].startswith("debian:") and job["script"], job
assert job["artifacts"]["reports"]["junit"] == "out/fusebox/junit.xml", job["artifacts"]
assert job["artifacts"]["when"] == "always"
PY
ok $? "gitlab-ci.yml parses: a job in a Debian image, JUnit as a report, artifacts kept when it fails"

# ---- the jobs, run ----
# the install step builds this checkout (FUSEBOX_SRC, as a submodule would) into a staging
# folder; the gate then runs the installed binary and the installed gate.sh
STAGE=$T/stage
P=$STAGE/usr/local
OVER="FUSEBOX_SRC=$ROOT DESTDIR=$STAGE FUSEBOX_SHARE=$P/share/fusebox PATH=$P/bin:$PATH"

project() { # DIR [regressed]: a project with scenarios/bad-deploy.json
    mkdir -p "$1/scenarios"
    python3 - scenarios/bad-deploy.json "$1/scenarios/bad-deploy.json" "${2:-}" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
if sys.argv[3]:
    d["providers"][0]["latency"]["ttft"]["lognormal"]["median"] = "900ms"
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
}

for kind in github gitlab; do
    recipe=contrib/ci/$([ $kind = github ] && echo github-actions.yml || echo gitlab-ci.yml)
    store=$T/$kind-store
    W=$T/$kind-main
    project "$W"
    # shellcheck disable=SC2086
    python3 $R $kind "$recipe" "$W" "$store" main $OVER >"$T/$kind-main.log" 2>&1
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/$kind-main.log"
    ok $r "$kind: the default branch's first run passes (no baseline yet)"
    grep -q "no baseline" "$T/$kind-main.log"
    ok $? "$kind: ... and says it checked without a baseline"
    python3 -c "import sys, xml.dom.minidom as m; m.parse(sys.argv[1])" "$W/out/fusebox/junit.xml" 2>/dev/null
    ok $? "$kind: ... writes JUnit XML that parses"
    [ -s "$W/out/fusebox/reports/bad-deploy/report.html" ] && [ -s "$W/out/fusebox/results/bad-deploy/report.json" ]
    ok $? "$kind: ... keeps the report page and the results for the next baseline"
    [ -x "$P/bin/fusebox" ] && [ -s "$P/share/fusebox/contrib/ci/gate.sh" ]
    ok $? "$kind: ... the install step installed the binary and the recipes (make install ships contrib/ci)"

    W=$T/$kind-slow
    project "$W" regressed
    # shellcheck disable=SC2086
    python3 $R $kind "$recipe" "$W" "$store" slow-primary $OVER >"$T/$kind-slow.log" 2>&1
    r=$?
    [ $r -eq 1 ]
    ok $? "$kind: a branch that slows the primary fails against the default branch's results (exit $r, want 1)"
    grep -q "comparing with the baseline" "$T/$kind-slow.log" &&
        grep -q "latency_p50: baseline .* worse beyond noise" "$T/$kind-slow.log"
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/$kind-slow.log" | tail -n 30
    ok $r "$kind: ... naming the figure that got worse (latency_p50) and its noise"
    grep -q "baseline.*bad-deploy" "$W/out/fusebox/junit.xml"
    ok $? "$kind: ... and the JUnit file has the failing baseline case"

    W=$T/$kind-same
    project "$W"
    # shellcheck disable=SC2086
    python3 $R $kind "$recipe" "$W" "$store" docs-only $OVER >"$T/$kind-same.log" 2>&1
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/$kind-same.log" | tail -n 30
    ok $r "$kind: a branch that changes nothing passes against the baseline"
    grep -q "comparing with the baseline" "$T/$kind-same.log"
    ok $? "$kind: ... having compared with it"
done

# the slow branch did not become the baseline (a failing run never stores its results): the
# same slow change, on another branch, still fails against it
W=$T/after
project "$W" regressed
# shellcheck disable=SC2086
python3 $R github contrib/ci/github-actions.yml "$W" "$T/github-store" slow-again $OVER >"$T/after.log" 2>&1
r=$?
[ $r -eq 1 ]
ok $? "github: after the failing branch, the baseline is still the default branch's (the slow change fails again: exit $r)"

# ---- gate.sh's own errors ----
G=contrib/ci/gate.sh
FUSEBOX="$FUSEBOX" sh $G >"$T/g1" 2>&1
r=$?
[ $r -eq 2 ] && grep -q "usage" "$T/g1"
ok $? "gate.sh with no scenario prints its usage, exit 2 (got $r)"
FUSEBOX=/nonexistent/fusebox sh $G scenarios/bad-deploy.json >"$T/g2" 2>&1
r=$?
[ $r -eq 2 ] && grep -q "not found" "$T/g2"
ok $? "gate.sh without fusebox says so, exit 2 (got $r)"
mkdir -p "$T/g/out/results/x"
(cd "$T/g" && FUSEBOX="$FUSEBOX" sh "$ROOT/$G" -o out -b out/results "$ROOT/scenarios/bad-deploy.json") >"$T/g3" 2>&1
r=$?
[ $r -eq 2 ] && grep -q "inside out/results" "$T/g3" && [ -d "$T/g/out/results/x" ]
ok $? "gate.sh refuses a baseline inside the results it rewrites, and deletes nothing (exit $r)"
finish
