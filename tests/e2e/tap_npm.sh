#!/bin/sh
# tap_npm.sh - the npm_pinned helper of tests/tap.sh, when the install cannot work: it fails
# within seconds, says which packages are missing and shows npm's own error output. The
# registry is a closed local port, so nothing is fetched and no registry is asked.
set -u
. tests/tap.sh
T=$E2E_TMP

if ! command -v npm >/dev/null 2>&1; then
    skip "npm_pinned shows npm's error output" "npm is not installed (Debian: npm)"
    finish
    exit $?
fi
start=$(date +%s)
npm_config_registry=http://127.0.0.1:9/ npm_config_cache="$T/cache" npm_config_fetch_retries=0 \
    npm_pinned "$T/npm" left-pad@1.3.0 >"$T/out" 2>&1
rc=$?
took=$(($(date +%s) - start))
[ $rc -ne 0 ]
ok $? "npm_pinned fails when npm cannot install"
grep -q '^# npm_pinned: npm install in .* failed (exit [1-9][0-9]*); missing: left-pad@1.3.0$' "$T/out"
r=$?
[ $r -ne 0 ] && sed 's/^/# got: /' "$T/out"
ok $r "it names the missing package"
grep -qE '^#   npm (ERR!|error) ' "$T/out"
ok $? "it shows npm's own error lines as TAP comments"
grep -q 'ECONNREFUSED\|127.0.0.1:9' "$T/out"
ok $? "npm's output gives the reason (the refused registry)"
[ -s "$T/npm/npm.log" ]
ok $? "npm's whole output is kept in DIR/npm.log"
[ "$took" -lt 60 ]
ok $? "it fails in seconds, not minutes (${took}s)"
finish
