#!/bin/sh
# record.sh - re-record tests/conformance/cockatiel-VERSION/ (make conformance-record).
#
#   COCKATIEL_SRC=DIR sh tests/conformance/recorders/cockatiel/record.sh
#
# DIR is cockatiel's npm package folder, with @sinonjs/fake-timers installed beside it:
#   npm install --prefix DIR0 --save-exact cockatiel@4.0.0 @sinonjs/fake-timers@15.5.0
#   COCKATIEL_SRC=DIR0/node_modules/cockatiel
# Without COCKATIEL_SRC it says so and exits 3 (skipped). 2001 sequences, a third of each kind,
# then 1000 of overlapping calls (admits, results, cancels) through the breaker.
set -u
cd "$(dirname "$0")/../../../.." || exit 2
if [ -z "${COCKATIEL_SRC:-}" ]; then
    echo "cockatiel: set COCKATIEL_SRC to cockatiel 4.0.0's npm package folder, with @sinonjs/fake-timers beside it (npm install --prefix DIR cockatiel@4.0.0 @sinonjs/fake-timers@15.5.0; COCKATIEL_SRC=DIR/node_modules/cockatiel); needs node"
    exit 3
fi
command -v node >/dev/null 2>&1 || { echo "cockatiel: node is not installed (Debian: nodejs)"; exit 1; }
exec node tests/conformance/recorders/cockatiel/record.mjs "$COCKATIEL_SRC" tests/conformance 20 2001 1000
