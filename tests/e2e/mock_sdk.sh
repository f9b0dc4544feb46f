#!/bin/sh
# tests/e2e/mock_sdk.sh - the official OpenAI and Anthropic Node SDKs against `fusebox mock`.
#
# Installs pinned SDK versions into out/sdk/ (once; skipped when present), starts the mock
# on a free loopback port, runs tests/sdk/*.mjs there and passes their TAP through.
. tests/wait_url.sh
set -u
FUSEBOX=${FUSEBOX:?FUSEBOX is set by tests/run.sh}
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SDK=$ROOT/out/sdk
OPENAI_VERSION=6.49.0
ANTHROPIC_VERSION=1.14.0
mkdir -p "$SDK"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
        $SUDO apt-get install -y -qq --no-install-recommends nodejs npm; } >"$SDK/apt.log" 2>&1
fi
have() { grep -q "\"version\": \"$2\"" "$SDK/node_modules/$1/package.json" 2>/dev/null; }
if ! have openai $OPENAI_VERSION || ! have @anthropic-ai/sdk $ANTHROPIC_VERSION; then
    [ -f "$SDK/package.json" ] || echo '{"name":"fusebox-sdk-tests","private":true}' >"$SDK/package.json"
    if ! (cd "$SDK" && npm install --no-audit --no-fund --silent \
        "openai@$OPENAI_VERSION" "@anthropic-ai/sdk@$ANTHROPIC_VERSION") >"$SDK/npm.log" 2>&1; then
        echo "1..1"
        echo "not ok 1 - npm install of the SDKs failed (see $SDK/npm.log)"
        exit 1
    fi
fi

PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null && wait "$PID" 2>/dev/null; }
trap cleanup EXIT INT TERM
"$FUSEBOX" mock --port 0 --quiet >"$SDK/url" 2>"$SDK/mock.stderr" &
PID=$!
URL=$(wait_url "$SDK/url")
if [ -z "$URL" ]; then
    echo "1..1"
    echo "not ok 1 - fusebox mock did not print its URL"
    exit 1
fi
# ESM resolves packages from the script's folder: run the scripts from out/sdk.
status=0
for t in "$ROOT"/tests/sdk/*.mjs; do
    cp "$t" "$SDK/"
    (cd "$SDK" && MOCK_URL=$URL timeout 120 node "$(basename "$t")") || status=1
done
exit $status
