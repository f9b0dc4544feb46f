#!/bin/sh
# tests/golden/update.sh [DIR] - write the golden outputs of every scenario in
# tests/golden/scenarios: DIR/NAME/report.json, timeseries.csv and events.jsonl
# (DIR: tests/golden, i.e. rewrite the checked-in files). Uses $FUSEBOX, by
# default build/release/fusebox; `make golden` builds it first and runs this.
# tests/e2e/golden.sh runs it into a scratch folder and compares byte for byte.
# When rewriting the checked-in files is legitimate: tests/README.md.
set -u
cd "$(dirname "$0")/../.." || exit 2
FUSEBOX=${FUSEBOX:-build/release/fusebox}
DIR=${1:-tests/golden}
status=0
while read -r name scenario; do
    case "$name" in '' | '#'*) continue ;; esac
    rm -rf "${DIR:?}/$name"
    # From the repository root with the path as listed: report.json names the file.
    if ! "$FUSEBOX" run "$scenario" -o "$DIR/$name" --no-charts -q; then
        echo "update.sh: fusebox run $scenario failed"
        status=1
    fi
done <tests/golden/scenarios
exit $status
