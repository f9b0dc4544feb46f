#!/bin/sh
# schema.sh - docs/scenario.schema.json agrees with the loader (fusebox validate).
#
# Installs ajv-cli (pinned) into out/npm/ once, then: the schema compiles
# under draft 2020-12; every file in scenarios/ passes it; a set of valid edge
# cases passes both ajv and `fusebox validate`; a set of broken files (unknown
# key, wrong type, negative duration, ...) fails both, and `fusebox validate`
# exits 2 naming the JSON path. The cases are mutations of one small scenario,
# written by tests/e2e/schema_cases.py.
set -u
. tests/tap.sh
NPM_DIR=$ROOT/out/npm
AJV_CLI_VERSION=5.0.0
AJV=$NPM_DIR/node_modules/.bin/ajv
SCHEMA=docs/scenario.schema.json
T=$E2E_TMP
mkdir -p "$NPM_DIR"

# ajv-cli, once: nothing to do when the pinned version is already there
need npm "$NPM_DIR/apt.log" nodejs npm
npm_pinned "$NPM_DIR" "ajv-cli@$AJV_CLI_VERSION"
[ -x "$AJV" ]
ok $? "ajv-cli $AJV_CLI_VERSION is installed in out/npm (see out/npm/npm.log if not)"
if [ ! -x "$AJV" ]; then
    finish
    exit 1
fi

ajv() { "$AJV" validate --spec=draft2020 --errors=text -s "$SCHEMA" "$@"; }

"$AJV" compile --spec=draft2020 -s "$SCHEMA" >"$T/compile" 2>&1
ok $? "the schema compiles (draft 2020-12, strict mode)"
grep -q "strict mode" "$T/compile"
[ $? -ne 0 ]
ok $? "the schema compiles without strict-mode warnings"

# ajv_verdicts FILE...: "PATH valid|invalid" lines, whatever the exit code
ajv_verdicts() {
    args=""
    for f in "$@"; do args="$args -d $f"; done
    # shellcheck disable=SC2086
    ajv $args >"$T/ajv.out" 2>&1
    grep -E ' (valid|invalid)$' "$T/ajv.out"
}

# every library scenario passes the schema
ajv_verdicts scenarios/*.json >"$T/lib"
for f in scenarios/*.json; do
    grep -qx "$f valid" "$T/lib"
    r=$?
    [ $r -ne 0 ] && sed 's/^/# /' "$T/ajv.out" | grep -A3 "$f" | head -n 8
    ok $r "schema accepts $f"
done

# the cases
python3 tests/e2e/schema_cases.py "$T/cases" >"$T/gen" 2>&1
ok $? "schema_cases.py writes the test cases"

ajv_verdicts "$T"/cases/valid/*.json >"$T/valid"
for f in "$T"/cases/valid/*.json; do
    name=$(basename "$f" .json)
    grep -qx "$f valid" "$T/valid"
    ok $? "valid/$name: the schema accepts it"
    "$FUSEBOX" validate "$f" >"$T/out" 2>"$T/err"
    r=$?
    [ $r -ne 0 ] && echo "# $(cat "$T/err")"
    ok $r "valid/$name: fusebox validate accepts it"
done

ajv_verdicts "$T"/cases/invalid/*.json >"$T/invalid"
for f in "$T"/cases/invalid/*.json; do
    name=$(basename "$f" .json)
    grep -qx "$f invalid" "$T/invalid"
    ok $? "invalid/$name: the schema rejects it"
    "$FUSEBOX" validate "$f" >"$T/out" 2>"$T/err"
    r=$?
    [ $r -eq 2 ]
    ok $? "invalid/$name: fusebox validate exits 2 (got $r)"
    want=$(cat "$T/cases/invalid/$name.path")
    contains "$(cat "$T/err")" "$f: $want" "invalid/$name: the error names '$want'"
done

# rules between values (a time against the duration, a key against another section) are
# the loader's alone: the schema accepts these, fusebox validate must not
ajv_verdicts "$T"/cases/loader-only/*.json >"$T/loader-only"
for f in "$T"/cases/loader-only/*.json; do
    name=$(basename "$f" .json)
    grep -qx "$f valid" "$T/loader-only"
    ok $? "loader-only/$name: the schema accepts it (the rule is between values)"
    "$FUSEBOX" validate "$f" >"$T/out" 2>"$T/err"
    r=$?
    [ $r -eq 2 ]
    ok $? "loader-only/$name: fusebox validate exits 2 (got $r)"
    want=$(cat "$T/cases/loader-only/$name.path")
    contains "$(cat "$T/err")" "$f: $want" "loader-only/$name: the error names '$want'"
done

finish
