#!/bin/sh
# install.sh - build and install fusebox from source on Debian (bookworm or later), as a CI
# job's first step: the README's steps (make deps, the binary, make install).
#
#   sh install.sh
#
# Environment:
#   FUSEBOX_SRC   a fusebox checkout to build (default: clone FUSEBOX_REPO into ./fusebox-src)
#   FUSEBOX_REPO  the repository to clone when FUSEBOX_SRC is not set (required then)
#   FUSEBOX_REF   the branch or tag to clone (default: the repository's default branch)
#   PREFIX        where to install (default /usr/local); DESTDIR as make install takes it
# Root, or sudo, installs the Debian packages the build needs (make deps says which).
set -u
SRC=${FUSEBOX_SRC:-}
if [ -z "$SRC" ]; then
    if [ -z "${FUSEBOX_REPO:-}" ]; then
        echo "install.sh: set FUSEBOX_REPO (the fusebox repository to clone) or FUSEBOX_SRC" \
            "(a checkout)" >&2
        exit 2
    fi
    if ! command -v git >/dev/null 2>&1; then
        sudo=$([ "$(id -u)" = 0 ] || echo sudo)
        { $sudo apt-get update -qq && $sudo apt-get install -y -qq git ca-certificates make; } ||
            { echo "install.sh: could not install git (Debian: git)" >&2; exit 2; }
    fi
    SRC=fusebox-src
    rm -rf "$SRC"
    git clone -q --depth 1 ${FUSEBOX_REF:+--branch "$FUSEBOX_REF"} "$FUSEBOX_REPO" "$SRC" ||
        { echo "install.sh: git clone $FUSEBOX_REPO failed" >&2; exit 2; }
fi
if ! command -v make >/dev/null 2>&1; then
    sudo=$([ "$(id -u)" = 0 ] || echo sudo)
    { $sudo apt-get update -qq && $sudo apt-get install -y -qq make; } ||
        { echo "install.sh: could not install make (Debian: make)" >&2; exit 2; }
fi
make -s -C "$SRC" deps || { echo "install.sh: make deps failed (see above)" >&2; exit 2; }
jobs=$(nproc 2>/dev/null || echo 2)
make -s -C "$SRC" -j"$jobs" build/release/fusebox ||
    { echo "install.sh: the build failed (see above)" >&2; exit 2; }
sudo=$([ "$(id -u)" = 0 ] || [ -n "${DESTDIR:-}" ] || echo sudo)
$sudo make -s -C "$SRC" install PREFIX="${PREFIX:-/usr/local}" ${DESTDIR:+DESTDIR="$DESTDIR"} ||
    { echo "install.sh: make install failed" >&2; exit 2; }
echo "install.sh: fusebox $("${DESTDIR:-}${PREFIX:-/usr/local}/bin/fusebox" version) in ${DESTDIR:-}${PREFIX:-/usr/local}/bin"
