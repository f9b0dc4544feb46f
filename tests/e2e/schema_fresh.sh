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
    'd["$defs"]["policy"]["properties"]["inherit_policy"] = {"type": "boolean"}' \
    'd["$defs"]["duration_dist"]["oneOf"][1]["properties"]["lognormal"]["required"] = ["median"]' \
    'd["$defs"]["count_dist"]["oneOf"][1]["properties"]["empirical"]["properties"]["values"]["maxItems"] = 8'; do
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

# an autoscaler's default in words follows its JSON default (scale_up's rules, each rule's row)
python3 - "$T/tables.json" "$T/tables2.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
rows = [f for s in t["sections"] if s["name"] == "autoscale" for f in s["fields"] if f["name"] == "scale_up"]
rows[0]["default"].update({"pods": 2, "period": "30s", "stabilization": "1m"})
json.dump(t, open(sys.argv[2], "w"))
PY
printf '#!/bin/sh\ncat "%s"\n' "$T/tables2.json" >"$T/tables2.sh" && chmod +x "$T/tables2.sh"
(cd "$T/stale" && python3 "$GEN" --write "$T/tables2.sh") >/dev/null 2>&1
contains "$(cat "$T/stale/docs/scenario-format.md")" '| 2 pods or 100% per 30 s, stabilization 1m |' \
    "scale_up's default in words is written from its JSON default"
contains "$(cat "$T/stale/docs/scenario-format.md")" '| `pods` | integer in [0, 10000] | `2` / none |' \
    "a rule's row gives each direction's default"

# --write puts it back: the same bytes as the repository's
(cd "$T/stale" && python3 "$GEN" --write "$TOOL") >/dev/null 2>&1
cmp -s docs/scenario-format.md "$T/stale/docs/scenario-format.md" &&
    cmp -s docs/scenario.schema.json "$T/stale/docs/scenario.schema.json"
ok $? "make schema's writer restores both files byte for byte"

# the fuzzers' dictionary of the scenario's keys follows the schema (python3 tests/fuzz/seeds.py)
python3 tests/fuzz/seeds.py --dict "$T/scenario.dict" && cmp -s "$T/scenario.dict" tests/fuzz/scenario.dict
ok $? "tests/fuzz/scenario.dict is current with the schema (else: python3 tests/fuzz/seeds.py)"
finish
