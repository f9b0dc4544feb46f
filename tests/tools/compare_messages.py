#!/usr/bin/env python3
"""compare_messages.py BASE_FUSEBOX HEAD_FUSEBOX [--focus KEY,...] - the loader's messages for
broken scenarios, before and after a change to the loader.

Every scenario file of scenarios/, tests/e2e/ and tests/fixtures/ (a JSON object with
"providers") is changed in one place at a time: a key deleted, misspelt (a letter dropped,
two swapped, one added), or given another value (a string, a duration, -1, 0, 1.5, 1e12, true,
false, null, [], {}, an object with an unknown key, ...), and an unknown key added to each
object. Objects under the --focus top-level keys (default: the top level, policy, variants,
pods, slo, spillover, limits) are all changed; the others one in twelve, the same ones on every
run. Both builds run `fusebox validate` over the files (4,000 to a call) and the messages are
compared file by file. A message that only gains a "(did you mean ...)" is counted apart;
every other difference is printed. Exit 0 when there is no other difference, 1 otherwise.

    git worktree add /tmp/base BASE && make -C /tmp/base build/release/fusebox
    make build/release/fusebox
    python3 tests/tools/compare_messages.py /tmp/base/build/release/fusebox build/release/fusebox
"""
import collections
import copy
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

VALUES = ["x", "10s", -1, 0, 1.5, 1e12, True, False, None, [], {}, {"zz": 1}, "none", ["x"], 3]
CHUNK = 4000


def typos(k):
    out = {k[1:], k[:-1], k + "s", "x" + k} if len(k) > 1 else {k + "s", "x" + k}
    if len(k) > 2:
        out.add(k[0] + k[2] + k[1] + k[3:])
    return sorted(t for t in out if t and t != k)


def objects(v, path):
    if isinstance(v, dict):
        yield path, v
        for k, x in v.items():
            yield from objects(x, path + [k])
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from objects(x, path + [i])


def changes(doc, focus, rnd):
    for path, obj in list(objects(doc, [])):
        if not (not path or path[0] in focus or rnd.random() < 1 / 12):
            continue
        for k in list(obj):
            yield path, "del", k, None
            for t in typos(k):
                if t not in obj:
                    yield path, "ren", k, t
            for val in VALUES:
                if not (obj[k] == val and type(obj[k]) is type(val)):
                    yield path, "set", k, val
        yield path, "add", "zzz", 1


def mutant(doc, path, op, k, val):
    doc = copy.deepcopy(doc)
    o = doc
    for p in path:
        o = o[p]
    if op == "del":
        del o[k]
    elif op == "ren":
        items = [(val if kk == k else kk, vv) for kk, vv in o.items()]
        o.clear()
        o.update(items)
    else:
        o[k] = val
    return doc


def inputs():
    for top in ("scenarios", "tests/e2e", "tests/fixtures"):
        for d, _, files in sorted(os.walk(top)):
            for f in sorted(files):
                if f.endswith(".json"):
                    yield os.path.join(d, f)


def messages(binary, chunks):
    per = collections.defaultdict(list)
    for c in chunks:
        r = subprocess.run([binary, "validate", c], capture_output=True, text=True)
        for line in (r.stdout + r.stderr).splitlines():
            m = re.match(r"(?:fusebox: |ok )(\S+?\.json)", line)
            if m:
                per[os.path.basename(m.group(1))].append(line.replace(c + "/", ""))
    return per


def main():
    args = sys.argv[1:]
    focus = {"policy", "variants", "pods", "slo", "spillover", "limits"}
    if "--focus" in args:
        i = args.index("--focus")
        focus = set(args[i + 1].split(","))
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.split("\n\n")[0])
    rnd = random.Random(7)
    work = tempfile.mkdtemp(prefix="compare-messages-")
    n = 0
    chunks = []
    for f in inputs():
        try:
            with open(f, encoding="utf-8") as fh:
                base = json.load(fh)
        except (ValueError, UnicodeDecodeError):
            continue
        if not isinstance(base, dict) or "providers" not in base:
            continue
        for ch in changes(base, focus, rnd):
            if n % CHUNK == 0:
                chunks.append(os.path.join(work, "c%d" % (n // CHUNK)))
                os.mkdir(chunks[-1])
            with open(os.path.join(chunks[-1], "m%06d.json" % n), "w", encoding="utf-8") as fh:
                json.dump(mutant(base, *ch), fh)
            n += 1
    a, b = messages(args[0], chunks), messages(args[1], chunks)
    broken = sum(1 for k in a if any(not x.startswith("ok ") for x in a[k]))
    same = dym = 0
    others = []
    for k in sorted(set(a) | set(b)):
        if a[k] == b[k]:
            same += 1
        elif len(a[k]) == len(b[k]) and all(
                y.startswith(x) and y[len(x):].startswith(" (did you mean '") for x, y in zip(a[k], b[k])):
            dym += 1
        else:
            others.append((k, a[k], b[k]))
    for k, x, y in others:
        print(f"{k}:\n  before: {x}\n  after:  {y}")
    kept = f" (files in {work})" if others else ""
    if not others:
        shutil.rmtree(work)
    print(f"compare_messages: {n} files ({broken} broken before), {same} the same, "
          f"{dym} gain a did-you-mean, {len(others)} differ otherwise{kept}")
    return 1 if others else 0


if __name__ == "__main__":
    sys.exit(main())
