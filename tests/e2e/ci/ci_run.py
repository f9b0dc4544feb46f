#!/usr/bin/env python3
"""ci_run.py - run a CI recipe of contrib/ci/ the way its CI system would, here.

    ci_run.py github|gitlab RECIPE WORKDIR STORE BRANCH [KEY=VALUE...]

Runs the job of RECIPE (contrib/ci/github-actions.yml or gitlab-ci.yml) in WORKDIR, on branch
BRANCH of a project whose default branch is main: its shell steps as they are written, with the
job's variables (KEY=VALUE arguments win: the test's install prefix), and the steps a CI system
provides emulated with STORE as the system's storage:
  github  actions/checkout (WORKDIR is the checkout), actions/cache/restore and /save (STORE/
          cache/KEY-PREFIX), actions/upload-artifact (every path must exist); `if:` conditions
          of the forms the recipe uses (success(), always(), the default-branch test)
  gitlab  the script lines in one shell (set -e, as the runner does), the artifacts API
          (GET .../jobs/artifacts/REF/download?job=NAME, served from STORE on 127.0.0.1 from a
          successful default-branch job's artifacts), artifacts:paths and reports:junit (must
          exist)
Prints each step and its exit code; exits with the job's result (the first failing step's code),
or 2 when the recipe has a form this emulation does not know (fail loudly: update the test).
"""
import http.server
import os
import shutil
import subprocess
import sys
import threading
import zipfile

import yaml

DEFAULT = "main"


def die(msg):
    print("ci_run.py: " + msg, file=sys.stderr)
    sys.exit(2)


def job_env(declared, overrides):
    env = dict(os.environ)
    for k, v in (declared or {}).items():
        v = str(v)
        if "${{" in v:
            continue  # the CI system's expression: the test gives it as an override
        env[k] = v
    env.update(overrides)
    return env


def sh(script, cwd, env, name):
    print("# step: %s" % name, flush=True)
    r = subprocess.run(["sh", "-e", "-c", script], cwd=cwd, env=env)
    print("# step: %s: exit %d" % (name, r.returncode), flush=True)
    return r.returncode


def github_if(cond, ok, branch):
    cond = " ".join(str(cond).split())
    known = {
        "always()": True,
        "success()": ok,
        "success() && github.ref_name == github.event.repository.default_branch": ok
        and branch == DEFAULT,
    }
    if cond not in known:
        die("unknown if: %r" % cond)
    return known[cond]


def github(recipe, work, store, branch, over):
    jobs = recipe.get("jobs") or die("no jobs")
    if len(jobs) != 1:
        die("one job expected, got %d" % len(jobs))
    job = next(iter(jobs.values()))
    env = job_env(job.get("env"), over)
    env.setdefault("BRANCH", branch)
    rc = 0
    for i, step in enumerate(job.get("steps") or die("no steps")):
        name = step.get("name") or step.get("uses") or "step %d" % (i + 1)
        if ("run" in step) == ("uses" in step):
            die("step %r: exactly one of run and uses" % name)
        if "if" in step and not github_if(step["if"], rc == 0, branch):
            print("# step: %s: skipped (if: %s)" % (name, step["if"]))
            continue
        if rc != 0 and "if" not in step:
            print("# step: %s: skipped (an earlier step failed)" % name)
            continue
        if "run" in step:
            r = sh(step["run"], work, env, name)
            rc = rc or r
            continue
        uses, w = step["uses"], step.get("with") or {}
        cache = os.path.join(store, "github-cache")
        if uses.startswith("actions/checkout@"):
            pass
        elif uses.startswith("actions/cache/restore@"):
            if os.path.isdir(cache):
                shutil.copytree(cache, os.path.join(work, w["path"]), dirs_exist_ok=True)
                print("# step: %s: restored %s" % (name, w["path"]))
            else:
                print("# step: %s: cache miss" % name)
        elif uses.startswith("actions/cache/save@"):
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(os.path.join(work, w["path"]), cache)
            print("# step: %s: saved %s" % (name, w["path"]))
        elif uses.startswith("actions/upload-artifact@"):
            for p in str(w["path"]).split():
                if not os.path.exists(os.path.join(work, p)):
                    print("# step: %s: no such path: %s" % (name, p))
                    rc = rc or 1
            print("# step: %s: %s" % (name, " ".join(str(w["path"]).split())))
        else:
            die("step %r: unknown action %s" % (name, uses))
    return rc


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.path = self.path.split("?", 1)[0]
        if self.headers.get("JOB-TOKEN") != "ci-run-token":
            self.send_error(401)
            return
        super().do_GET()


def gitlab(recipe, work, store, branch, over):
    jobs = {k: v for k, v in recipe.items() if isinstance(v, dict) and "script" in v}
    if len(jobs) != 1:
        die("one job expected, got %d" % len(jobs))
    name, job = next(iter(jobs.items()))
    srv_root = os.path.join(store, "gitlab-api")
    os.makedirs(srv_root, exist_ok=True)
    handler = lambda *a, **k: Quiet(*a, directory=srv_root, **k)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    ci = {"CI_API_V4_URL": "http://127.0.0.1:%d/api/v4" % srv.server_address[1],
          "CI_PROJECT_ID": "1", "CI_DEFAULT_BRANCH": DEFAULT, "CI_JOB_NAME": name,
          "CI_COMMIT_REF_NAME": branch, "CI_JOB_TOKEN": "ci-run-token"}
    env = job_env(job.get("variables"), dict(ci, **over))
    rc = sh("\n".join(job["script"]), work, env, name)
    srv.shutdown()
    art = job.get("artifacts") or {}
    if rc != 0 and art.get("when") != "always":
        return rc
    paths = list(art.get("paths") or [])
    junit = (art.get("reports") or {}).get("junit")
    for p in paths + ([junit] if junit else []):
        if not os.path.exists(os.path.join(work, p)):
            print("# artifacts: no such path: %s" % p)
            rc = rc or 1
    if rc == 0 and branch == DEFAULT:
        dest = os.path.join(srv_root, "api/v4/projects/1/jobs/artifacts", DEFAULT, "download")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with zipfile.ZipFile(dest, "w") as z:
            for p in paths:
                for root, _, files in os.walk(os.path.join(work, p)):
                    for f in files:
                        full = os.path.join(root, f)
                        z.write(full, os.path.relpath(full, work))
        print("# artifacts: stored for %s" % DEFAULT)
    return rc


def main():
    if len(sys.argv) < 6 or sys.argv[1] not in ("github", "gitlab"):
        die("usage: ci_run.py github|gitlab RECIPE WORKDIR STORE BRANCH [KEY=VALUE...]")
    kind, path, work, store, branch = sys.argv[1:6]
    over = dict(a.split("=", 1) for a in sys.argv[6:])
    with open(path) as f:
        recipe = yaml.safe_load(f)
    os.makedirs(store, exist_ok=True)
    run = github if kind == "github" else gitlab
    sys.exit(run(recipe, work, store, branch, over))


if __name__ == "__main__":
    main()
