#!/bin/sh
# record.sh - record tests/conformance/resilience4j-2.4.0-circuitbreaker/ and
# resilience4j-2.4.0-retry/ from resilience4j's own code.
#
#   R4J_SRC=DIR sh tests/conformance/recorders/resilience4j/record.sh   (or DIR as argument)
#
# DIR is resilience4j/resilience4j at tag v2.4.0 (commit f1c3be8e): git clone
# https://github.com/resilience4j/resilience4j && git -C resilience4j checkout v2.4.0 (only its
# resilience4j-core, resilience4j-circuitbreaker and resilience4j-retry src/main trees are
# used), with stubs/: stand-ins for the Spring exception classes a RestTemplate call throws
# (their names and superclasses as in spring-web 6), for the exception-list cases. Needs javac (Debian default-jdk-headless), /usr/share/java/slf4j-api.jar
# (libslf4j-java) and /usr/share/java/jsr305.jar (libjsr305-java). Those trees are compiled,
# unchanged, into a temporary folder with R4jRecorder.java, which writes the cases (edge
# cases, then SEED's random sequences) and what the library decided for each.
# Exit 0 recorded, 3 skipped (no source), anything else failed.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../../.." && pwd)
VERSION=2.4.0
COMMIT=f1c3be8e79d09c70d457b2f89c3f89d03f1b5720
SEED=${SEED:-20261206}
RANDOM_N=${RANDOM_N:-2000}
SRC=${1:-${R4J_SRC:-}}
TREES="resilience4j-core resilience4j-circuitbreaker resilience4j-retry"
if [ -z "$SRC" ] || [ ! -d "$SRC/resilience4j-circuitbreaker/src/main/java" ]; then
    echo "resilience4j: needs R4J_SRC=DIR, DIR = https://github.com/resilience4j/resilience4j at tag v$VERSION (commit $COMMIT), and javac (apt-get install default-jdk-headless libslf4j-java libjsr305-java)"
    exit 3
fi
CP=/usr/share/java/slf4j-api.jar:/usr/share/java/jsr305.jar
for f in /usr/share/java/slf4j-api.jar /usr/share/java/jsr305.jar; do
    [ -f "$f" ] || { echo "resilience4j: needs $f (apt-get install libslf4j-java libjsr305-java)"; exit 3; }
done
command -v javac >/dev/null || { echo "resilience4j: needs javac (apt-get install default-jdk-headless)"; exit 3; }
have=$(git -C "$SRC" rev-parse HEAD 2>/dev/null || echo "not a git checkout")
if [ "$have" != "not a git checkout" ] && [ "$have" != "$COMMIT" ]; then
    echo "resilience4j: $SRC is at $have, not v$VERSION ($COMMIT)" >&2
    exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/r4j-rec.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
for t in $TREES; do find "$SRC/$t/src/main/java" -name '*.java'; done | LC_ALL=C sort >"$TMP/sources"
javac -nowarn -encoding UTF-8 -d "$TMP/classes" -cp "$CP" @"$TMP/sources" >"$TMP/javac.log" 2>&1 ||
    { cat "$TMP/javac.log" >&2; exit 1; }
javac -nowarn -encoding UTF-8 -d "$TMP/classes" -cp "$TMP/classes:$CP" "$HERE/R4jRecorder.java" \
    $(find "$HERE/stubs" -name '*.java' | LC_ALL=C sort) \
    >"$TMP/javac.log" 2>&1 || { cat "$TMP/javac.log" >&2; exit 1; }
sums=$(cd "$SRC" && for t in $TREES; do find "$t/src/main/java" -name '*.java'; done | LC_ALL=C sort |
    xargs cat | sha256sum | cut -d' ' -f1)
for part in circuitbreaker retry; do
    OUT=$ROOT/tests/conformance/resilience4j-$VERSION-$part
    mkdir -p "$OUT"
    java -cp "$TMP/classes:$CP" R4jRecorder "$part" "$SEED" "$RANDOM_N" >"$TMP/cases.jsonl" 2>"$TMP/java.log" ||
        { cat "$TMP/java.log" >&2; exit 1; }
    mv "$TMP/cases.jsonl" "$OUT/cases.jsonl"
    edge=$(grep -vc '"name": "random' "$OUT/cases.jsonl" || true)
    rand=$(grep -c '"name": "random' "$OUT/cases.jsonl" || true)
    if [ "$part" = circuitbreaker ]; then
        what="CircuitBreakerStateMachine built by CircuitBreakerConfig.custom() with the case's keys and \`.clock(fake)\`; \`tryAcquirePermission()\`, \`onSuccess\`/\`onError(duration)\`, \`releasePermission()\` (cancel: what decorateFuture does for a cancelled Future), \`getState()\`; the random sequences overlap calls (admit, then results in any order, a fifth of them cancels); the named cases marked decorateCompletionStage admit through \`CircuitBreaker.decorateCompletionStage\` over a CompletableFuture the script completes or cancels (a cancelled stage is \`onError(CancellationException)\`: a failure, not modelled); the executor \`SchedulerFactory\` hands out replaced (its static field, set through sun.misc.Unsafe) by one run by hand: before each script line at time T every task due at or before T runs, earliest first, with the clock at its due time; a failed call throws what a RestTemplate call would (HttpServerErrorException for a 503, HttpClientErrorException.TooManyRequests for a 429: stand-ins with Spring's names and superclasses, recorders/resilience4j/stubs/), so that recordExceptions and ignoreExceptions match as they would"
    else
        what="Retry.decorateCheckedSupplier over a supplier that throws for its first K calls what a RestTemplate call would (HttpServerErrorException, HttpClientErrorException.TooManyRequests, ResourceAccessException for a timeout: stand-ins with Spring's names and superclasses, recorders/resilience4j/stubs/), built from RetryConfig.custom() the way resilience4j-framework-common's CommonRetryConfigurationProperties.configureRetryIntervalFunction reads the Spring Boot keys (written out in R4jRecorder.retryConfig); sleeps captured by RetryImpl.setSleepFunction; for a randomized wait Math.random() is pinned (its Random replaced through sun.misc.Unsafe) to 0 and to the largest double below 1, giving the range each wait is drawn from; configurations the library refuses (an IntervalFunction under 1 ms, at startup or at the first retry) are not recorded: the preset refuses them"
    fi
    cat >"$OUT/SOURCE.md" <<MD
# resilience4j $VERSION ($part)

- library: resilience4j (Java), https://github.com/resilience4j/resilience4j
- version: tag v$VERSION, commit $COMMIT (the source given: $have)
- code run: the src/main trees of $TREES, compiled unchanged
  (sha256 of their .java files concatenated in path order: $sums)
- run with: $(javac -version 2>&1), slf4j-api and jsr305 from Debian
- how: $what
- recorded by: \`make conformance-record R4J_SRC=DIR\` (SEED=$SEED RANDOM_N=$RANDOM_N), or
  \`sh tests/conformance/recorders/resilience4j/record.sh DIR\`
- cases: $edge edge cases, $rand random sequences (seed $SEED)
MD
    echo "resilience4j: $part: $edge edge cases, $rand random sequences -> $OUT"
done
