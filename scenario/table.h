/*
 * table.h - the shape of the scenario format's tables: a section of the format
 * (the retry object, a breaker, ...) and a library preset's parameters are each
 * one table of ld_field rows. The loader's walker (loadint.h, load_table.c)
 * reads the sections; load_preset.c reads a preset's parameters; `make schema`
 * writes docs/scenario.schema.json's and docs/scenario-format.md's parts from
 * both (tests/tools/scn_tables.c, gen_schema.py).
 */
#ifndef SCN_TABLE_H
#define SCN_TABLE_H

#include <stddef.h>

struct pctx;
struct cJSON;

/*
 * A section of the scenario format (the retry object, a breaker, ...) is one
 * table of its keys: name, kind, range, default, doc line, and where the value
 * goes (an offset into the struct the section fills) or the hook that parses
 * it. The walker checks the object's keys against the table (unknown key,
 * did-you-mean) and reads every key in table order; the first error stops it.
 * tests/tools/scn_tables.c prints the tables, and `make schema` writes
 * docs/scenario.schema.json's and docs/scenario-format.md's parts for them.
 */
typedef enum ld_kind {
    LD_DURATION,  /* a duration > 0 (fb_time_us) */
    LD_DURATION0, /* a duration >= 0 (fb_time_us) */
    LD_NUMBER,    /* a number in [lo, hi] (double) */
    LD_INTEGER,   /* an integer in [lo, hi] (uint32_t or uint64_t/int64_t, by the size) */
    LD_BOOL,      /* true or false (bool) */
    LD_SWITCH,    /* true or false (fb_switch: absent stays FB_DEFAULT) */
    LD_ENUM,      /* one of `names` (an enum: its index) */
    LD_HOOK,      /* `hook` parses the value into base + offset */
    LD_CODE,      /* read by the section's own code (it depends on other keys); with LD_F_PURE,
                     `hook` checks the value alone for --set */
} ld_kind;

/* The loader stores `def` before reading (else `def` is the model's default, for the docs). */
#define LD_F_SET 1u
/* The key must be there ("missing required key", checked with the keys). */
#define LD_F_REQUIRED 2u
/* The value holds members (or array elements) addressed by name or index, each one of `sub`. */
#define LD_F_NAMED 4u
/*
 * LD_INTEGER: the loader stores the storage's largest value before reading, a limit no file
 * can give (connections' keepalive: "every one"); `def` is NULL and `def_doc` says it.
 */
#define LD_F_UNLIMITED 8u
/* The key must be there, checked by the section's code where it reads it (an error met before
   comes first); the schema's "required" has it, as it has the LD_F_REQUIRED keys. */
#define LD_F_NEEDED 16u
/* A variant's key, not the top-level policy's (the schema's "policy" leaves it out). */
#define LD_F_VARIANT 32u
/* LD_HOOK: the hook reads the value alone (not the scenario read so far, nor the object's other
   keys, and allocates nothing), so --set runs it on scratch storage and names a bad value by its
   --set. LD_CODE: `hook` is such a check of the value alone, for --set only (the code reads it). */
#define LD_F_PURE 64u

/* A preset's parameter: how the library writes its value, in its unit. */
typedef enum sim_param_kind {
    SIM_PK_COUNT = 0, /* an integer in [lo, hi] */
    SIM_PK_NUMBER,    /* a number in [lo, hi] */
    SIM_PK_PERCENT,   /* a number of percent in [lo, hi] */
    SIM_PK_FRACTION,  /* a number in [lo, hi], within [0, 1] */
    SIM_PK_SECONDS,   /* a number of seconds */
    SIM_PK_MILLIS,    /* a number of milliseconds */
    SIM_PK_DURATION,  /* "10s", "500ms", ISO-8601 "PT10S", or a number of milliseconds (Spring) */
    SIM_PK_BOOL,
    SIM_PK_WORD,           /* one of `names` */
    SIM_PK_STATUSES,       /* a list of HTTP statuses */
    SIM_PK_WORDS,          /* a list of names, each one of `names` (NULL: any name) */
    SIM_PK_JSON,           /* any JSON: the preset reads it itself (e.g. a fallback map) */
    SIM_PK_TIMESPAN,       /* a .NET TimeSpan string: "00:00:05", "1.00:00:00", "00:00:00.500" */
    SIM_PK_GO_DURATION,    /* a Go time.Duration string: "60s", "1m30s", "500ms", "0" */
    SIM_PK_OBJECT,         /* an object whose keys are the parameters named "NAME.KEY" */
    SIM_PK_CSV,            /* a string of comma-separated names, each one of `names` (Envoy
                              retry_on: "5xx,reset") */
    SIM_PK_PROTO_DURATION, /* a protobuf Duration: "0.025s", or {"seconds": 1, "nanos": 5} */
    SIM_PK_PROTO_PERCENT   /* a protobuf Percent: {"value": 20}, or the number */
} sim_param_kind;

typedef struct ld_field {
    const char *name;
    ld_kind kind;
    size_t offset, size;      /* where in the section's struct (LD_AT) */
    double lo, hi;            /* LD_NUMBER, LD_INTEGER */
    const char *const *names; /* LD_ENUM; a preset's WORD, WORDS, CSV */
    /* LD_HOOK (loadint.h's ld_parse_fn) */
    int (*hook)(struct pctx *P, const struct cJSON *v, void *out);
    const char *def;     /* the default as JSON text; NULL: none */
    unsigned flags;      /* LD_F_* */
    const char *unit;    /* the docs' type column when the kind does not say it all */
    const char *def_doc; /* the docs' default column when `def` does not say it all */
    const char *doc;     /* one line: what it means */
    /* LD_HOOK, LD_CODE: the value's JSON Schema as JSON text, for `make schema`; where another
       table writes an object inside it, that object's "properties" ({}) and "required" ([])
       are left empty for the table to fill. */
    const char *schema;
    /* A preset's parameter (preset.h): how the library writes it; `kind` follows (LD_KIND_OF). */
    sim_param_kind notation;
    /* The sections of the value's keys, NULL-terminated (--set paths); NULL: not described. */
    const struct ld_section *const *sub;
    /*
     * --set's check of a key whose reading needs more than its value (the providers a class's
     * target names, the duration replayed arrivals fall in, an autoscaler's metric) or
     * allocates: `obj` is the object that holds the key and `root` the document, both as
     * --set leaves them; it reads the key as the loader does, stores nothing and frees what it
     * allocates. What it needs and cannot find is the loader's to say. NULL: none.
     */
    int (*check)(struct pctx *P, const struct cJSON *obj, const struct cJSON *root);
} ld_field;

#define LD_AT(T, m) .offset = offsetof(T, m), .size = sizeof(((T *)0)->m)
/* The sections of a field's value (its `sub`), as LD_SUB(&scn__x_section, &scn__y_section). */
// clang-format off
#define LD_SUB(...) .sub = (const ld_section *const[]){__VA_ARGS__, NULL}
// clang-format on

typedef struct ld_section {
    const char *name;       /* the docs' table marker: <!-- keys: NAME --> */
    const char *schema_at;  /* the schema object whose "properties" the table writes */
    const ld_field *fields; /* ends with a field without a name */
    const char *doc_prefix; /* the docs' key column: "spillover." for spillover.hold; NULL: none */
} ld_section;

/*
 * A table of kinds (a distribution's), whose schema_at is "/$defs/NAME/oneOf/1": the value is
 * what its first row takes (a constant) or an object with one of its keys; `doc` is the value's
 * description, "%s" standing for the kinds' names. `make schema` writes $defs/NAME from it.
 */
typedef struct ld_kinds {
    const ld_section *section;
    const char *doc;
} ld_kinds;

/* A preset parameter's kind for the tables' readers: numbers and words as the loader's. */
#define LD_KIND_OF(pk)                                                                             \
    ((pk) == SIM_PK_COUNT    ? LD_INTEGER                                                          \
     : (pk) == SIM_PK_BOOL   ? LD_BOOL                                                             \
     : (pk) == SIM_PK_WORD   ? LD_ENUM                                                             \
     : (pk) <= SIM_PK_MILLIS ? LD_NUMBER                                                           \
                             : LD_HOOK)

#endif /* SCN_TABLE_H */
