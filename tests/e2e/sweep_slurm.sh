#!/bin/sh
# sweep_slurm.sh - the Slurm recipe of docs/sweeps.md (contrib/sweep/slurm.sh, sweep.sbatch,
# merge.sbatch) run as documented on a single-node Slurm (Debian slurm-wlm 22.05 and munge)
# that this suite starts on 127.0.0.1 with its own ports, state and munge key under
# out/e2e-sweep_slurm/, and stops on exit, also when a test fails. The merged outputs must be
# byte-identical to a single-process sweep, and a failing shard must fail the whole job
# (slurm.sh exits non-zero, nothing merged). contrib/sweep/tune-slurm.sh (a budgeted fusebox
# tune, an array job per round) likewise. Orchestration, not memory: skipped under asan.
. tests/tap.sh
. tests/e2e/sweep_engines.subr
T=$E2E_TMP
L=$(logs_dir sweep_slurm)
engines_asan "the Slurm sweep"
need slurmctld "$L/apt.log" slurm-wlm munge
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    skip "the Slurm sweep" "slurm-wlm and munge are not installed and could not be (see $L/apt.log)"
    finish
    exit 0
fi

# Slurm binds its controller and node to this host's name (SlurmctldHost, NoInAddrAny: nothing
# listens beyond 127.0.0.1): a name that does not resolve (a container or chroot whose /etc/hosts
# lacks it) is this machine's setup, not the recipe's: skipped with the fix
if ! getent hosts "$(hostname -s)" >/dev/null 2>&1; then
    skip "the Slurm sweep" "this host's name '$(hostname -s)' does not resolve (Slurm binds to it): add '127.0.0.1 $(hostname -s)' to /etc/hosts"
    finish
    exit 0
fi

S=$L/slurm
MUNGE_PID='' CTLD_PID='' SLURMD_PID=''
# stop_slurm: the jobs left (so that no slurmstepd outlives the test), then every daemon this
# suite started, by its pid.
stop_slurm() {
    if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
        scancel --quiet --user="$(id -un)" 2>/dev/null
        wait_for 50 no_jobs
    fi
    for _p in $SLURMD_PID $CTLD_PID $MUNGE_PID; do
        kill "$_p" 2>/dev/null
        _i=0
        while kill -0 "$_p" 2>/dev/null && [ $_i -lt 50 ]; do
            sleep 0.1
            _i=$((_i + 1))
        done
        kill -9 "$_p" 2>/dev/null
    done
    SLURMD_PID='' CTLD_PID='' MUNGE_PID=''
}
trap 'stop_slurm; rm -rf "$E2E_TMP"' EXIT

# free_port: a TCP port nobody listens on now.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for N TEST...: until TEST succeeds, for up to N tenths of a second.
wait_for() {
    _n=$1 _i=0
    shift
    until "$@"; do
        [ $_i -ge "$_n" ] && return 1
        sleep 0.1
        _i=$((_i + 1))
    done
}

# node_idle: the node is up and free; no_jobs: none is queued or running.
node_idle() { sinfo -h -N -o %t 2>/dev/null | grep -q idle; }
no_jobs() { [ -z "$(squeue -h 2>/dev/null)" ]; }

# start_slurm: munged, slurmctld and slurmd in the foreground (-F, -D), in the background of
# this shell, so that their pids are $! whatever happens to their pid files.
start_slurm() {
    rm -rf "$S"
    mkdir -p "$S/munge" "$S/ctld" "$S/spool"
    chmod 700 "$S/munge"
    mungekey -c -k "$S/munge/munge.key" >"$S/mungekey.log" 2>&1 || {
        START_ERR="mungekey failed: $(tail -n 1 "$S/mungekey.log")"
        return 1
    }
    munged -F --force --socket="$S/munge/munge.socket" --key-file="$S/munge/munge.key" \
        --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" \
        --seed-file="$S/munge/munged.seed" >"$S/munged.out" 2>&1 &
    MUNGE_PID=$!
    wait_for 100 munge_up
    if [ ! -S "$S/munge/munge.socket" ]; then
        START_ERR="munged: no socket within 10 s"
        daemons_alive || START_ERR="munged died at start"
        return 1
    fi
    cat >"$S/slurm.conf" <<CONF
ClusterName=fusebox-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$S/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$S/ctld
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
ReturnToService=2
# Test speed only: schedule pending jobs within 0.1 s, not 2 s; and sbatch --wait polls every
# 2 s while a job's record is kept less than 8 s (MinJobAge), instead of backing off to 32 s.
SchedulerParameters=sched_min_interval=100000
MinJobAge=5
PlugStackConfig=$S/plugstack.conf
NodeName=fbnode NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=fbtest Nodes=fbnode Default=YES MaxTime=INFINITE State=UP
CONF
    : >"$S/plugstack.conf"
    SLURM_CONF=$S/slurm.conf
    export SLURM_CONF
    slurmctld -D -i -f "$SLURM_CONF" >"$S/slurmctld.out" 2>&1 &
    CTLD_PID=$!
    slurmd -D -N fbnode -f "$SLURM_CONF" >"$S/slurmd.out" 2>&1 &
    SLURMD_PID=$!
    # up to 60 s by the clock (sinfo itself waits for a slurmctld that does not answer), and
    # not a moment longer once a daemon has died
    _end=$(($(date +%s) + 60))
    until node_idle; do
        daemons_alive || {
            # a Slurm daemon that dies too (of one cause: both, in a bare chroot) gets 2 s to
            # do it and to write its last lines
            wait_for 20 slurm_dead
            START_ERR="$(dead_daemons) died at start"
            return 1
        }
        [ "$(date +%s)" -ge "$_end" ] && {
            START_ERR="its node was not idle within 60 s"
            return 1
        }
        sleep 0.2
    done
}

# daemons_alive: munged, slurmctld and slurmd (those started) are all still running;
# slurm_dead: slurmctld and slurmd have both exited; dead_daemons: the names of those that
# are not running.
daemons_alive() {
    for _p in $MUNGE_PID $CTLD_PID $SLURMD_PID; do kill -0 "$_p" 2>/dev/null || return 1; done
}
dead_daemons() {
    _dead=
    [ -n "$MUNGE_PID" ] && ! kill -0 "$MUNGE_PID" 2>/dev/null && _dead="$_dead munged"
    [ -n "$CTLD_PID" ] && ! kill -0 "$CTLD_PID" 2>/dev/null && _dead="$_dead slurmctld"
    [ -n "$SLURMD_PID" ] && ! kill -0 "$SLURMD_PID" 2>/dev/null && _dead="$_dead slurmd"
    echo "${_dead# }"
}
slurm_dead() {
    for _p in $CTLD_PID $SLURMD_PID; do kill -0 "$_p" 2>/dev/null && return 1; done
    return 0
}
munge_up() {
    [ -S "$S/munge/munge.socket" ] && return 0
    kill -0 "$MUNGE_PID" 2>/dev/null || return 0 # dead: stop waiting (the caller looks)
    return 1
}

# daemon_logs: the last lines of each daemon's log and output, as TAP comments.
daemon_logs() {
    for _f in munge/munged.log munged.out slurmctld.log slurmctld.out slurmd.log slurmd.out; do
        [ -s "$S/$_f" ] || continue
        echo "# --- $S/$_f (last lines)"
        tail -n 8 "$S/$_f" | sed 's/^/#   /'
    done
}

check "docs/sweeps.md quotes slurm.sh, sweep.sbatch and merge.sbatch verbatim" \
    python3 tests/e2e/doc_files.py docs/sweeps.md contrib/sweep/slurm.sh contrib/sweep/sweep.sbatch \
    contrib/sweep/merge.sbatch

engines_setup

START_ERR=
if ! start_slurm; then
    # a daemon that dies at start fails the suite at once, with what it logged
    daemon_logs
    ok 1 "a single-node Slurm runs on 127.0.0.1: $START_ERR (last log lines above; all in $S)"
    finish
    exit 1
fi
ok 0 "a single-node Slurm runs on 127.0.0.1 (state in $S)"

# Run as documented: fusebox on PATH (not $FUSEBOX); from another folder than the checkout's
# (the recipes run from any folder), which holds the sweep file and its scenario at the paths
# the sweep file names. Under `timeout`, so that a job that never runs fails the test (exit
# 124) instead of hanging it.
mkdir -p "$T/elsewhere/tests/e2e"
cp "$ARGS" "$(grep '\.json$' "$ARGS")" "$T/elsewhere/tests/e2e/"
expect_exit 0 "slurm.sh 3 run from another folder runs the array job and the merge, exit 0" \
    timeout 180 env -C "$T/elsewhere" -u FUSEBOX PATH="$T/bin:$PATH" SWEEP="$ARGS" OUT=out/slurm \
    sh "$PWD/contrib/sweep/slurm.sh" 3
contains "$OUT" "3 shards on $(($(nproc) < 4 ? $(nproc) : 4)) CPUs each" \
    "slurm.sh asks for no more CPUs than the node has"
same_single "$T/elsewhere/out/slurm"
ok $? "the Slurm sweep's merged outputs (in that folder's out/slurm) == the single-process sweep, byte for byte"

expect_exit 2 "slurm.sh refuses more CPUs per shard than the node has" \
    timeout 180 env SWEEP="$ARGS" OUT="$T/big" sh contrib/sweep/slurm.sh 3 $(($(nproc) + 1))
contains "$ERR" "but the smallest node has $(nproc)" "slurm.sh says why"

# A shard that fails (a stand-in fusebox that fails shard 2 of 3) fails the whole job. One CPU
# per shard here, so that the elements run side by side (and the suite takes less time).
expect_exit 1 "slurm.sh exits 1 when a shard fails" \
    timeout 180 env FUSEBOX="$(failing_fusebox 2/3)" SWEEP="$ARGS" OUT="$T/failing" sh contrib/sweep/slurm.sh 3 1
[ ! -e "$T/failing/sweep.csv" ]
ok $? "nothing is merged when a shard fails"
contains "$(cat "$T"/failing/slurm-merge-*.out 2>/dev/null)" "shard(s) 2 of 3" \
    "the merge job names the failed shard"
# contrib/sweep/tune-slurm.sh: fusebox tune's budgeted search round by round, an array job of 2
# shards per round and a merge job after each; the answer == one process's, byte for byte
TR="tests/e2e/tune --knob retry.attempts=1,2,3 --knob breaker.failure_rate=0.3,0.5,0.7
--knob breaker.open=5s,10s,20s --minimize cost_usd --budget 60"
# shellcheck disable=SC2086
"$FUSEBOX" tune $TR --subject-to "success_rate>=0.97" -q -o "$T/tune-one"
# shellcheck disable=SC2086
expect_exit 0 "tune-slurm.sh 2 runs the rounds' array jobs and merges, exit 0" \
    timeout 300 env -u FUSEBOX PATH="$T/bin:$PATH" CPUS=1 OUT="$T/tune-slurm" \
    sh contrib/sweep/tune-slurm.sh 2 $TR --subject-to "success_rate>=0.97"
contains "$OUT" "rounds of 2 shards; open $T/tune-slurm/tune.html" "tune-slurm.sh says how many rounds"
same_files "$T/tune-one" "$T/tune-slurm" tune.json tune.html
ok $? "the Slurm tune's answer == one process's, byte for byte"
# shellcheck disable=SC2086
expect_exit 2 "tune-slurm.sh exits 2 when a shard fails" \
    timeout 180 env FUSEBOX="$(failing_fusebox 2/2)" CPUS=1 OUT="$T/tune-failing" \
    sh contrib/sweep/tune-slurm.sh 2 $TR
[ ! -e "$T/tune-failing/tune.json" ] && echo "$OUT" | grep -q "shard(s) 2 of 2"
ok $? "nothing is merged when a shard fails, and the merge job's log names it"
# The nightly recipe on the cluster: the first night and a slow one, one CPU per shard (side by
# side); sweep_parallel runs all four nights
NIGHTS_SHORT=1 nightly_nights slurm 3 1
echo "# squeue after the runs: $(squeue -h 2>&1 | wc -l) jobs left"
[ "$(squeue -h | wc -l)" -eq 0 ]
ok $? "no job is left pending"
finish
