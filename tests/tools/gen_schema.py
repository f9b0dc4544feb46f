#!/usr/bin/env python3
"""gen_schema.py --write|--check SCN_TABLES - the schema and key tables from the format's tables.

SCN_TABLES is the program built from tests/tools/scn_tables.c; it prints the
tables of scenario/ (scenario/loadint.h: ld_section, ld_field) as JSON. From
them this writes:

- docs/scenario.schema.json: for each table, the "properties" of the schema
  object at its `schema_at` (a JSON pointer), one per field in table order.
  A plain field's schema comes from its kind, range, names, default and doc;
  a field parsed by a hook or by code keeps the schema written by hand. A
  field the table marks required must be in the object's "required" list,
  which is written by hand (a key may be required later than the others). The
  parts of the schema no table describes yet are kept as they are. The basic
  values' $defs (duration, duration_positive, rate, fraction, status, name,
  observed_count) are written from what the loader's parsers accept (the
  "types" of SCN_TABLES: a duration's and a rate's units, the decimal grammar,
  a name's characters, the error statuses), and a distribution's $defs (its
  description, the constant's branch, the one-kind object) from its table of
  kinds (scenario/table.h: ld_kinds). The whole
  file is laid out in one way (an object or array on one line when it fits in
  110 columns), so that writing it twice gives the same bytes.
  The library presets' parameters (the same rows, with a notation: how the
  library writes the value) give "$defs/preset_name" (the catalog) and
  "$defs/preset_params" (per preset, its parameters' schemas), which the
  layers given as a preset refer to.
- docs/scenario-format.md: the rows of each table between
  `<!-- keys: NAME -->` and `<!-- /keys -->` (every table of that name, in order).
  A default column is the row's default_doc, else written from its default: an
  object of a table in OBJECT_DEFAULT_TEXT in words (an autoscaler's rules:
  "4 pods or 100% per 15 s, no stabilization"); a key of a table whose object
  several rows hold with different defaults, each one's ("`"0s"` / `"5m"`").

--write writes the files; --check writes nothing and exits 1 (with a diff)
when a file is not what --write would write (tests/e2e/schema_fresh.sh).
"""
import copy
import difflib
import json
import re
import subprocess
import sys

SCHEMA = "docs/scenario.schema.json"
FORMAT = "docs/scenario-format.md"
WIDTH = 110


def number(x):
    """A number as JSON, never in exponent form (0.000001, not 1e-06)."""
    if isinstance(x, float) and x == int(x) and abs(x) <= 2**53:
        return str(int(x))
    s = json.dumps(x)
    if "e" in s or "E" in s:
        s = format(x, ".12f").rstrip("0").rstrip(".")
    return s


def compact(v):
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k, ensure_ascii=False) + ": " + compact(x) for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(compact(x) for x in v) + "]"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, (int, float)):
        return number(v)
    return json.dumps(v, ensure_ascii=False)


def layout(v, indent=0, prefix=""):
    one = compact(v)
    if not isinstance(v, (dict, list)) or not v or indent + len(prefix) + len(one) + 1 <= WIDTH:
        return one
    pad = " " * (indent + 2)
    if isinstance(v, dict):
        rows = []
        for k, x in v.items():
            key = json.dumps(k, ensure_ascii=False) + ": "
            rows.append(pad + key + layout(x, indent + 2, key))
        return "{\n" + ",\n".join(rows) + "\n" + " " * indent + "}"
    rows = [pad + layout(x, indent + 2) for x in v]
    return "[\n" + ",\n".join(rows) + "\n" + " " * indent + "]"


def at_pointer(doc, pointer):
    node = doc
    for step in pointer.lstrip("/").split("/") if pointer else []:
        node = node[int(step)] if isinstance(node, list) else node[step]
    return node


def field_schema(f):
    kind = f["kind"]
    if kind == "duration":
        s = {"$ref": "#/$defs/duration_positive"}
    elif kind == "duration0":
        s = {"$ref": "#/$defs/duration"}
    elif kind in ("number", "integer"):
        s = {"type": kind, "minimum": f["lo"], "maximum": f["hi"]}
    elif kind in ("bool", "switch"):
        s = {"type": "boolean"}
    elif kind == "enum":
        s = {"enum": f["names"]}
    else:
        raise ValueError(kind)
    if "default" in f:
        s["default"] = f["default"]
    if f.get("doc"):
        s["description"] = f["doc"]
    return s


NUMERIC = ("count", "number", "percent", "fraction", "seconds", "millis")
LIST_MAX = 16  # SIM_PRESET_LIST_MAX


def param_value(f, kids):
    """The schema of a preset parameter's value, by its notation (scenario/table.h)."""
    n = f["notation"]
    rng = {"minimum": f["lo"], "maximum": f["hi"]} if "lo" in f else {}
    if n in NUMERIC:
        return {"type": "integer" if n == "count" else "number", **rng}
    if n == "bool":
        return {"type": "boolean"}
    if n == "word":
        return {"enum": f["names"]}
    if n == "statuses":
        return {"type": "array", "maxItems": LIST_MAX, "items": {"type": "integer", "minimum": 100, "maximum": 599}}
    if n == "words":
        return {"type": "array", "maxItems": LIST_MAX, "items": {"enum": f["names"]} if f.get("names") else {"type": "string"}}
    if n == "duration":  # Spring: "10s", "PT10S", or a number of milliseconds
        return {"anyOf": [{"type": "string"}, {"type": "number", "minimum": 0}]}
    if n in ("timespan", "go_duration", "csv"):
        return {"type": "string"}
    if n == "proto_duration":
        return {"oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": False, "properties": {
            "seconds": {"type": "number"}, "nanos": {"type": "number"}}}]}
    if n == "proto_percent":
        return {"oneOf": [{"type": "number", **rng}, {"type": "object", "additionalProperties": False,
                                                      "required": ["value"], "properties": {"value": {"type": "number", **rng}}}]}
    if n == "object":
        return {"type": "object", "additionalProperties": False, "properties": kids}
    if n == "json":
        return {}
    raise ValueError(n)


def param_default(f):
    """The library's default as JSON, where its words are a value of the parameter; else None."""
    d = f.get("default_doc")
    try:
        v = json.loads(d, parse_constant=lambda c: None)  # "Infinity" is the library's word
    except (TypeError, ValueError):
        v = None
    if f["notation"] in NUMERIC and isinstance(v, (int, float)) and not isinstance(v, bool):
        return v
    if f["notation"] == "bool" and isinstance(v, bool):
        return v
    if f["notation"] == "word" and d in (f.get("names") or []):
        return d
    return None


def param_schema(f, kids):
    s = param_value(f, kids)
    d = param_default(f)
    doc = f.get("doc") or ""
    if d is not None:
        s["default"] = d
    elif f.get("default_doc"):
        doc += f" (default: {f['default_doc']})"
    if doc:
        s["description"] = doc
    return s


def preset_params(p):
    """{KEY: schema} of a preset's parameters; "NAME.KEY" rows inside NAME's object."""
    def level(prefix):
        out = {}
        for f in p["params"]:
            if not f["name"].startswith(prefix) or "." in f["name"][len(prefix):]:
                continue
            kids = level(f["name"] + ".") if f["notation"] == "object" else {}
            out[f["name"][len(prefix):]] = param_schema(f, kids)
        return out
    return level("")


def preset_defs(tables, defs):
    presets = tables["presets"]
    defs["preset_name"] = {"description": "a library preset (docs/presets.md, `fusebox presets`)",
                           "enum": [p["name"] for p in presets]}
    defs["preset_params"] = {
        "description": "a preset layer's keys: the library's parameters, in its names and units (docs/presets.md)",
        "type": "object",
        "allOf": [{"if": {"type": "object", "required": ["preset"], "properties": {"preset": {"const": p["name"]}}},
                   "then": {"type": "object", "description": f"{p['library']} {p['version']}",
                            "properties": preset_params(p)}}
                  for p in presets]}


def char_class(chars):
    """A regular expression's class of the characters `chars`: its whole runs A-Z, a-z and 0-9
    as ranges, then the others in their order, '-' last."""
    out, rest = "", list(chars)
    for lo, hi in (("A", "Z"), ("a", "z"), ("0", "9")):
        run = [chr(c) for c in range(ord(lo), ord(hi) + 1)]
        if all(c in rest for c in run):
            out += f"{lo}-{hi}"
            rest = [c for c in rest if c not in run]
    rest = [c for c in rest if c != "-"] + (["-"] if "-" in rest else [])
    return "[" + out + "".join("\\" + c if c in "\\]^" else c for c in rest) + "]"


BASIC = ("duration", "duration_positive", "rate", "fraction", "status", "name", "observed_count")


def basic_defs(types):
    """The basic values' $defs (a duration, a rate, a name, an error status, a count), from what
    the loader's parsers accept (scn_tables' "types": scenario/loadint.h, load_json.c)."""
    number = types["digits"] + types["exponent"]
    groups = types["duration_units"]
    units = "".join(f"({number}{g[0] if len(g) == 1 else '(' + '|'.join(g) + ')'})?" for g in groups)
    duration = f"^(?!$){units}$"
    zero = f"[0.]*{types['exponent']}({'|'.join(u for g in reversed(groups) for u in g)})"
    spelled = ", ".join(min(g, key=len) + "".join(f" (or {u})" for u in g if u != min(g, key=len))
                        for g in reversed(groups))
    rate_units = "|".join(u for g in types["rate_units"] for u in g)
    # an example a unit (a unit the loader gains is shown with 1), its other spellings after it
    examples = {"/s": "40", "/m": "2400", "/h": "5", "/d": "100000"}
    rate_spelled = ", ".join(f"\"{examples.get(g[0], '1')}{g[0]}\"" + "".join(f" (or {u})" for u in g[1:])
                             for g in types["rate_units"])
    lo, hi = types["status"]
    defs = {
        "observed_count": {"type": "integer", "minimum": 0, "maximum": types["count_max"]},
        "duration": {
            "description": "a decimal number (digits with an optional point, and an optional exponent) and a unit: "
                           f"{spelled}; or several, largest unit first, each unit once (Go's form); "
                           "\"250ms\", \"1.5s\", \"18m\", \"1e4ms\", \"20m15s\". Never negative, never hex, inf or nan.",
            "type": "string", "pattern": duration},
        "duration_positive": {"description": "a duration greater than zero", "type": "string",
                              "pattern": f"^(?!$)(?!({zero})+$){units}$"},
        "rate": {"description": f"{rate_spelled}, or a number per second",
                 "oneOf": [{"type": "number", "minimum": 0},
                           {"type": "string", "pattern": f"^{number}({rate_units})?$"}]},
        "fraction": {"type": "number", "minimum": 0, "maximum": 1},
        "status": {"description": "an HTTP error status", "type": "integer", "minimum": lo, "maximum": hi},
        "name": {"type": "string", "pattern": f"^{char_class(types['name_chars'])}{{1,{types['name_max']}}}$"},
    }
    assert sorted(defs) == sorted(BASIC)
    return defs


def kinds_defs(tables):
    """{NAME: schema} of each table of kinds (a distribution: a constant, or an object with one
    kind's key), its object's "properties" left for the table to fill."""
    out = {}
    for sec in tables["sections"]:
        if "kinds_doc" not in sec:
            continue
        m = re.fullmatch(r"/\$defs/([a-z_]+)/oneOf/1", sec["schema_at"])
        if not m:
            sys.exit(f"gen_schema: the table of kinds '{sec['name']}' is not at /$defs/NAME/oneOf/1")
        first = sec["fields"][0]
        out[m.group(1)] = {
            "description": sec["kinds_doc"].replace("%s", ", ".join(f["name"] for f in sec["fields"])),
            "oneOf": [copy.deepcopy(first["schema"]),
                      {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
                       "properties": {}}]}
    return out


def required_of(fields):
    return [f["name"] for f in fields if f.get("required") or f.get("needed")]


def write_object(obj, where, name, fields, keep=None):
    """obj's "properties" (and "required") from the rows `fields` of the table `name`."""
    old = obj.get("properties", {})
    names = [f["name"] for f in fields]
    extra = [k for k in old if k not in names]
    if extra:
        sys.exit(f"gen_schema: {where} has keys the table '{name}' does not: {extra}")
    props = {}
    for f in fields:
        if f["kind"] in ("hook", "code"):
            if "schema" not in f:
                sys.exit(f"gen_schema: {where}: '{f['name']}' is read by code: write its schema (.schema)")
            props[f["name"]] = copy.deepcopy(f["schema"])
        else:
            props[f["name"]] = field_schema(f)
    obj["properties"] = props
    req = required_of(fields)
    if req:
        obj["required"] = req
    elif obj.get("required"):
        sys.exit(f"gen_schema: {where}: \"required\" names {obj['required']}, the table '{name}' none "
                 "(LD_F_REQUIRED, or LD_F_NEEDED when the code checks it)")
    else:
        obj.pop("required", None)


def single_layer(tables):
    """The variant's own rows in the form without "layers" (beside the layer's keys: those
    the layer's table also has, such as "description", are the layer's)."""
    layer = {f["name"] for s in tables["sections"] if s["name"] == "policy" for f in s["fields"]}
    variant = next(s for s in tables["sections"] if s["name"] == "variant")
    return [f for f in variant["fields"] if f["name"] != "layers" and f["name"] not in layer]


# The top-level policy and a variant, each in its two forms, from the variant's table: the
# variant's stack form is the table's own object (variant_layered); the others follow from it.
DERIVED = (
    ("/$defs/layered", lambda t: [f for f in next(s for s in t["sections"] if s["name"] == "variant")["fields"]
                                  if not f.get("variant_only")]),
    ("/$defs/variant_policy", single_layer),
    ("/$defs/policy", lambda t: [f for f in single_layer(t) if not f.get("variant_only")]),
)


def schema_text(tables, text):
    doc = json.loads(text)
    for name, schema in {**basic_defs(tables["types"]), **kinds_defs(tables)}.items():
        doc["$defs"][name] = schema
    # an object a row's schema holds is filled by its own table after the row has placed it
    for sec in sorted(tables["sections"], key=lambda s: s["schema_at"].count("/")):
        write_object(at_pointer(doc, sec["schema_at"]), sec["schema_at"], sec["name"], sec["fields"])
    for where, rows in DERIVED:
        write_object(at_pointer(doc, where), where, "variant", rows(tables))
    preset_defs(tables, doc["$defs"])
    done = ", ".join(sorted({s["schema_at"].replace("/$defs/", "").replace("/properties/", ".") or "the top level"
                             for s in tables["sections"]} | {"preset_name", "preset_params"}
                            | {w.replace("/$defs/", "") for w, _ in DERIVED}))
    kinds = sorted(kinds_defs(tables))
    note = ("The properties and required keys of " + done + " are written by `make schema` from the "
            "tables of scenario/ (scenario/table.h: ld_section, ld_field; a row read by code carries "
            "its schema), the presets' parameters from the presets' tables, the basic values' "
            "definitions (" + ", ".join(BASIC) + ") from what the loader's parsers accept "
            "(scenario/loadint.h), and " + ", ".join(kinds) + " from their tables of kinds; edit them there. "
            "The rest is written by hand. "
            "tests/e2e/schema_fresh.sh fails when this file is not what `make schema` writes.")
    head = {k: doc.pop(k) for k in list(doc) if k in ("$schema",)}
    doc.pop("$comment", None)
    doc = {**head, "$comment": note, **doc}
    return layout(doc) + "\n"


def type_doc(f):
    if f.get("unit"):
        return f["unit"]
    kind = f["kind"]
    if kind in ("duration", "duration0"):
        return "duration"
    if kind in ("number", "integer"):
        return f"{kind} in [{number(f['lo'])}, {number(f['hi'])}]"
    if kind in ("bool", "switch"):
        return "boolean"
    if kind == "enum":
        return ", ".join(f"`{json.dumps(n)}`" for n in f["names"])
    return kind


def seconds_text(d):
    """"15s" as the docs write it: "15 s"."""
    m = re.fullmatch(r"([0-9.]+)s", d)
    return f"{m.group(1)} s" if m else d


def scale_rules_text(d):
    """An autoscaler's direction, from its rules: "4 pods or 100% per 15 s, no stabilization"."""
    if d.get("select") == "disabled":
        return "no change in this direction"
    limits = ([f"{number(d['pods'])} pods"] if "pods" in d else []) + \
        ([f"{number(d['percent'])}%"] if "percent" in d else [])
    text = (" or " if d.get("select", "max") == "max" else " and ").join(limits)
    text += " per " + seconds_text(d["period"])
    stab = d.get("stabilization", "0s")
    return text + (", no stabilization" if re.fullmatch(r"0+(\.0*)?[a-z]+", stab) else f", stabilization {stab}")


# The default of a row whose value is an object of these tables, in words (else its JSON).
OBJECT_DEFAULT_TEXT = {"scale_rules": scale_rules_text}


def shared_defaults(tables):
    """{TABLE: [default, ...]}: the object defaults of the rows whose value is that table's
    object, where several rows share one table (scale_up, scale_down)."""
    out = {}
    for sec in tables["sections"]:
        for f in sec["fields"]:
            if len(f.get("sub", [])) == 1 and isinstance(f.get("default"), dict):
                out.setdefault(f["sub"][0], []).append(f["default"])
    return {k: v for k, v in out.items() if len(v) > 1}


def default_doc(f, sec=None, shared=None):
    if f.get("default_doc"):
        return f["default_doc"]
    sub = f.get("sub", [])
    if len(sub) == 1 and sub[0] in OBJECT_DEFAULT_TEXT and isinstance(f.get("default"), dict):
        return OBJECT_DEFAULT_TEXT[sub[0]](f["default"])
    parents = (shared or {}).get(sec["name"]) if sec else None
    if parents and len({compact(p.get(f["name"])) for p in parents}) > 1:
        # the rows that hold this table's object give it different defaults: each one's
        return " / ".join("`" + compact(p[f["name"]]) + "`" if f["name"] in p else "none" for p in parents)
    if f.get("required") or f.get("needed"):
        return "required"
    if "default" in f:
        return "`" + compact(f["default"]) + "`"
    return "—"


def rows(tables, name):
    out = ["| key | type | default | meaning |", "|---|---|---|---|"]
    shared = shared_defaults(tables)
    for sec in tables["sections"]:
        if sec["name"] != name:
            continue
        for f in sec["fields"]:
            out.append(f"| `{sec.get('doc_prefix', '')}{f['name']}` | {type_doc(f)} | {default_doc(f, sec, shared)} | {f.get('doc') or ''} |".replace("|  |", "| |"))
    return out


def format_text(tables, text):
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        i += 1
        if not line.startswith("<!-- keys: "):
            continue
        name = line[len("<!-- keys: "):].rstrip(" ->")
        end = i
        while end < len(lines) and lines[end] != "<!-- /keys -->":
            end += 1
        if end == len(lines):
            sys.exit(f"gen_schema: {FORMAT}: '<!-- keys: {name} -->' has no '<!-- /keys -->'")
        if not any(s["name"] == name for s in tables["sections"]):
            sys.exit(f"gen_schema: {FORMAT}: no table named '{name}'")
        out.extend(rows(tables, name))
        i = end
    return "\n".join(out)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("--write", "--check"):
        sys.exit("usage: gen_schema.py --write|--check SCN_TABLES")
    tables = json.loads(subprocess.run([sys.argv[2]], check=True, capture_output=True, text=True).stdout)
    stale = 0
    for path, make in ((SCHEMA, schema_text), (FORMAT, format_text)):
        with open(path, encoding="utf-8") as fh:
            old = fh.read()
        new = make(tables, old)
        if new == old:
            continue
        if sys.argv[1] == "--write":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(new)
            print(f"gen_schema: wrote {path}")
        else:
            stale = 1
            print(f"gen_schema: {path} is stale (run `make schema`):")
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), path, "generated", n=1))
    return stale


if __name__ == "__main__":
    sys.exit(main())
