#!/bin/sh
# tests/e2e/mock_sdk.sh - the official OpenAI and Anthropic Node SDKs against `fusebox mock`.
#
# Installs pinned SDK versions into out/sdk/ (once; skipped when present), starts the mock
# on a free loopback port, runs tests/sdk/*.mjs there and passes their TAP through.
. tests/tap.sh
set -u
SDK=$ROOT/out/sdk
OPENAI_VERSION=6.49.0
ANTHROPIC_VERSION=1.14.0
mkdir -p "$SDK"

need node "$SDK/apt.log" nodejs npm
need npm "$SDK/apt.log" nodejs npm
if ! npm_pinned "$SDK" "openai@$OPENAI_VERSION" "@anthropic-ai/sdk@$ANTHROPIC_VERSION"; then
    ok 1 "npm install of the SDKs (see $SDK/npm.log)"
    finish
    exit 1
fi

mock_start "$SDK/url" "$FUSEBOX" mock --port 0 --quiet
URL=$MOCK_URL
if [ -z "$URL" ]; then
    ok 1 "fusebox mock prints its URL"
    finish
    exit 1
fi
# ESM resolves packages from the script's folder: run the scripts from out/sdk.
status=0
for t in "$ROOT"/tests/sdk/*.mjs; do
    cp "$t" "$SDK/"
    (cd "$SDK" && MOCK_URL=$URL timeout 120 node "$(basename "$t")") || status=1
done
exit $status
