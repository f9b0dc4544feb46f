#!/bin/sh
# ahead.sh - answers handled ahead of their turn change no output (docs/engine.md, "Answers
# handled ahead"). Random storms (tests/e2e/ahead_gen.py, seed AHEAD_SEED, default 3; AHEAD_N
# of them, default 24: each a fault met by retries at once, with the knobs that decide where
# handling ahead must stop drawn at random) and the flagship run with and without handling
# ahead (FUSEBOX_NO_AHEAD=1): report.json, timeseries.csv and events.jsonl must be the same
# bytes. The path must be taken: most storms handle answers ahead (run --stats counts them),
# the variants that must not (a backoff, a breaker) never do, and the switch turns it off.
# Seed 3's storms catch the simulator without its check of a request's attempts left queued at
# the provider (req.queued): 4 of the 24 then differ (seed 1's: 1; 500 storms of seeds 7 and
# 11 pass with it).
set -u
. tests/tap.sh
T=$E2E_TMP
SEED=${AHEAD_SEED:-3}
# under the sanitizers (memory errors, not the model's bytes: the release run has them all) 8
case "${BUILD:-}" in
*asan*) N=${AHEAD_N:-8} ;;
*) N=${AHEAD_N:-24} ;;
esac

python3 tests/e2e/ahead_gen.py "$SEED" "$T/storms" "$N"

# ahead_of ERRFILE VARIANT: the answers variant VARIANT handled ahead (run --stats' line)
ahead_of() {
    sed -n "s/^stats: variant $2: .*; \([0-9]*\) ahead,.*/\1/p" "$1"
}

used=0 never=0
for f in "$T"/storms/*.json; do
    b=${f%.json}
    name=$(basename "$b")
    # relative to one folder, so that the file named in report.json is the same
    (cd "$T/storms" && "$FUSEBOX" run "$name.json" -o "$name.a" --no-charts -q --stats \
        >/dev/null 2>"$name.err")
    rca=$?
    (cd "$T/storms" && FUSEBOX_NO_AHEAD=1 "$FUSEBOX" run "$name.json" -o "$name.b" --no-charts \
        -q >/dev/null 2>"$name.errb")
    rcb=$?
    r=1
    [ $rca -eq $rcb ] && same_files "$b.a" "$b.b" report.json timeseries.csv events.jsonl && r=0
    ok $r "$name: the same bytes with and without handling ahead (exit $rca, $rcb)"
    n=$(($(ahead_of "$b.err" naive) + $(ahead_of "$b.err" naive2)))
    [ "$n" -gt 0 ] && used=$((used + 1))
    m=$(($(ahead_of "$b.err" backoff) + $(ahead_of "$b.err" breaker)))
    [ "$m" -gt 0 ] && never=$((never + 1))
done
ok "$([ $used -ge $((N / 3)) ] && echo 0 || echo 1)" \
    "answers were handled ahead in $used of $N storms (at least a third)"
ok "$([ $never -eq 0 ] && echo 0 || echo 1)" \
    "never with a backoff or a breaker ($never storms did)"

# The flagship: its naive variant's outage is the shape handled ahead.
"$FUSEBOX" run scenarios/retry-storm.json -o "$T/flag.a" --no-charts -q --stats \
    >/dev/null 2>"$T/flag.err"
rca=$?
FUSEBOX_NO_AHEAD=1 "$FUSEBOX" run scenarios/retry-storm.json -o "$T/flag.b" --no-charts -q \
    --stats >/dev/null 2>"$T/flag.errb"
rcb=$?
r=1
[ $rca -eq 0 ] && [ $rcb -eq 0 ] &&
    same_files "$T/flag.a" "$T/flag.b" report.json timeseries.csv events.jsonl && r=0
ok $r "retry-storm: the same bytes with and without handling ahead"
na=$(ahead_of "$T/flag.err" naive)
ok "$([ "${na:-0}" -gt 100000 ] && echo 0 || echo 1)" \
    "retry-storm: naive's outage answers handled ahead (${na:-none})"
ok "$([ "$(ahead_of "$T/flag.err" tuned)" = 0 ] && echo 0 || echo 1)" \
    "retry-storm: tuned (backoff, budget, breaker) handles none ahead"
ok "$([ "$(ahead_of "$T/flag.errb" naive)" = 0 ] && echo 0 || echo 1)" \
    "FUSEBOX_NO_AHEAD=1 turns it off"
finish
