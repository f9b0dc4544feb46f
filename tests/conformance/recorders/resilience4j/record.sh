#!/bin/sh
# record.sh - re-record tests/conformance/resilience4j-2.4.0-{circuitbreaker,retry}/cases.jsonl
# from resilience4j's own code (tests/conformance/recorders/resilience4j/R4jRecorder.java).
#
#   sh tests/conformance/recorders/resilience4j/record.sh R4J_SOURCE [OUT_DIR]
#
# R4J_SOURCE: the resilience4j repository at tag v2.4.0 (commit f1c3be8e), or any folder with
# its resilience4j-core, resilience4j-circuitbreaker and resilience4j-retry trees. Needs javac
# (Debian default-jdk-headless), /usr/share/java/slf4j-api.jar (libslf4j-java) and
# /usr/share/java/jsr305.jar (libjsr305-java). Compiles into a temporary folder.
set -eu
SEED=20260
N=2000
src=${1:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../../.." && pwd)
out=${2:-$root/tests/conformance}
if [ -z "$src" ] || [ ! -d "$src/resilience4j-circuitbreaker/src/main/java" ]; then
    echo "record.sh: needs the resilience4j v2.4.0 source folder (git clone" \
        "https://github.com/resilience4j/resilience4j; git checkout v2.4.0) as its argument" >&2
    exit 2
fi
for f in /usr/share/java/slf4j-api.jar /usr/share/java/jsr305.jar; do
    [ -f "$f" ] || { echo "record.sh: $f missing (apt-get install libslf4j-java libjsr305-java)" >&2; exit 2; }
done
command -v javac >/dev/null || { echo "record.sh: javac missing (apt-get install default-jdk-headless)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp=/usr/share/java/slf4j-api.jar:/usr/share/java/jsr305.jar
find "$src/resilience4j-core/src/main/java" "$src/resilience4j-circuitbreaker/src/main/java" \
    "$src/resilience4j-retry/src/main/java" -name '*.java' > "$tmp/sources"
javac -nowarn -encoding UTF-8 -d "$tmp/classes" -cp "$cp" @"$tmp/sources" 2>"$tmp/javac.log" ||
    { cat "$tmp/javac.log" >&2; exit 1; }
javac -nowarn -encoding UTF-8 -d "$tmp/classes" -cp "$tmp/classes:$cp" "$here/R4jRecorder.java" 2>"$tmp/javac2.log" ||
    { cat "$tmp/javac2.log" >&2; exit 1; }
commit=$(git -C "$src" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
for part in circuitbreaker retry; do
    d="$out/resilience4j-2.4.0-$part"
    mkdir -p "$d"
    java -cp "$tmp/classes:$cp" R4jRecorder "$part" "$SEED" "$N" > "$d/cases.jsonl"
    echo "record.sh: $d/cases.jsonl: $(wc -l < "$d/cases.jsonl") cases (source commit: $commit)" >&2
done
