#!/bin/sh
# tests/e2e/diff_sdk.sh - differential tests of the SDK presets against the real libraries.
#
# Installs the pinned npm packages into out/npm-sdk/ (once: skipped when present), builds
# tests/diff/sdk/decide.c (fusebox's side: the preset layer fed to the core) against this
# build's libraries, starts `fusebox mock` on a free loopback port and runs each
# tests/diff/sdk/*.mjs there: the real client on scripted faults, compared with fusebox's
# decisions on the same replies (tests/diff/sdk/common.mjs says how). TAP passes through.
. tests/tap.sh
set -u
DIR=$ROOT/out/npm-sdk
PKGS="openai@7.5.0 @anthropic-ai/sdk@0.120.0 @langchain/core@1.2.5 @langchain/openai@1.5.6
@langchain/anthropic@1.5.4 ai@7.0.77 @ai-sdk/openai@4.0.46 @ai-sdk/anthropic@4.0.41"
mkdir -p "$DIR"

need node "$DIR/apt.log" nodejs npm
need npm "$DIR/apt.log" nodejs npm
# shellcheck disable=SC2086
if ! npm_pinned "$DIR" $PKGS; then
    ok 1 "npm install of the pinned packages failed (see $DIR/npm.log: $(tail -n 1 "$DIR/npm.log"))"
    finish
    exit 1
fi

BUILD=$(dirname "$FUSEBOX")
DECIDE=$E2E_TMP/decide
if ! ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$ROOT" -O1 \
    "$ROOT/tests/diff/sdk/decide.c" "$BUILD/lib/libfbsim.a" "$BUILD/lib/libfbscenario.a" "$BUILD/lib/libfbcore.a" "$BUILD/lib/libfbutil.a" \
    $(pkg-config --libs libcjson 2>/dev/null || echo -lcjson) -lm $(case "$BUILD" in *asan*) echo -fsanitize=address,undefined ;; esac) \
    -o "$DECIDE" 2>"$E2E_TMP/cc.log"; then
    ok 1 "build tests/diff/sdk/decide.c ($(head -n 3 "$E2E_TMP/cc.log"))"
    finish
    exit 1
fi

mock_start "$E2E_TMP/url" "$FUSEBOX" mock --port 0 --quiet
if [ -z "$MOCK_URL" ]; then
    ok 1 "fusebox mock prints its URL"
    finish
    exit 1
fi
# ESM resolves packages from the script's folder: run the scripts from out/npm-sdk.
status=0
for t in "$ROOT"/tests/diff/sdk/*.mjs "$ROOT"/tests/sdk/webcrypto.mjs; do
    cp "$t" "$DIR/"
done
# the four clients at once (their time is real waits; each case keys its own attempts in the
# mock's log, and a gap made late by the others is inconclusive, never a failure), their TAP
# in this order
pids=
for t in openai_node anthropic_node langchain_js ai_sdk; do
    [ -f "$DIR/$t.mjs" ] || continue
    ( (cd "$DIR" && MOCK_URL=$MOCK_URL DECIDE=$DECIDE timeout 120 node "$t.mjs") >"$E2E_TMP/$t.tap" 2>&1
    echo $? >"$E2E_TMP/$t.rc") &
    pids="$pids $!"
done
# shellcheck disable=SC2086 # one word per pid
wait $pids
for t in openai_node anthropic_node langchain_js ai_sdk; do
    [ -f "$DIR/$t.mjs" ] || continue
    cat "$E2E_TMP/$t.tap"
    [ "$(cat "$E2E_TMP/$t.rc" 2>/dev/null)" = 0 ] || status=1
done
exit $status
