#!/bin/sh
# schema_fresh.sh - docs/scenario.schema.json and the key tables of docs/scenario-format.md
# are what `make schema` writes from the tables of scenario/ (scenario/table.h: ld_section, ld_field:
# the loader's sections and the presets' parameters),
# and a stale copy of either is caught. tests/tools/scn_tables prints the tables;
# tests/tools/gen_schema.py writes (--write) or compares (--check).
set -u
. tests/tap.sh
T=$E2E_TMP
TOOL=$ROOT/$BUILD/tests/tools/scn_tables
GEN=$ROOT/tests/tools/gen_schema.py

[ -x "$TOOL" ]
ok $? "scn_tables is built ($BUILD/tests/tools/scn_tables)"
"$TOOL" >"$T/tables.json" 2>"$T/tables.err"
ok $? "scn_tables prints the tables (every default is JSON)"
python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); assert len(t["sections"]) >= 1' "$T/tables.json"
ok $? "the tables are JSON with at least one section"

python3 "$GEN" --check "$TOOL" >"$T/check" 2>&1
r=$?
[ $r -ne 0 ] && sed 's/^/# /' "$T/check" | head -n 40
ok $r "the docs are what make schema writes (else: make schema)"

# stale copies: a default changed in the schema, a row changed in the key table
mkdir -p "$T/stale/docs"
cp docs/scenario.schema.json docs/scenario-format.md "$T/stale/docs/"
python3 - "$T/stale/docs/scenario.schema.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["$defs"]["retry"]["properties"]["attempts"]["default"] = 4
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY
(cd "$T/stale" && python3 "$GEN" --check "$TOOL") >"$T/stale.out" 2>&1
[ $? -eq 1 ]
ok $? "a schema edited by hand where a table writes it is stale"
contains "$(cat "$T/stale.out")" "docs/scenario.schema.json is stale" "the check names the stale schema"

# the parts a row read by code, a preset's table and the variant's table write: each edit is stale
for edit in 'd["$defs"]["fault"]["properties"]["slow"]["properties"]["factor"]["oneOf"][0]["maximum"] = 100' \
    'd["$defs"]["fault"]["properties"]["slow"]["required"] = []' \
    'd["$defs"]["preset_params"]["allOf"][0]["then"]["properties"]["max_retries"]["maximum"] = 5' \
    'd["$defs"]["policy"]["properties"]["inherit_policy"] = {"type": "boolean"}'; do
    python3 - "$T/stale/docs/scenario.schema.json" "$edit" <<'PY'
import json, shutil, sys
shutil.copy("docs/scenario.schema.json", sys.argv[1])
d = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
    (cd "$T/stale" && python3 "$GEN" --check "$TOOL") >"$T/stale.out" 2>&1
    [ $? -eq 1 ]
    ok $? "a schema edited by hand where a table writes it is stale: $edit"
done

cp docs/scenario.schema.json "$T/stale/docs/"
sed 's/^| `open` | duration | `"60s"` |/| `open` | duration | `"30s"` |/' docs/scenario-format.md >"$T/stale/docs/scenario-format.md"
cmp -s docs/scenario-format.md "$T/stale/docs/scenario-format.md"
[ $? -ne 0 ]
ok $? "the breaker's open row was edited in the copy"
(cd "$T/stale" && python3 "$GEN" --check "$TOOL") >"$T/stale.out" 2>&1
[ $? -eq 1 ]
ok $? "a key table edited by hand is stale"
contains "$(cat "$T/stale.out")" "docs/scenario-format.md is stale" "the check names the stale key table"

# --write puts it back: the same bytes as the repository's
(cd "$T/stale" && python3 "$GEN" --write "$TOOL") >/dev/null 2>&1
cmp -s docs/scenario-format.md "$T/stale/docs/scenario-format.md" &&
    cmp -s docs/scenario.schema.json "$T/stale/docs/scenario.schema.json"
ok $? "make schema's writer restores both files byte for byte"

# the fuzzers' dictionary of the scenario's keys follows the schema (python3 tests/fuzz/seeds.py)
python3 tests/fuzz/seeds.py --dict "$T/scenario.dict" && cmp -s "$T/scenario.dict" tests/fuzz/scenario.dict
ok $? "tests/fuzz/scenario.dict is current with the schema (else: python3 tests/fuzz/seeds.py)"
finish
