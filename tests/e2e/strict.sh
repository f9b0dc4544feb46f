#!/bin/sh
# strict.sh - input that another JSON reader would read differently is refused (issue 14):
# duplicate keys, text after the document, a name that would be a path, invalid UTF-8 and
# \u0000, the nesting limit, undocumented durations, empty --set steps. Each case exits 2
# naming the file and the place. The text-level rules are below JSON's data model, where
# the schema cannot see (docs/scenario.schema.json); tests/e2e/schema.sh covers the rest.
. tests/tap.sh
T=$E2E_TMP

# a small scenario: {"name": NAME, ...REST}; NAME and REST as JSON text
doc() {
    printf '{"name":%s,"duration":"10s","traffic":[{"class":"chat","arrivals":{"poisson":"5/s"}}],"providers":[{"name":"openai"}]%s}' "$1" "$2"
}

doc '"strict"' '' >"$T/ok.json"
expect_exit 0 "the small scenario validates" "$FUSEBOX" validate "$T/ok.json"

# a duplicate key: cJSON would read the first, Python's json (and report.json's readers) the last
doc '"strict"' ',
  "duration":"1000d"' >"$T/dup.json"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["duration"] == "1000d"' "$T/dup.json"
ok $? "Python's json reads the last duration of dup.json"
expect_exit 2 "a duplicate key exits 2" "$FUSEBOX" validate "$T/dup.json"
contains "$ERR" "$T/dup.json: duration: duplicate key 'duration' at line 2, column 3 (first at line 1, column 18)" \
    "the duplicate names its path and both places"

# text after the document
{ cat "$T/ok.json"; printf ' xyz\n'; } >"$T/trail.json"
expect_exit 2 "text after the document exits 2" "$FUSEBOX" validate "$T/trail.json"
contains "$ERR" "$T/trail.json: unexpected text after the JSON document at line 1, column" \
    "text after the document: line and column"
{ cat "$T/ok.json"; echo; cat "$T/ok.json"; } >"$T/two.json"
expect_exit 2 "two documents exit 2" "$FUSEBOX" validate "$T/two.json"
contains "$ERR" "unexpected text after the JSON document at line 2, column 1" \
    "two documents: the second's place"

# a name that would be a path: run from an empty folder writes nothing there (out/.. = .)
mkdir -p "$T/cwd"
for name in '..' '.' '' '../up' '.hidden'; do
    doc "\"$name\"" '' >"$T/name.json"
    r=0
    (cd "$T/cwd" && "$FUSEBOX" run "$T/name.json" >"$T/out" 2>"$T/err") || r=$?
    [ "$r" -eq 2 ]
    ok $? "name \"$name\": run exits 2 (got $r)"
    contains "$(cat "$T/err")" "name: \"$name\": a scenario name starts with a letter or digit" \
        "name \"$name\": the error states the rule"
    [ -z "$(ls -A "$T/cwd")" ]
    ok $? "name \"$name\": nothing is written in the current folder"
done

# UTF-8: invalid bytes and \u0000 are errors with the byte offset; valid text reaches report.json
# (printf's format writes the bytes: \377 is one byte, \\u0000 a JSON escape)
printf '{"name":"strict","description":"a\377b"}' >"$T/utf8.json"
expect_exit 2 "invalid UTF-8 exits 2" "$FUSEBOX" validate "$T/utf8.json"
contains "$ERR" "$T/utf8.json: description: invalid UTF-8 at byte 33" "invalid UTF-8: its byte offset"
printf '{"name":"strict","description":"ab\\u0000cd"}' >"$T/nul.json"
expect_exit 2 "\\u0000 exits 2" "$FUSEBOX" validate "$T/nul.json"
contains "$ERR" "$T/nul.json: description: \\u0000 at byte 34" "\\u0000: its byte offset"
printf '{"name":"strict","description":"caf\303\251 \\ud83d\\ude00","duration":"10s","traffic":[{"class":"chat","arrivals":{"poisson":"5/s"}}],"providers":[{"name":"openai"}]}' \
    >"$T/good-utf8.json"
expect_exit 0 "valid UTF-8 and escapes run" "$FUSEBOX" run "$T/good-utf8.json" -o "$T/u"
python3 - "$T/u/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if r["input"]["description"] == "caf\u00e9 \U0001F600" else 1)
PY
ok $? "report.json reads back with Python's json, the description intact"

# the nesting limit, named as such
python3 -c 'import sys; sys.stdout.write("{\"name\":\"strict\",\"description\":" + "[" * 1000 + "]" * 1000 + "}")' \
    >"$T/deep.json"
expect_exit 2 "nesting beyond the limit exits 2" "$FUSEBOX" validate "$T/deep.json"
contains "$ERR" "nested deeper than 1000 levels (the limit) at line 1, column" "the limit is named"

# durations: the documented forms only (no hex, inf, sign)
for d in 0x10s infs +5s; do
    doc '"strict"' ",\"slo\":{\"latency\":\"$d\"}" >"$T/dur.json"
    expect_exit 2 "duration \"$d\" exits 2" "$FUSEBOX" validate "$T/dur.json"
    contains "$ERR" "slo.latency: cannot read duration \"$d\"" "duration \"$d\": the error names it"
done

# --set: an empty step, a value read as strictly as a file
expect_exit 2 "--set pods..count=3 exits 2" "$FUSEBOX" run "$T/ok.json" -o "$T/s" --set pods..count=3
contains "$ERR" "--set pods..count=3: an empty step in the path 'pods..count'" "the empty step is named"
expect_exit 2 "--set with a duplicate key exits 2" \
    "$FUSEBOX" run "$T/ok.json" -o "$T/s" --set 'pods={"count":1,"count":2}'
contains "$ERR" "the value: count: duplicate key 'count'" "the --set value's duplicate is named"
expect_exit 0 "--set pods.count=2 still runs" "$FUSEBOX" run "$T/ok.json" -o "$T/s" --set pods.count=2

finish
