/*
 * loadint.h - what the scenario loader's files share (private to sim/).
 *
 * The loader walks the cJSON tree with a parse context that carries the JSON
 * path being read, so that every error names where it happened. The getters
 * look a key up, check its type and range and store it; an absent key leaves
 * the output alone, which is how every default is written: set it, then get.
 * Everything returns FB_OK or FB_EINVAL, and the first error is the one kept.
 *
 * The error is sticky, as an sqlite3_str's is (after its first error every
 * append is a no-op: https://sqlite.org/c3ref/str_errcode.html): the context
 * records the first one (P->rc, with its message and path in P->err), and
 * from then on the getters, key checks and walkers do nothing and return it.
 * So a parser reads as a straight list of calls and returns P->rc at the
 * end; only code that would use what a failed call did not set (an index, a
 * pointer, a count) tests P->rc first.
 *
 *   load_json.c       errors and paths, did-you-mean, key checks, getters
 *   load_dist.c       distributions: their tables and their reading
 *   load_traffic.c    traffic classes: arrivals, schedules, targets
 *   load_fleet.c      per-pod sources, serial clients, re-submissions, autoscaling, store outages
 *   load_providers.c  providers and their faults; references to providers by name
 *   load_policy.c     variants: retry, breaker, rate limits, overrides, merging
 *   load_client.c     a layer's concurrency limits, hedging and connections
 *   load_set.c        the --set overlay: paths checked against the tables, applied to the tree
 *   load_table.c      the walker of the format's tables (below), and the list of them
 *   load_strict.c     the strict reading of JSON text: duplicate keys, trailing text, UTF-8, depth
 *   scenario.c        the document, section by section
 *
 * The ld_ prefix keeps these names out of the rest of libfbsim's way.
 */
#ifndef SIM_LOADINT_H
#define SIM_LOADINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "scenario/scenario.h"
#include "scenario/table.h"

/* Token buckets keep capacity x one minute in microseconds in an int64. */
#define LD_RATE_PER_MIN_MAX 100000000000ULL
/* The characters of a name (they end up in file names, CSV headers, metric names). */
#define LD_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."
/* An error status (a fault's, a full queue's): 4xx or 5xx, anything else answers as a success. */
#define LD_STATUS_MIN 400
#define LD_STATUS_MAX 599
#define LD_STR_(x) #x
#define LD_STR(x) LD_STR_(x)
/* The docs' type of such a status (the key tables' unit column). */
#define LD_STATUS_UNIT "error status (" LD_STR(LD_STATUS_MIN) "-" LD_STR(LD_STATUS_MAX) ")"
/* The largest count a file may give (observed counts): the integers a double holds exactly. */
#define LD_COUNT_MAX 9007199254740991ULL
/*
 * The number of a duration or a rate as load_json.c's decimal() reads it, as a regular
 * expression (for the schema): digits with an optional point, at least one digit in all, then
 * an optional exponent.
 */
#define LD_DIGITS_RE "([0-9]+(\\.[0-9]*)?|\\.[0-9]+)"
#define LD_EXPONENT_RE "([eE][+-]?[0-9]+)?"

/* A unit of a duration or a rate and its size (microseconds; seconds). */
typedef struct ld_unit {
    const char *name;
    double scale;
} ld_unit;
/* A duration's units, largest first, a unit's spellings together ("min", "m"); NULL-terminated. */
extern const ld_unit scn__duration_units[];
/* A rate's units ("/m": per minute), without which a rate is per second; NULL-terminated. */
extern const ld_unit scn__rate_units[];

typedef struct pctx {
    sim_error *err;
    char path[256];
    size_t len;
    bool timing_optional;   /* faults without at/for: from the start, for ever */
    const sim_scenario *sc; /* so far: providers come first, the rest refer to them */
    const sim_import *imp;  /* reads the policy files layers may name; NULL: none */
    int rc;                 /* the sticky error: FB_OK until the first error, then its code */
} pctx;

/* ---- errors and paths (load_json.c) ---- */

/* Record msg at the current path, unless an error is already recorded; the sticky error
 * (FB_EINVAL when this one is the first). */
int scn__fail(pctx *P, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* rc, returned by a callee with its own context on P->err (or none), becomes the sticky error
 * when it is the first; the sticky error. */
int scn__keep(pctx *P, int rc);
/* Extend the path by .key or [i]; each returns what scn__pop restores. */
size_t scn__push_key(pctx *P, const char *key);
size_t scn__push_index(pctx *P, size_t i);
void scn__pop(pctx *P, size_t old);
/* At KEY: "WHAT starts at ..., at or after the end of traffic" (a silent no-op otherwise). */
int scn__fail_past_end(pctx *P, const char *key, const char *what, fb_time_us at_us,
                       fb_time_us end_us);
/*
 * Parse JSON text strictly (scn__strict_json); NULL with the error in err->path
 * and err->msg ("invalid JSON at line L, column C" for a plain syntax error).
 */
cJSON *scn__parse_json(const char *text, size_t len, sim_error *err);

/* ---- strict JSON (load_strict.c) ---- */

/* cJSON's CJSON_NESTING_LIMIT: the levels of arrays and objects a document may have. */
#define LD_JSON_DEPTH_MAX 1000
enum {
    LD_STRICT_OK = 0,
    LD_STRICT_SYNTAX,    /* not JSON at all (cJSON's message is kept when it fails too) */
    LD_STRICT_TEXT,      /* invalid UTF-8, \u0000, a lone surrogate, a raw control character */
    LD_STRICT_DUPLICATE, /* a key twice in one object */
    LD_STRICT_DEPTH,     /* deeper than LD_JSON_DEPTH_MAX */
    LD_STRICT_TRAILING,  /* text after the document */
    LD_STRICT_MEMORY,
};
/*
 * Check text as RFC 8259 JSON in UTF-8 with each key once per object and
 * nothing after the document; LD_STRICT_OK, or the kind with err->path (the
 * JSON path where it happened) and err->msg (with line and column or byte offset).
 */
int scn__strict_json(const char *text, size_t len, sim_error *err);

/* ---- names and keys ---- */

/* The closest of `names` (NULL-terminated) to `word`, or NULL when nothing is close. */
const char *scn__suggest(const char *word, const char *const *names);
/* "a string", "an object", ... for messages. */
const char *scn__type_name(const cJSON *v);
const cJSON *scn__field(const cJSON *obj, const char *key);
/* Every key of obj is in `allowed` (else did-you-mean); a "description" is a string. */
int scn__check_keys(pctx *P, const cJSON *obj, const char *const *allowed);
int scn__need_object(pctx *P, const cJSON *v);
int scn__need_key(pctx *P, const cJSON *obj, const char *key);
/* An object whose keys are among `keys` and which has every key of `required` (or NULL). */
int scn__check_object(pctx *P, const cJSON *v, const char *const *keys,
                      const char *const *required);
/* obj[key] (already read into `name`) is a valid name: non-empty, LD_NAME_CHARS only. */
int scn__check_name(pctx *P, const char *key, const char *name);

/* ---- walking ---- */

/* Parses v into *out (what out is, each parser says). */
typedef int (*ld_parse_fn)(pctx *P, const cJSON *v, void *out);
/* Parses item i of an array into *out. */
typedef int (*ld_item_fn)(pctx *P, const cJSON *e, uint32_t i, void *out);

/* When obj has `key`, parse its value with the path on it; absent is FB_OK. */
int scn__key(pctx *P, const cJSON *obj, const char *key, ld_parse_fn parse, void *out);
/*
 * An array of at most `cap` items ("at most CAP WHAT" beyond), each parsed
 * with the path on its index; *count follows the items parsed so far.
 */
int scn__array(pctx *P, const cJSON *v, uint32_t cap, const char *what, ld_item_fn item, void *out,
               uint32_t *count);

/* ---- typed getters: each reads obj[key]; absent keeps *out ---- */

int scn__get_duration_value(pctx *P, const cJSON *v, fb_time_us *out, bool allow_zero);
int scn__get_duration(pctx *P, const cJSON *obj, const char *key, fb_time_us *out, bool allow_zero);
int scn__get_number(pctx *P, const cJSON *obj, const char *key, double *out, double lo, double hi);
/* The value v (the path already on its key) as a number in [lo, hi]. */
int scn__get_number_value(pctx *P, const cJSON *v, double *out, double lo, double hi);
int scn__get_uint(pctx *P, const cJSON *obj, const char *key, uint64_t *out, uint64_t lo,
                  uint64_t hi);
/* The value v (the path already on its key) as an integer in [lo, hi]. */
int scn__get_uint_value(pctx *P, const cJSON *v, uint64_t *out, uint64_t lo, uint64_t hi);
int scn__get_u32(pctx *P, const cJSON *obj, const char *key, uint32_t *out, uint32_t lo,
                 uint32_t hi);
int scn__get_bool(pctx *P, const cJSON *obj, const char *key, bool *out);
int scn__get_switch(pctx *P, const cJSON *obj, const char *key, fb_switch *out);
int scn__get_string(pctx *P, const cJSON *obj, const char *key, char *out, size_t cap);
/* The value v (the path already on its key) as a string of fewer than cap bytes. */
int scn__get_string_value(pctx *P, const cJSON *v, char *out, size_t cap);
/* One of `names` (NULL-terminated); *out is the index. */
int scn__get_enum(pctx *P, const cJSON *obj, const char *key, const char *const *names, int *out);
/* A rate: a number per second or a string such as "40/s", "2400/m". */
int scn__get_rate_value(pctx *P, const cJSON *v, double *out);
int scn__get_rate(pctx *P, const cJSON *obj, const char *key, double *out);

/* The value v (the path already on its key) as one of `names`; *out is the index. */
int scn__get_enum_value(pctx *P, const cJSON *v, const char *const *names, int *out);

/* ---- the format's tables (scenario/table.h; the walker: load_table.c) ---- */

/* v is an object whose keys are all in s (else "unknown key", with did-you-mean). */
int scn__check_fields(pctx *P, const cJSON *v, const ld_section *s);
/* The same for an object that holds the keys of several sections (NULL-terminated), in order. */
int scn__check_fields_in(pctx *P, const cJSON *v, const ld_section *const *secs);
/* Store the LD_F_SET defaults, then read every key of s that v has (not LD_CODE). */
int scn__read_fields(pctx *P, const cJSON *v, const ld_section *s, void *base);
/*
 * Read the keys of s from the row `from` (NULL: the first) up to the row `to`
 * (NULL: the end), without the defaults: for a section whose code checks
 * something between two keys, in the order the keys are read.
 */
int scn__read_range(pctx *P, const cJSON *v, const ld_section *s, void *base, const char *from,
                    const char *to);
/* Store the LD_F_SET defaults of s alone (a section whose object may be absent). */
int scn__set_defaults(const ld_section *s, void *base, sim_error *err);
/*
 * Store the `def` of the rows from `from` up to `to` (NULL: the end), LD_F_SET or not: for
 * rows whose code decides when they apply (a concurrency limit's adaptive bounds).
 */
int scn__set_defaults_range(pctx *P, const ld_section *s, void *base, const char *from,
                            const char *to);
/* Read the one key `name` of s that v may have (absent: FB_OK), as scn__read_fields does. */
int scn__read_field(pctx *P, const cJSON *v, const ld_section *s, const char *name, void *base);
/* The value of obj's key f->name read as the table reads it, and dropped (--set checks it); a
 * hook's or code's value only when the row is LD_F_PURE. */
int scn__check_field(pctx *P, const cJSON *obj, const ld_field *f);
/* Both: the keys checked, then read. */
int scn__fields(pctx *P, const cJSON *v, const ld_section *s, void *base);
/* Every converted section, NULL-terminated (for the generator). */
extern const ld_section *const scn__sections[];
/* The tables of kinds (load_dist.c: a distribution of durations, of counts); {NULL}-terminated. */
extern const ld_kinds scn__kinds[];
extern const ld_section scn__retry_section, scn__token_bucket_section, scn__quota_section,
    scn__deposit_section, scn__retry_breaker_section, scn__breaker_section, scn__classify_section,
    scn__rate_limit_section, scn__variant_breaker_section, scn__pods_section, scn__slo_section,
    scn__spillover_section, scn__limits_section;
/* load_providers.c: a provider, its objects, a fault and each kind's keys */
extern const ld_section scn__provider_section, scn__latency_section, scn__latency_load_section,
    scn__capacity_section, scn__codel_section, scn__efficiency_section, scn__price_section,
    scn__network_section, scn__fault_section, scn__fault_outage_section,
    scn__fault_rate_limit_section, scn__fault_hang_section, scn__fault_slow_section,
    scn__fault_brownout_section, scn__fault_midstream_section, scn__fault_reset_section,
    scn__fault_policy_section, scn__fault_flap_section;
/* load_traffic.c, load_fleet.c, load_client.c, load_observed.c */
extern const ld_section scn__class_section, scn__arrivals_section, scn__closed_section,
    scn__replay_section, scn__ramp_section, scn__spike_section, scn__burst_section,
    scn__diurnal_section, scn__resubmit_section, scn__conclimit_section, scn__hedging_section,
    scn__connections_section, scn__autoscale_section, scn__scale_rules_section,
    scn__breaker_store_section, scn__store_outage_section, scn__observed_section,
    scn__observed_window_section;
/* A layer's policy, a variant's keys beside it, a class's stack, a gateway tier, the top level;
 * a backoff's parameters and a proportional jitter. */
extern const ld_section scn__layer_section, scn__override_section, scn__degraded_section,
    scn__layer_entry_section, scn__variant_section, scn__class_stack_section, scn__gateway_section,
    scn__top_section, scn__backoff_section, scn__jitter_section;

/* ---- distributions: of durations (microseconds) or of counts (load_dist.c) ---- */

/* The kinds (an object with one of their keys), and each kind's keys, for each value kind. */
extern const ld_section scn__duration_dist_section, scn__duration_uniform_section,
    scn__duration_exponential_section, scn__duration_lognormal_section,
    scn__duration_empirical_section, scn__count_dist_section, scn__count_uniform_section,
    scn__count_exponential_section, scn__count_lognormal_section, scn__count_empirical_section;
/* A distribution of durations, of counts (out: sim_dist): rows' hooks (LD_F_PURE). */
int scn__duration_dist(pctx *P, const cJSON *v, void *out);
int scn__count_dist(pctx *P, const cJSON *v, void *out);

/* The value v (the path already on its key) as a distribution. */
int scn__get_dist_value(pctx *P, const cJSON *v, bool duration, sim_dist *out);
sim_dist scn__dist_const(double a);

/* ---- the sections (their own files) ---- */

/* "providers": an array of providers (out: sim_scenario). */
int scn__parse_providers(pctx *P, const cJSON *v, void *out);
/* The provider that v (or a key) names. */
int scn__lookup_provider(pctx *P, const cJSON *v, uint8_t *out);
int scn__lookup_provider_name(pctx *P, const char *name, uint8_t *out);
/* v names one of the document root's providers, with the loader's message (--set's check:
 * where the document's providers are not all named, that is the loader's to say). */
int scn__check_provider_ref(pctx *P, const cJSON *v, const cJSON *root);
/* A chain of distinct LLM providers, at least one. */
int scn__parse_order(pctx *P, const cJSON *v, uint8_t *order, uint32_t *len);
/* "traffic": an array of classes (out: sim_scenario). */
int scn__parse_traffic(pctx *P, const cJSON *v, void *out);

/* ---- the fleet's dynamics (load_fleet.c) ---- */

#define LD_RESUBMIT_MAX 100        /* re-submissions per user request */
#define LD_SCALE_WINDOW_MAX_S 3600 /* an autoscaler's window, one sample a second */
/* A class's "source", "serial" and "resubmit" (after its arrivals and schedule). */
int scn__parse_class_fleet(pctx *P, const cJSON *v, sim_class *c);
/* A class's "resubmit" (out: sim_resubmit). */
int scn__parse_resubmit(pctx *P, const cJSON *v, void *out);
/* A variant's "autoscale" (read from the merged policy m, and removed from it). */
int scn__parse_variant_fleet(pctx *P, cJSON *m, sim_policy *pol);
/* "breaker_store": {"outages": [...]} (out: sim_scenario). */
int scn__parse_breaker_store(pctx *P, const cJSON *v, void *out);
/* load_observed.c: the log's figures of an imported incident */
int scn__parse_observed(pctx *P, const cJSON *v, void *out);
/* What holds across sections: store outages need a shared breaker, and so on. */
int scn__check_fleet(pctx *P, const sim_scenario *sc);
/* fusebox's defaults for a layer: one attempt, the default chain (load_policy.c). */
void scn__layer_defaults(const sim_scenario *sc, sim_layer *L);
/* A layer given as {"preset": NAME, ...the library's keys} (load_preset.c). */
int scn__parse_preset(pctx *P, const cJSON *e, sim_layer *L);
/*
 * --set LAYER.KEY=val of a preset layer: KEY ("maxRetries", "retry_back_off.base_interval") and
 * val checked against the preset's table as the loader reads them (FB_OK where the loader
 * will say more: no such preset, an index, the layer's own keys).
 */
int scn__check_preset_set(pctx *P, const cJSON *layer, const char *key, const cJSON *val);
/* A layer that names a policy file: {"import": KIND, "file": F, "instance": I} (load_preset.c). */
int scn__import_layer(pctx *P, const cJSON *e, sim_layer *L);
/*
 * One layer's policy from v (scn__layer_section), whose keys must be among the
 * sections `secs` (NULL-terminated: the layer's and those of the object around it).
 */
int scn__parse_layer(pctx *P, const cJSON *v, sim_layer *L, const ld_section *const *secs);
/* {PROVIDER: {...}, ...}: each member read by `part` into that provider's share of L
 * (load_policy.c). */
typedef int (*ld_provider_part)(pctx *P, const cJSON *v, sim_provider_policy *pp);
int scn__per_provider(pctx *P, const cJSON *v, ld_provider_part part, sim_layer *L);
/* A layer's concurrency_limit, hedging and connections (load_client.c). */
int scn__parse_client(pctx *P, const cJSON *v, sim_layer *L);
/* Where those may be in a stack: hedging and connections innermost, and so on. */
int scn__check_client_place(pctx *P, const sim_layer *L, bool innermost);
/* "policy" and "variants": each variant is the policy with its own keys merged over. */
int scn__parse_variants(pctx *P, const cJSON *root, sim_scenario *sc);
/* One "path=value" of --set, applied to the tree; errors carry no path. */
int scn__apply_set(cJSON *root, const char *set, sim_error *err);
/* Once every --set is applied: the last key of the --set `set` read in the object that holds
 * it, by its row's `check` (table.h), its error named by the --set. */
int scn__check_set_context(const cJSON *root, const char *set, sim_error *err);

#endif /* SIM_LOADINT_H */
