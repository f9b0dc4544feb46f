#!/bin/sh
# tests/e2e/mock_gemini.sh - Gemini's embeddings (embedContent, batchEmbedContents),
# generateContent and streamGenerateContent on the API versions v1 and v1beta, called by
# @google/genai's models.embedContent, generateContent and generateContentStream: the pinned
# current release (3.x) and the previous major (2.x, the one mock_sdk.sh pins), each in its own folder
# (tests/sdk/gemini_embed.mjs). Before these routes the mock answered v1 and the embeddings
# 404/405 (issue 25). TAP output.
. tests/tap.sh
set -u
CUR=$ROOT/out/sdk-genai3
PREV=$ROOT/out/sdk
D=$(logs_dir mock-gemini)
mkdir -p "$CUR" "$PREV"
plan 23

need node "$CUR/apt.log" nodejs npm
need npm "$CUR/apt.log" nodejs npm
# 3.x declares "engines": {"node": ">=22.0.0"} (2.x: >=20); Debian bookworm's nodejs is 18, so
# node_pinned installs Node 22 from the npm registry; only if that fails are the cases skipped
if ! node_pinned 22; then
    n=0
    while [ $n -lt 23 ]; do
        skip "@google/genai embeddings" "@google/genai 3 needs Node >= 22 (its engines field); this is node $(node --version 2>&1), and installing Node 22 from the npm registry failed (see $ROOT/out/node-22/npm.log)"
        n=$((n + 1))
    done
    finish
    exit 0
fi
if ! npm_pinned "$CUR" @google/genai@3.6.1 || ! npm_pinned "$PREV" @google/genai@2.32.0; then
    ok 1 "npm install of @google/genai 3.6.1 and 2.32.0 (see $CUR/npm.log, $PREV/npm.log)"
    finish
    exit 1
fi
mock_start "$D/url" "$FUSEBOX" mock --port 0 --quiet
URL=$MOCK_URL
check "the mock prints its URL" test -n "$URL"

# sdk NAME DIR: the script run with DIR's @google/genai, its JSON in $D/NAME.json
sdk() {
    cp "$ROOT/tests/sdk/gemini_embed.mjs" "$2/"
    (cd "$2" && MOCK_URL=$URL timeout 120 node gemini_embed.mjs) >"$D/$1.json" 2>"$D/$1.err"
}
for pair in "3.6.1:$CUR" "2.32.0:$PREV"; do
    v=${pair%%:*} dir=${pair#*:}
    check "@google/genai $v: models.embedContent runs on v1 and v1beta" sdk "$v" "$dir"
    for api in v1 v1beta; do
        check "@google/genai $v, $api: batchEmbedContents on /$api/, 8 values a content, unit vectors" \
            python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))[sys.argv[2]]
assert r["dims"] == [8, 8] and all(abs(n - 1) < 1e-6 for n in r["norms"]), r
assert r["distinct"], r
assert [p for p, s in r["paths"]] == ["/%s/models/text-embedding-004:batchEmbedContents" % sys.argv[2]] * 4, r["paths"]' \
            "$D/$v.json" "$api"
        check "@google/genai $v, $api: 768 values by default; the same text, the same vector" \
            python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))[sys.argv[2]]
assert r["default_dims"] == 768 and r["same_text_same_vector"], r' "$D/$v.json" "$api"
        check "@google/genai $v, $api: a 503 fault is the SDK's ApiError 503" python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))[sys.argv[2]]
assert r["error"] == {"name": "ApiError", "status": 503}, r["error"]
assert r["paths"][-1][1] == 503, r["paths"]' "$D/$v.json" "$api"
        check "@google/genai $v, $api: generateContent and generateContentStream on /$api/" \
            python3 -c 'import json,sys
api = sys.argv[2]
r = json.load(open(sys.argv[1]))[api]["generate"]
m = "/%s/models/gemini-2.5-flash:" % api
assert r["paths"] == [[m + "generateContent", 200, False], [m + "streamGenerateContent", 200, True]], r["paths"]
assert r["text"] and len(r["chunks"]) >= 2 and "".join(r["chunks"]), r' "$D/$v.json" "$api"
    done
done
# embedContent itself (the REST method the SDKs do not call on the Gemini API), both versions.
for api in v1 v1beta; do
    curl -s -m 10 -H 'x-goog-api-key: k' -o "$D/one-$api.json" -w '%{http_code}' \
        "$URL/$api/models/text-embedding-004:embedContent" \
        -d '{"content":{"parts":[{"text":"hello"}]},"outputDimensionality":8}' >"$D/one-$api.code"
    check "POST /$api/models/M:embedContent: 200 and one embedding of 8 values" python3 -c 'import json,sys
assert open(sys.argv[2]).read() == "200"
e = json.load(open(sys.argv[1]))["embedding"]["values"]
assert len(e) == 8, e' "$D/one-$api.json" "$D/one-$api.code"
done
code=$(curl -s -m 10 -H 'x-goog-api-key: k' -o "$D/bad.json" -w '%{http_code}' \
    "$URL/v1/models/e:batchEmbedContents" -d '{"requests":[]}')
check "an empty batch: Gemini's 400 INVALID_ARGUMENT naming requests" python3 -c 'import json,sys
e = json.load(open(sys.argv[2]))["error"]
assert sys.argv[1] == "400" and e["status"] == "INVALID_ARGUMENT" and "requests" in e["message"], e' \
    "$code" "$D/bad.json"
mock_stop
check "the mock exits 0 on SIGTERM" test "$MOCK_RC" = 0
finish
