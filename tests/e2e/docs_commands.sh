#!/bin/sh
# docs_commands.sh - every shell command of README.md and docs/*.md works as written, from a
# fresh clone: the repository's files (tracked and new, no build/ or out/) and this build's
# folder are copied to a scratch folder with `fusebox` on PATH (installed with make install DESTDIR=...), and tests/e2e/docs_commands.py runs each cheap
# command there in the docs' order (the others are skipped, each with the e2e suite that
# covers it or the service it needs). Release build only: under the sanitizers the commands
# would take minutes and find nothing the other suites' asan runs do not.
set -u
. tests/tap.sh
case "${BUILD:-}" in
*asan*)
    skip "the docs' commands work as written" "release build only (slow under asan, and the unit and e2e suites cover memory errors)"
    finish
    exit $?
    ;;
esac
C=$E2E_TMP/clone
mkdir -p "$C/.bin"
if git rev-parse --git-dir >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard | grep -zv '^\(build\|out\)/' |
        xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' _ |
        tar --null -T - -cf - | tar -xf - -C "$C"
else
    tar --exclude=./build --exclude=./out -cf - . | tar -xf - -C "$C"
fi
# The clone gets this build's folder (mtimes kept, as the files'), so the docs' `make` commands
# (make e2e T=golden, make test T=golden, make checksrc, ...) find it up to date and run as
# written instead of building everything a second time (44 s of the suite's 80 s): .ci/run's
# clean clone is the build from nothing, and the source checks are the clone's own.
case "$BUILD" in
/*) ;;
*)
    mkdir -p "$C/$(dirname "$BUILD")"
    tar -cf - "$BUILD" | tar -xf - -C "$C"
    # a library depends on its source folder (a file added or removed): the clone's folders,
    # made now, keep the repository's times, or every library and binary is linked again
    (cd "$C" && find . -path "./$BUILD" -prune -o -type d -print) | while IFS= read -r d; do
        [ -d "$ROOT/$d" ] && touch -r "$ROOT/$d" "$C/$d"
    done
    ;;
esac
# `fusebox` on PATH is this build as `make install` puts it (docs call it by name)
make -s --no-print-directory install V="$(basename "$BUILD")" DESTDIR="$E2E_TMP/stage" \
    PREFIX=/usr/local >"$E2E_TMP/install.log" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$E2E_TMP/install.log"
ok $r "make install DESTDIR=... puts fusebox where the docs' commands find it by name"
ln -s "$E2E_TMP/stage/usr/local/bin/fusebox" "$C/.bin/fusebox"
python3 tests/e2e/docs_commands.py "$C" "$FUSEBOX" "$ROOT" "$(basename "$BUILD")" "$TAP_N"
py=$?
# the plan is the Python script's (it counts the test above); a failure above fails the suite
[ "$TAP_FAILED" -eq 0 ] && exit $py
exit 1
