#!/bin/sh
# record.sh - re-record tests/conformance/opossum-VERSION/ (make conformance-record).
#
#   OPOSSUM_SRC=DIR sh tests/conformance/recorders/opossum/record.sh
#
# DIR is opossum's npm package folder, with @sinonjs/fake-timers installed beside it:
#   npm install --prefix DIR0 --save-exact opossum@10.0.0 @sinonjs/fake-timers@15.5.0
#   OPOSSUM_SRC=DIR0/node_modules/opossum
# Without OPOSSUM_SRC it says so and exits 3 (skipped).
set -u
cd "$(dirname "$0")/../../../.." || exit 2
if [ -z "${OPOSSUM_SRC:-}" ]; then
    echo "opossum: set OPOSSUM_SRC to opossum 10.0.0's npm package folder, with @sinonjs/fake-timers beside it (npm install --prefix DIR opossum@10.0.0 @sinonjs/fake-timers@15.5.0; OPOSSUM_SRC=DIR/node_modules/opossum); needs node"
    exit 3
fi
command -v node >/dev/null 2>&1 || { echo "opossum: node is not installed (Debian: nodejs)"; exit 1; }
exec node tests/conformance/recorders/opossum/record.mjs "$OPOSSUM_SRC" tests/conformance 20 2000 1000
