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
    'd["$defs"]["count_dist"]["oneOf"][1]["properties"]["empirical"]["properties"]["values"]["maxItems"] = 8' \
    'd["$defs"]["duration"]["pattern"] = d["$defs"]["duration"]["pattern"].replace("(min|m)", "m")' \
    'd["$defs"]["rate"]["oneOf"][1]["pattern"] = d["$defs"]["rate"]["oneOf"][1]["pattern"].replace("|/d", "")' \
    'd["$defs"]["status"]["minimum"] = 100' \
    'd["$defs"]["name"]["pattern"] = "^[A-Za-z0-9_.-]{1,64}$"' \
    'd["$defs"]["duration_dist"]["oneOf"][0] = {"type": "string"}' \
    'd["$defs"]["count_dist"]["description"] = "a number"'; do
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

# the basic values' $defs follow what the loader's parsers accept (scn_tables' "types"), and a
# distribution's wrapper its table of kinds: a unit, a name's character, the statuses, a kind
python3 - "$T/tables.json" "$T/tables3.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
t["types"]["duration_units"].insert(0, ["w"])
t["types"]["rate_units"].append(["/w"])
t["types"]["name_chars"] += "+"
t["types"]["status"] = [300, 599]
kinds = next(s for s in t["sections"] if s["name"] == "count_dist" and "kinds_doc" in s)
kinds["fields"].append({"name": "pareto", "kind": "hook", "schema": {"type": "object"}})
kinds["fields"][0]["schema"] = {"type": "integer", "minimum": 0}
json.dump(t, open(sys.argv[2], "w"))
PY
printf '#!/bin/sh\ncat "%s"\n' "$T/tables3.json" >"$T/tables3.sh" && chmod +x "$T/tables3.sh"
cp docs/scenario.schema.json docs/scenario-format.md "$T/stale/docs/"
(cd "$T/stale" && python3 "$GEN" --write "$T/tables3.sh") >/dev/null 2>&1
python3 - "$T/stale/docs/scenario.schema.json" >"$T/types.out" 2>&1 <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))["$defs"]
dur = re.compile(d["duration"]["pattern"])
pos = re.compile(d["duration_positive"]["pattern"])
assert dur.match("2w3d") and not dur.match("3d2w") and pos.match("1w") and not pos.match("0w"), "duration"
assert "us, ms, s, m (or min), h, d, w;" in d["duration"]["description"], d["duration"]["description"]
assert re.match(d["rate"]["oneOf"][1]["pattern"], "3/w"), "rate"
assert re.match(d["name"]["pattern"], "a+b") and not re.match(d["name"]["pattern"], "a b"), "name"
assert (d["status"]["minimum"], d["status"]["maximum"]) == (300, 599), "status"
c = d["count_dist"]
assert c["oneOf"][0] == {"type": "integer", "minimum": 0}, "the constant's branch"
assert c["description"].endswith("lognormal, empirical, pareto"), c["description"]
assert "pareto" in c["oneOf"][1]["properties"], "the kinds' object"
PY
r=$?
sed 's/^/# /' "$T/types.out"
ok $r "the basic values' \$defs and a distribution's wrapper follow the loader's units, characters, statuses and kinds"

# --write puts it back: the same bytes as the repository's
(cd "$T/stale" && python3 "$GEN" --write "$TOOL") >/dev/null 2>&1
cmp -s docs/scenario-format.md "$T/stale/docs/scenario-format.md" &&
    cmp -s docs/scenario.schema.json "$T/stale/docs/scenario.schema.json"
ok $? "make schema's writer restores both files byte for byte"

# the fuzzers' dictionary of the scenario's keys follows the schema (python3 tests/fuzz/seeds.py)
python3 tests/fuzz/seeds.py --dict "$T/scenario.dict" && cmp -s "$T/scenario.dict" tests/fuzz/scenario.dict
ok $? "tests/fuzz/scenario.dict is current with the schema (else: python3 tests/fuzz/seeds.py)"
finish
