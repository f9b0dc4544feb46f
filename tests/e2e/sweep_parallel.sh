#!/bin/sh
# sweep_parallel.sh - the GNU parallel recipe of docs/sweeps.md (contrib/sweep/parallel.sh) run
# as documented, on this machine and in its multi-host forms over a stand-in ssh (each "host"
# a folder with its own HOME and a clean environment, fusebox on its PATH): with a shared
# working directory, and without one (files copied with rsync). Each merged result must be
# byte-identical to a single-process sweep, and a failing shard must fail the run unmerged.
# contrib/sweep/tune-rounds.sh (a budgeted fusebox tune round by round) likewise.
# Orchestration, not memory: skipped under asan.
. tests/tap.sh
. tests/e2e/sweep_engines.subr
T=$E2E_TMP
L=$(logs_dir sweep_parallel)
engines_asan "the GNU parallel sweep"
need parallel "$L/apt.log" parallel
need rsync "$L/apt-rsync.log" rsync
if ! command -v parallel >/dev/null 2>&1; then
    skip "the GNU parallel sweep" "parallel is not installed and could not be (see $L/apt.log)"
    finish
    exit 0
fi

engines_setup

check "docs/sweeps.md quotes retry-storm.args verbatim" python3 tests/e2e/doc_files.py docs/sweeps.md \
    contrib/sweep/retry-storm.args
# The documented sweep is valid: its shard 1 of 125 (one task, one simulated hour) runs.
check "contrib/sweep/retry-storm.args is a valid sweep (shard 1 of 125 runs)" \
    env SWEEP=contrib/sweep/retry-storm.args OUT="$T/rs" sh contrib/sweep/shard.sh 1 125 --jobs 1

# fusebox on PATH, as the recipe assumes (not $FUSEBOX)
P=$T/bin:$PATH

# The recipes run from any folder. shard.sh's default sweep from another one: its scenario
# found (relative to the folder above contrib/), $OUT relative to where it ran.
mkdir -p "$T/elsewhere/tests/e2e"
(cd "$T/elsewhere" && env -u SWEEP OUT=out/rs sh "$OLDPWD/contrib/sweep/shard.sh" 1 125 --jobs 1)
got=$?
[ "$got" -eq 0 ] && cmp -s "$T/rs/sweep.part-1-of-125.json" "$T/elsewhere/out/rs/sweep.part-1-of-125.json"
ok $? "shard.sh of the default sweep run from another folder (exit $got) == run from the root, into that folder's out/rs"
# parallel.sh from another folder, its sweep file and scenario relative to that folder
cp "$ARGS" "$(grep '\.json$' "$ARGS")" "$T/elsewhere/tests/e2e/"
(cd "$T/elsewhere" && env -u FUSEBOX PATH="$P" SWEEP="$ARGS" OUT=out/local sh "$OLDPWD/contrib/sweep/parallel.sh" 4 \
    >"$L/elsewhere.out" 2>&1)
got=$?
[ "$got" -eq 0 ] && same_single "$T/elsewhere/out/local"
ok $? "parallel.sh 4 run from another folder (exit $got): merged == the single-process sweep, byte for byte"

expect_exit 0 "parallel.sh 4 exits 0" env -u FUSEBOX PATH="$P" SWEEP="$ARGS" OUT="$T/local" \
    sh contrib/sweep/parallel.sh 4
same_single "$T/local"
ok $? "parallel.sh 4 merged == the single-process sweep, byte for byte"

# The stand-in ssh: "ssh [options] HOST COMMAND" runs COMMAND here, in HOST's own HOME under
# $T/hosts, with a clean environment whose PATH has fusebox (as a real host's would). With
# $STANDIN_HOME, the hosts share that HOME (a shared folder: GNU parallel's --workdir . is
# relative to HOME when the folder is below it, as /root/fusebox is in a root's clone).
cat >"$T/bin/ssh-standin" <<SSH
#!/bin/sh
while [ \$# -gt 0 ]; do
    case \$1 in
    --) shift; break ;;
    -[bcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
    esac
done
host=\$1
shift
[ "\$1" = -- ] && shift
echo "\$host: \$*" >>"$T/ssh.log"
h=\${STANDIN_HOME:-$T/hosts/\$host}
mkdir -p "\$h"
cd "\$h" && exec env -i HOME="\$h" SHELL=/bin/sh PATH="$T/bin:/usr/bin:/bin" sh -c -- "\$*"
SSH
chmod +x "$T/bin/ssh-standin"

expect_exit 0 "parallel.sh 4 over two hosts sharing the folder exits 0" \
    env -u FUSEBOX PATH="$P" PARALLEL_SSH=ssh-standin STANDIN_HOME="$HOME" SWEEP="$ARGS" OUT="$T/shared" \
    sh contrib/sweep/parallel.sh 4 2/host1,2/host2
same_single "$T/shared"
ok $? "two hosts, shared folder: merged == the single-process sweep, byte for byte"

if command -v rsync >/dev/null 2>&1; then
    rm -rf "$T/hosts" "$L/copy"
    expect_exit 0 "parallel.sh 4 over two hosts without a shared folder exits 0" \
        env -u FUSEBOX PATH="$P" PARALLEL_SSH=ssh-standin SWEEP="$ARGS" OUT="out/e2e-sweep_parallel/copy" \
        sh contrib/sweep/parallel.sh 4 2/host1,2/host2 copy
        same_single "$L/copy"
    ok $? "two hosts, files copied: merged == the single-process sweep, byte for byte"
    grep -q '^host1: rsync --server' "$T/ssh.log" && grep -q '^host2: rsync --server' "$T/ssh.log"
    ok $? "the files went to both hosts and back through rsync over the stand-in ssh"
    [ -d "$T/hosts/host1" ] && [ -d "$T/hosts/host2" ] &&
        [ -z "$(find "$T/hosts" -type f ! -path '*/.parallel/*' 2>/dev/null)" ]
    ok $? "the hosts' copies were removed afterwards (--cleanup)"
else
    skip "parallel.sh without a shared folder" "rsync is not installed and could not be (see $L/apt-rsync.log)"
fi

# A shard that fails (a stand-in fusebox that fails shard 2 of 4) fails the run, unmerged.
run_kept env FUSEBOX="$(failing_fusebox 2/4)" SWEEP="$ARGS" OUT="$T/failing" sh contrib/sweep/parallel.sh 4
[ "$got" -ne 0 ] && [ ! -e "$T/failing/sweep.csv" ]
ok $? "a failing shard fails parallel.sh (exit $got) and nothing is merged"
cp "$T/ssh.log" "$L/ssh.log" 2>/dev/null

# Without GNU parallel: one line naming the package, exit 2, and no empty output folder
mkdir -p "$T/nopath"
run_kept env PATH="$T/nopath" OUT="$T/nopar" /bin/sh contrib/sweep/parallel.sh 4
[ "$got" -eq 2 ] && [ "$(echo "$ERR" | wc -l)" -eq 1 ] && echo "$ERR" | grep -q "apt-get install parallel" &&
    [ ! -e "$T/nopar" ]
ok $? "parallel.sh without GNU parallel names the package in one line, exit 2 (got $got), no $T/nopar"

# contrib/sweep/tune-rounds.sh: fusebox tune's budgeted search round by round, each round's
# runs as 3 shards under GNU parallel; the answer == one process's, byte for byte
TR="tests/e2e/tune --knob retry.attempts=1,2,3 --knob breaker.failure_rate=0.3,0.5,0.7
--knob breaker.open=5s,10s,20s --minimize cost_usd --budget 60"
# shellcheck disable=SC2086
"$FUSEBOX" tune $TR --subject-to "success_rate>=0.97" -q -o "$T/tune-one"
# shellcheck disable=SC2086
run_kept env -u FUSEBOX PATH="$P" OUT="$T/tune-rounds" sh contrib/sweep/tune-rounds.sh 3 $TR \
    --subject-to "success_rate>=0.97"
[ "$got" -eq 0 ] && same_files "$T/tune-one" "$T/tune-rounds" tune.json tune.html &&
    [ -d "$T/tune-rounds/tune.round-3/part-3-of-3" ]
ok $? "tune-rounds.sh 3 (exit $got): several rounds of 3 shards, the answer == one process's, byte for byte"
contains "$OUT" "rounds of 3 shards; open $T/tune-rounds/tune.html" "tune-rounds.sh says how many rounds and what to open"
# a failing shard (2 of 3, in the first round) fails it: its exit code, no answer
# shellcheck disable=SC2086
run_kept env FUSEBOX="$(failing_fusebox 2/3)" OUT="$T/tune-failing" sh contrib/sweep/tune-rounds.sh 3 $TR
[ "$got" -ne 0 ] && [ ! -e "$T/tune-failing/tune.json" ]
ok $? "a failing shard fails tune-rounds.sh (exit $got), no answer written"

nightly_nights parallel 4
finish
