#!/bin/sh
# record.sh - record tests/conformance/pybreaker-1.4.1/ from pybreaker's own code.
#
#   PYBREAKER_SRC=DIR sh tests/conformance/recorders/pybreaker/record.sh
#
# DIR is danielfm/pybreaker at tag v1.4.1 (commit faf54de6): git clone
# https://github.com/danielfm/pybreaker && git -C pybreaker checkout v1.4.1. Runs with Debian's
# python3 (PYTHON to choose another); src/pybreaker/__init__.py is imported unmodified, its
# clock replaced in the module's namespace (runner.py). gen.py writes the cases: the edge cases
# of both modes, then SEED's random sequences, RANDOM_N through call() and RANDOM_N through
# calling(). Exit 0 recorded, 3 skipped (no source), anything else failed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
VERSION=1.4.1
COMMIT=faf54de652991899768d7075feab6fcc10b72ba7
SEED=${SEED:-20261206}
RANDOM_N=${RANDOM_N:-2000}
PYTHON=${PYTHON:-/usr/bin/python3}
[ -x "$PYTHON" ] || PYTHON=python3
OUT=$ROOT/tests/conformance/pybreaker-$VERSION
SRC=${PYBREAKER_SRC:-}
if [ -z "$SRC" ] || [ ! -f "$SRC/src/pybreaker/__init__.py" ]; then
    echo "pybreaker: needs PYBREAKER_SRC=DIR, DIR = https://github.com/danielfm/pybreaker at tag v$VERSION (commit $COMMIT), and python3"
    exit 3
fi
have=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
if [ "$have" != "not a git checkout" ] && [ "$have" != "$COMMIT" ]; then
    echo "pybreaker: $SRC is at $have, not v$VERSION ($COMMIT)" >&2
    exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pybreaker-rec.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
"$PYTHON" "$HERE/gen.py" --seed "$SEED" --random "$RANDOM_N" >"$TMP/in.jsonl"
PYTHONDONTWRITEBYTECODE=1 "$PYTHON" "$HERE/runner.py" "$SRC" <"$TMP/in.jsonl" >"$TMP/cases.jsonl"
mkdir -p "$OUT"
mv "$TMP/cases.jsonl" "$OUT/cases.jsonl"
edge=$(grep -vc '"name":"random' "$OUT/cases.jsonl" || true)
call=$(grep -c '"name":"random call ' "$OUT/cases.jsonl" || true)
calling=$(grep -c '"name":"random calling ' "$OUT/cases.jsonl" || true)
sum=$(cd "$SRC" && sha256sum src/pybreaker/__init__.py)
cat >"$OUT/SOURCE.md" <<MD
# pybreaker $VERSION

- library: pybreaker (PyPI), https://github.com/danielfm/pybreaker
- version: tag v$VERSION, commit $COMMIT (the source given: $have)
- file run: src/pybreaker/__init__.py, unmodified, sha256:

    $sum

- run with: $("$PYTHON" --version 2>&1); the module's \`datetime\` replaced by a subclass whose
  \`now()\` reads a fake clock (\`tests/conformance/recorders/pybreaker/runner.py\`); mode
  "call" through \`breaker.call(func)\`, mode "calling" through \`with breaker.calling():\`
  entered at admission and left at the result (by returning, or by raising an \`Exception\`,
  or a \`BaseException\` for a cancellation)
- recorded by: \`make conformance-record PYBREAKER_SRC=DIR\` (SEED=$SEED RANDOM_N=$RANDOM_N)
- cases: $edge edge cases, $((call + calling)) random sequences (seed $SEED): $call through
  call(), $calling through calling()
MD
echo "pybreaker: $edge edge cases, $call + $calling random sequences -> $OUT"
