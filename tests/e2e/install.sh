#!/bin/sh
# install.sh - `make install` into a staging folder (DESTDIR, PREFIX=/usr/local): the binary,
# fusebox(1) made of the --help texts, the bash completion, the scenario library and the docs;
# the installed binary checks an installed scenario from a folder outside the clone; `make
# uninstall` leaves no file and no fusebox folder behind.
set -u
. tests/tap.sh
T=$E2E_TMP
D=$T/stage
P=$D/usr/local
V=$(basename "${BUILD:-build/release}")
MAKE_LOG=$T/make.log

make -s --no-print-directory install V="$V" DESTDIR="$D" PREFIX=/usr/local >"$MAKE_LOG" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$MAKE_LOG"
ok $r "make install DESTDIR=... PREFIX=/usr/local exits 0"
[ -x "$P/bin/fusebox" ]
ok $? "the binary is installed as PREFIX/bin/fusebox"
for f in share/man/man1/fusebox.1 share/bash-completion/completions/fusebox \
    share/fusebox/docs/scenario.schema.json share/doc/fusebox/README.md \
    share/doc/fusebox/docs/check.md share/doc/fusebox/docs/scenario-format.md \
    share/fusebox/contrib/ci/gate.sh share/fusebox/contrib/ci/github-actions.yml \
    share/fusebox/contrib/sweep/nightly.sh share/fusebox/contrib/sweep/shard.sh \
    share/fusebox/contrib/sweep/k8s/job.yaml; do
    [ -s "$P/$f" ]
    ok $? "make install writes PREFIX/$f"
done
[ "$(ls "$P"/share/fusebox/scenarios/*.json 2>/dev/null | wc -l)" -eq "$(ls scenarios/*.json | wc -l)" ]
ok $? "every scenario of the library is installed under PREFIX/share/fusebox/scenarios"
[ "$("$P/bin/fusebox" version)" = "$("$FUSEBOX" version)" ]
ok $? "the installed binary is this build"

# ---- the installed binary, from a folder that is not the clone ----
S=$P/share/fusebox/scenarios
mkdir -p "$T/elsewhere"
(cd "$T/elsewhere" && "$P/bin/fusebox" validate "$S") >"$T/validate.out" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/validate.out"
ok $r "the installed binary validates the installed library"
(cd "$T/elsewhere" && "$P/bin/fusebox" check "$S/bad-deploy.json" --junit out/junit/check.xml) \
    >"$T/check.out" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/check.out"
ok $r "the installed binary checks an installed scenario (exit 0)"
[ -s "$T/elsewhere/out/junit/check.xml" ]
ok $? "... and writes its JUnit file in the folder it runs in"
schema=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['\$schema'])" "$S/retry-storm.json")
[ -s "$S/$schema" ]
ok $? "an installed scenario's \$schema ($schema) points at the installed schema"

# ---- the installed help names the installed docs, and each one it names is there ----
DOCS=$P/share/doc/fusebox/docs/
bad=
for c in "" $("$P/bin/fusebox" --help | sed -n '/^commands:/,/^$/p' | sed -n 's/^  \([a-z-]*\).*/\1/p'); do
    # shellcheck disable=SC2086
    help=$("$P/bin/fusebox" $c --help 2>&1)
    case $help in *" docs/"* | *"(docs/"* | *"	docs/"*) bad="$bad ${c:-fusebox}:bare-docs/" ;; esac
    for f in $(echo "$help" | grep -o "$DOCS[A-Za-z0-9_-]*\\.\\(md\\|json\\)" | sort -u); do
        [ -s "$f" ] || bad="$bad ${c:-fusebox}:${f#"$P"/}"
    done
done
[ -z "$bad" ] && "$P/bin/fusebox" compare --help | grep -q "See $DOCS""compare.md"
ok $? "the installed --help texts name the installed docs (PREFIX/share/doc/fusebox/docs/), and each exists${bad:+ (not:$bad)}"
"$FUSEBOX" compare --help | grep -q "See docs/compare.md"
ok $? "the checkout's binary names the checkout's docs/"
grep -q "share/doc/fusebox/docs/compare.md" "$P/share/man/man1/fusebox.1"
ok $? "fusebox(1) names the installed docs too"

# ---- the man page: every command's --help, and it renders cleanly ----
MAN=$P/share/man/man1/fusebox.1
for c in $("$FUSEBOX" --help | sed -n '/^commands:/,/^$/s/^  \([a-z-]*\).*/\1/p' | grep -v '^version$'); do
    grep -qx ".SS fusebox $c" "$MAN"
    ok $? "fusebox(1) has a section for $c"
done
# a fresh Debian (minbase) has no groff: installed as the other suites' tools are
need groff "$T/apt.log" groff-base
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$MAN" >"$T/groff.log" 2>&1
    [ ! -s "$T/groff.log" ]
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/groff.log"
    ok $r "fusebox(1) renders with groff without a warning"
    groff -man -Tutf8 "$MAN" 2>/dev/null | grep -q -- '--junit FILE'
    ok $? "options in the rendered page are plain ASCII (--junit), as typed"
else
    skip "fusebox(1) renders with groff without a warning" "groff is not installed and apt-get install groff-base failed (above)"
fi

# ---- the bash completion ----
if command -v bash >/dev/null 2>&1; then
    got=$(PATH="$P/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(fusebox va); COMP_CWORD=1; _fusebox
        printf "%s\n" "${COMPREPLY[@]}"; COMP_WORDS=(fusebox check --ju); COMP_CWORD=2; _fusebox
        printf "%s\n" "${COMPREPLY[@]}"' sh "$P/share/bash-completion/completions/fusebox" 2>&1)
    [ "$got" = "validate
--junit" ]
    ok $? "the bash completion completes commands and their options (got: $(echo $got))"
else
    skip "the bash completion completes commands and their options" "bash is not installed"
fi

# ---- uninstall ----
make -s --no-print-directory uninstall V="$V" DESTDIR="$D" PREFIX=/usr/local >"$MAKE_LOG" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$MAKE_LOG"
ok $r "make uninstall exits 0"
left=$(find "$D" -type f; find "$D" -type d -name 'fusebox*')
[ -z "$left" ]
ok $? "make uninstall leaves no file and no fusebox folder${left:+ (left: $(echo $left))}"
finish
