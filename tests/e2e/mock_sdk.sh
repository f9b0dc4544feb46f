#!/bin/sh
# tests/e2e/mock_sdk.sh - real client libraries against `fusebox mock`: the official openai
# (chat, Responses API, AzureOpenAI), @anthropic-ai/sdk and @google/genai SDKs, LangChain JS
# and the Vercel AI SDK, each through the fault matrix (tests/sdk/lib.mjs, clients.mjs) plus the
# official SDKs' own checks (conformance.mjs).
#
# Installs pinned versions into out/sdk/ (once; skipped when present), starts the mock on a free
# loopback port, runs tests/sdk/run.mjs there (8 cases at a time: SDK_JOBS) and passes its TAP
# through. The versions are the
# newest that run on Node 20 (Debian's nodejs here); newer LangChain, ai and @google/genai
# releases need Node 22.
. tests/tap.sh
set -u
SDK=$ROOT/out/sdk
mkdir -p "$SDK"
PINNED="openai@6.49.0 @anthropic-ai/sdk@1.14.0 @google/genai@2.32.0 @langchain/core@1.4.0
@langchain/openai@1.5.8 @langchain/anthropic@1.5.11 ai@6.0.325 @ai-sdk/openai@3.0.141
@ai-sdk/anthropic@3.0.140 zod@4.6.7"

need node "$SDK/apt.log" nodejs npm
need npm "$SDK/apt.log" nodejs npm
# shellcheck disable=SC2086 # one word per package
if ! npm_pinned "$SDK" $PINNED; then
    ok 1 "npm install of the client libraries (see $SDK/npm.log)"
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
cp "$ROOT"/tests/sdk/*.mjs "$SDK/"
(cd "$SDK" && MOCK_URL=$URL AI_SDK_LOG_WARNINGS=false timeout 600 node run.mjs)
