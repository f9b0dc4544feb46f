#!/bin/sh
# tests/same_outputs.sh BASE [HEAD] - do two commits produce the same bytes?
#
# Builds BASE and HEAD (default: the work tree as it is) in their own
# folders, runs every scenario of BASE's scenarios/ and e2e fixtures through
# `fusebox run --no-charts` with each build, from one folder so that paths in
# the outputs agree, and compares report.json, timeseries.csv and
# events.jsonl byte for byte. A small sweep is compared too (sweep.json,
# sweep.csv), and the imports: `fusebox import-policy` of every policy file
# in tests/fixtures/import/ (its kind from the name's first word), and
# `fusebox import` of the LiteLLM log tests/e2e/import/litellm_gen.py writes
# (the scenario and the table). Exit 0 when every file is identical, 1 when
# one differs (the differing files are listed), 2 when a build fails.
#
#   sh tests/same_outputs.sh 7b99479          # that commit against the work tree
#   sh tests/same_outputs.sh 7b99479 HEAD     # two commits
set -u
BASE=${1:?usage: tests/same_outputs.sh BASE [HEAD]}
HEAD=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK="$ROOT/out/same-outputs"
rm -rf "$WORK"
mkdir -p "$WORK"

# build NAME REV: a release binary of REV (empty: the work tree) at $WORK/NAME/fusebox.
build() {
    name=$1 rev=$2 src="$WORK/$1-src"
    if [ -z "$rev" ]; then
        make -C "$ROOT" --no-print-directory -s build/release/fusebox >"$WORK/$name-build.log" 2>&1 ||
            return 1
        mkdir -p "$WORK/$name"
        cp "$ROOT/build/release/fusebox" "$WORK/$name/fusebox"
        return 0
    fi
    git -C "$ROOT" archive --format=tar --prefix=src/ "$rev" | tar -x -C "$WORK" || return 1
    mv "$WORK/src" "$src"
    make -C "$src" --no-print-directory -s build/release/fusebox >"$WORK/$name-build.log" 2>&1 ||
        return 1
    mkdir -p "$WORK/$name"
    cp "$src/build/release/fusebox" "$WORK/$name/fusebox"
}

build base "$BASE" || { echo "same_outputs: cannot build $BASE (see $WORK/base-build.log)"; exit 2; }
build head "$HEAD" || { echo "same_outputs: cannot build ${HEAD:-the work tree} (see $WORK/head-build.log)"; exit 2; }

# The inputs are BASE's, so that both builds read the same files.
mkdir -p "$WORK/inputs"
git -C "$ROOT" archive --format=tar "$BASE" scenarios tests/e2e tests/fixtures/import |
    tar -x -C "$WORK/inputs"
cd "$WORK/inputs" || exit 2
inputs=$(find scenarios tests/e2e -name '*.json' | sort)
policies=$(find tests/fixtures/import -name '*.y*ml' | sort)
python3 tests/e2e/import/litellm_gen.py litellm.jsonl litellm-truth.json >/dev/null 2>&1

differ=0
files=0
for build in base head; do
    mkdir -p "$WORK/$build-out"
    for f in $inputs; do
        out="$WORK/$build-out/$(echo "$f" | tr / _)"
        "$WORK/$build/fusebox" run "$f" -o "$out" --no-charts -q >/dev/null 2>"$out.err"
        echo $? >"$out.rc"
    done
    sweep="$WORK/$build-out/sweep"
    "$WORK/$build/fusebox" sweep tests/e2e/sweep-small.json --grid breaker.open=5s,20s --seeds 2 \
        -o "$sweep" --no-charts -q >/dev/null 2>"$sweep.err"
    echo $? >"$sweep.rc"
    # the imports: each writes its output and its messages into a folder of its own
    for f in $policies; do
        out="$WORK/$build-out/$(echo "$f" | tr / _)"
        kind=$(basename "$f" | sed 's/-.*//')
        mkdir -p "$out"
        "$WORK/$build/fusebox" import-policy "$kind" "$f" >"$out/policy.json" 2>"$out/policy.err"
        echo $? >"$out.rc"
    done
    out="$WORK/$build-out/import-litellm"
    mkdir -p "$out"
    (cd "$out" && "$WORK/$build/fusebox" import "$WORK/inputs/litellm.jsonl" -o scenario.json \
        >table.txt 2>&1)
    echo $? >"$out.rc"
done
cd "$WORK" || exit 2
for d in base-out/*; do
    [ -d "$d" ] || continue
    name=${d#base-out/}
    for f in report.json timeseries.csv events.jsonl sweep.json sweep.csv policy.json policy.err \
        scenario.json table.txt; do
        [ -f "$d/$f" ] || [ -f "head-out/$name/$f" ] || continue
        files=$((files + 1))
        if ! cmp -s "$d/$f" "head-out/$name/$f"; then
            echo "differs: $name/$f"
            differ=$((differ + 1))
        fi
    done
    if ! cmp -s "$d.rc" "head-out/$name.rc"; then
        echo "differs: $name exit code ($(cat "$d.rc") vs $(cat "head-out/$name.rc"))"
        differ=$((differ + 1))
    fi
done
echo "same_outputs: $files files compared over $(echo "$inputs" | wc -l) scenarios, a sweep, $(echo "$policies" | wc -l) policy files and a log import, $differ differ"
[ "$differ" -eq 0 ]
