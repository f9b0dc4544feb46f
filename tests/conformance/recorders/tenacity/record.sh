#!/bin/sh
# record.sh - re-record tests/conformance/tenacity-VERSION/ (make conformance-record).
#
#   TENACITY_SRC=DIR sh tests/conformance/recorders/tenacity/record.sh
#
# DIR is tenacity's package folder: Debian's python3-tenacity installs
# /usr/lib/python3/dist-packages/tenacity (8.2.1 in bookworm). It runs with Debian's
# /usr/bin/python3. Without TENACITY_SRC it says so and exits 3 (skipped).
set -u
cd "$(dirname "$0")/../../../.." || exit 2
if [ -z "${TENACITY_SRC:-}" ]; then
    echo "tenacity: set TENACITY_SRC to tenacity 8.2.1's package folder (Debian: apt-get install python3-tenacity; TENACITY_SRC=/usr/lib/python3/dist-packages/tenacity)"
    exit 3
fi
exec /usr/bin/python3 tests/conformance/recorders/tenacity/record.py "$TENACITY_SRC" tests/conformance 20 2000
