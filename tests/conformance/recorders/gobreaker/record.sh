#!/bin/sh
# record.sh - record tests/conformance/gobreaker-2.4.0/ from gobreaker v2's own code.
#
#   GOBREAKER_SRC=DIR sh tests/conformance/recorders/gobreaker/record.sh
#
# DIR is sony/gobreaker at tag v2.4.0 (commit 0ae90251): git clone
# https://github.com/sony/gobreaker && git -C gobreaker checkout v2.4.0. Needs Go (Debian's
# golang-go, 1.19, is enough). The library is copied into a temporary folder and changed
# there only: its four time.Now() calls read the package variable Now (the fake clock), and
# its one Go 1.22 `for range N` loop becomes a counted loop. gen.py writes the cases (edge
# cases, then SEED's random sequences), runner.go runs them through TwoStepCircuitBreaker
# (Allow() and its done(err): what Execute does) and writes what gobreaker decided.
# Exit 0 recorded, 3 skipped (no source), anything else failed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
VERSION=2.4.0
COMMIT=0ae90251b774f890e7586c96ea82d61eb74d556d
SEED=${SEED:-20261206}
RANDOM_N=${RANDOM_N:-2000}
OUT=$ROOT/tests/conformance/gobreaker-$VERSION
SRC=${GOBREAKER_SRC:-}
if [ -z "$SRC" ] || [ ! -f "$SRC/v2/gobreaker.go" ]; then
    echo "gobreaker: needs GOBREAKER_SRC=DIR, DIR = https://github.com/sony/gobreaker at tag v$VERSION (commit $COMMIT), and Go (apt-get install golang-go)"
    exit 3
fi
command -v go >/dev/null || { echo "gobreaker: needs Go (apt-get install golang-go)"; exit 3; }
have=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
if [ "$have" != "not a git checkout" ] && [ "$have" != "$COMMIT" ]; then
    echo "gobreaker: $SRC is at $have, not v$VERSION ($COMMIT)" >&2
    exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gobreaker-rec.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/gobreaker" "$TMP/cmd"
for f in gobreaker.go counter.go twostep_gobreaker.go; do
    sed -e 's/time\.Now()/Now()/g' \
        -e 's/^\([[:space:]]*\)for range diff {/\1for i := uint64(0); i < diff; i++ {/' \
        "$SRC/v2/$f" >"$TMP/gobreaker/$f"
done
[ "$(grep -c 'Now()' "$TMP/gobreaker/gobreaker.go")" -eq 4 ] || {
    echo "gobreaker: expected 4 time.Now() calls in v2/gobreaker.go" >&2
    exit 1
}
printf 'package gobreaker\n\nimport "time"\n\n// Now is the fake clock.\nvar Now = time.Now\n' \
    >"$TMP/gobreaker/clock.go"
printf 'module gbrec\n\ngo 1.19\n' >"$TMP/go.mod"
cp "$HERE/runner.go" "$TMP/cmd/main.go"
(cd "$TMP" && GOFLAGS=-mod=mod GOCACHE="$TMP/cache" go build -o runner ./cmd)
python3 "$HERE/gen.py" --seed "$SEED" --random "$RANDOM_N" >"$TMP/in.jsonl"
mkdir -p "$OUT"
"$TMP/runner" <"$TMP/in.jsonl" >"$TMP/cases.jsonl"
mv "$TMP/cases.jsonl" "$OUT/cases.jsonl"
edge=$(grep -vc '"name":"random' "$OUT/cases.jsonl" || true)
rand=$(grep -c '"name":"random' "$OUT/cases.jsonl" || true)
sums=$(cd "$SRC/v2" && sha256sum gobreaker.go counter.go twostep_gobreaker.go | sed 's/^/    /')
cat >"$OUT/SOURCE.md" <<MD
# gobreaker $VERSION

- library: sony/gobreaker v2 (Go), https://github.com/sony/gobreaker
- version: tag v$VERSION, commit $COMMIT (the source given: $have)
- files run: v2/gobreaker.go, v2/counter.go, v2/twostep_gobreaker.go, sha256:

$sums

- run with: $(go version | sed 's/^go version //'), copied to a temporary folder with its four
  \`time.Now()\` calls reading a fake clock and its \`for range diff\` loop counted
  (\`tests/conformance/recorders/gobreaker/record.sh\`), driven through
  \`TwoStepCircuitBreaker\` (\`Allow()\`, then \`done(err)\`)
- recorded by: \`make conformance-record GOBREAKER_SRC=DIR\` (SEED=$SEED RANDOM_N=$RANDOM_N)
- cases: $edge edge cases, $rand random sequences (seed $SEED)
MD
echo "gobreaker: $edge edge cases, $rand random sequences -> $OUT"
