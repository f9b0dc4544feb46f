#!/bin/sh
# tests/e2e/diff_gateway.sh - the gateway presets' differential tests against the real gateway.
#
# Portkey: installs @portkey-ai/gateway (pinned) into out/npm-gateway/ (once: skipped when
# present); makes out/npm-gateway/patched/, the same gateway with the async-retry patch of
# its repository applied (tests/diff/gateway/async-retry+1.3.3.patch, as its Dockerfile's
# `npm install` does through patch-package; the npm tarball leaves patches/ out); builds
# tests/diff/gateway/decide.c (fusebox's side: the preset's layer fed to the core) against
# this build's libraries; starts `fusebox mock` and both gateways on free loopback ports and
# runs tests/diff/gateway/portkey.mjs (TAP passes through).
# LiteLLM (PyPI) and Envoy (no Debian package) cannot run here: tests/unit/
# test_presets_gateway.c checks those presets against their sources' rules instead.
. tests/tap.sh
set -u
DIR=$ROOT/out/npm-gateway
PORTKEY=@portkey-ai/gateway@1.15.2
GW_PIDS=
mkdir -p "$DIR"
# Stop the gateways this suite started (by their ids), then what tap.sh stops.
gw_stop() {
    for _p in $GW_PIDS; do kill "$_p" 2>/dev/null && wait "$_p" 2>/dev/null; done
    GW_PIDS=
}
trap 'gw_stop; mock_stop; rm -rf "$E2E_TMP"' EXIT

need node "$DIR/apt.log" nodejs npm
need npm "$DIR/apt.log" nodejs npm
if ! npm_pinned "$DIR" "$PORTKEY"; then
    ok 1 "npm install of $PORTKEY failed (see $DIR/npm.log: $(tail -n 1 "$DIR/npm.log"))"
    finish
    exit 1
fi

# apply_patch FILE: FILE into $PATCHED with patch(1), or with `git apply` where Debian's patch
# is not installed (git is; the ceiling keeps git from taking out/ for the repository's).
apply_patch() {
    if command -v patch >/dev/null 2>&1; then
        (cd "$PATCHED" && patch -s -p1 <"$1")
    else
        (cd "$PATCHED" && GIT_CEILING_DIRECTORIES=$(dirname "$PATCHED") git apply -p1 "$1")
    fi
}

# The patched copy: the gateway and async-retry side by side, resolving the rest from
# out/npm-gateway/node_modules (Node looks in the parent folders' node_modules).
PATCHED=$DIR/patched
rm -rf "$PATCHED"
mkdir -p "$PATCHED/node_modules/@portkey-ai"
if ! { cp -R "$DIR/node_modules/@portkey-ai/gateway" "$PATCHED/node_modules/@portkey-ai/" &&
    cp -R "$DIR/node_modules/async-retry" "$PATCHED/node_modules/" &&
    apply_patch "$ROOT/tests/diff/gateway/async-retry+1.3.3.patch"; } \
    >"$E2E_TMP/patch.log" 2>&1 ||
    ! grep -q 'fn(bail, num, op)' "$PATCHED/node_modules/async-retry/lib/index.js"; then
    ok 1 "apply the gateway's async-retry patch ($(head -n 2 "$E2E_TMP/patch.log"))"
    finish
    exit 1
fi

BUILD=$(dirname "$FUSEBOX")
DECIDE=$E2E_TMP/decide
# shellcheck disable=SC2046
if ! ${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$ROOT" -O1 \
    "$ROOT/tests/diff/gateway/decide.c" "$BUILD/lib/libfbsim.a" "$BUILD/lib/libfbscenario.a" "$BUILD/lib/libfbcore.a" "$BUILD/lib/libfbutil.a" \
    $(pkg-config --libs libcjson 2>/dev/null || echo -lcjson) -lm \
    $(case "$BUILD" in *asan*) echo -fsanitize=address,undefined ;; esac) \
    -o "$DECIDE" 2>"$E2E_TMP/cc.log"; then
    ok 1 "build tests/diff/gateway/decide.c ($(head -n 3 "$E2E_TMP/cc.log"))"
    finish
    exit 1
fi

mock_start "$E2E_TMP/url" "$FUSEBOX" mock --port 0 --quiet
if [ -z "$MOCK_URL" ]; then
    ok 1 "fusebox mock prints its URL"
    finish
    exit 1
fi

# A free loopback port (the kernel's choice, released for the gateway to take).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# gw_start NAME FOLDER: the gateway under FOLDER on a free port; $GW_STARTED is its URL once
# it answers (empty after 20 s). Its output goes to $E2E_TMP/NAME.log.
gw_start() {
    _port=$(free_port)
    GW_STARTED=
    node "$2/node_modules/@portkey-ai/gateway/build/start-server.js" --port="$_port" --headless \
        >"$E2E_TMP/$1.log" 2>&1 &
    GW_PIDS="$GW_PIDS $!"
    _i=0
    while [ $_i -lt 200 ]; do
        if curl -s --max-time 1 "http://127.0.0.1:$_port/" 2>/dev/null | grep -q 'AI Gateway says hey'; then
            GW_STARTED=http://127.0.0.1:$_port
            return 0
        fi
        sleep 0.1
        _i=$((_i + 1))
    done
    return 1
}

gw_start patched "$PATCHED"
GW_URL=$GW_STARTED
gw_start npm "$DIR"
GW_NPM_URL=$GW_STARTED
if [ -z "$GW_URL" ] || [ -z "$GW_NPM_URL" ]; then
    ok 1 "the Portkey gateway answers on its port ($(tail -n 3 "$E2E_TMP/patched.log" "$E2E_TMP/npm.log" | tr '\n' ' '))"
    finish
    exit 1
fi

cp "$ROOT/tests/diff/gateway/portkey.mjs" "$DIR/"
(cd "$DIR" && MOCK_URL=$MOCK_URL GW_URL=$GW_URL GW_NPM_URL=$GW_NPM_URL DECIDE=$DECIDE \
    timeout 120 node portkey.mjs)
