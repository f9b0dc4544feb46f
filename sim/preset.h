/*
 * preset.h - layers configured in a named library's own vocabulary.
 *
 * A preset reproduces one library's rules at a named version: its retry
 * loop, backoff and jitter, Retry-After handling, breaker, fallback and
 * timeouts, mapped onto a layer (scenario.h, sim_layer). In a scenario, a
 * layer names its preset and takes the library's own keys and units:
 *
 *   {"name": "sdk", "preset": "openai-node", "maxRetries": 2, "timeout": 600000}
 *   {"name": "cb",  "preset": "resilience4j", "failureRateThreshold": 50,
 *                   "waitDurationInOpenState": "60s", "maxAttempts": 3}
 *
 * Keys a preset does not know are errors with a did-you-mean; values outside
 * what the library accepts are errors in the library's unit. `fusebox
 * presets` lists the catalog and prints each preset's parameters, defaults,
 * rules and what is not modelled; docs/presets.md is that output.
 */
#ifndef SIM_PRESET_H
#define SIM_PRESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"

#define SIM_PRESET_PARAMS_MAX 64
#define SIM_PRESET_LIST_MAX 16

/* How a parameter is written, in the library's unit. */
typedef enum sim_param_kind {
    SIM_PK_COUNT = 0, /* an integer in [min, max] */
    SIM_PK_NUMBER,    /* a number in [min, max] */
    SIM_PK_PERCENT,   /* a number of percent in [min, max] */
    SIM_PK_FRACTION,  /* a number in [min, max], within [0, 1] */
    SIM_PK_SECONDS,   /* a number of seconds */
    SIM_PK_MILLIS,    /* a number of milliseconds */
    SIM_PK_DURATION,  /* "10s", "500ms", ISO-8601 "PT10S", or a number of milliseconds (Spring) */
    SIM_PK_BOOL,
    SIM_PK_WORD,           /* one of `choices` */
    SIM_PK_STATUSES,       /* a list of HTTP statuses */
    SIM_PK_WORDS,          /* a list of names, each one of `choices` (NULL: any name) */
    SIM_PK_JSON,           /* any JSON: the preset reads it itself (e.g. a fallback map) */
    SIM_PK_TIMESPAN,       /* a .NET TimeSpan string: "00:00:05", "1.00:00:00", "00:00:00.500" */
    SIM_PK_GO_DURATION,    /* a Go time.Duration string: "60s", "1m30s", "500ms", "0" */
    SIM_PK_OBJECT,         /* an object whose keys are the parameters named "NAME.KEY" */
    SIM_PK_CSV,            /* a string of comma-separated names, each one of `choices` (Envoy
                              retry_on: "5xx,reset") */
    SIM_PK_PROTO_DURATION, /* a protobuf Duration: "0.025s", or {"seconds": 1, "nanos": 5} */
    SIM_PK_PROTO_PERCENT   /* a protobuf Percent: {"value": 20}, or the number */
} sim_param_kind;

typedef struct sim_param {
    const char *name; /* the library's key, exactly */
    sim_param_kind kind;
    double min, max;            /* numbers: the accepted range, in the library's unit */
    const char *deflt;          /* the library's default, as it writes it */
    const char *doc;            /* what it does */
    const char *const *choices; /* WORD, WORDS: the accepted names, NULL-terminated */
} sim_param;

/* A parameter as the scenario gave it (set = present). */
typedef struct sim_param_value {
    bool set;
    double num;                    /* numbers and BOOL (0/1), in the library's unit */
    fb_time_us us;                 /* SECONDS, MILLIS, DURATION */
    int word;                      /* WORD: the index in choices */
    int list[SIM_PRESET_LIST_MAX]; /* STATUSES: the statuses; WORDS: indices in choices */
    uint32_t list_count;
    const void *json; /* JSON and WORDS: the cJSON value as written */
} sim_param_value;

struct sim_layer;
struct sim_scenario;

typedef struct sim_preset {
    const char *name;                /* "openai-node" */
    const char *library;             /* "openai (npm)" */
    const char *version;             /* "7.5.0 (commit 7b7d6ca7)" */
    const char *source;              /* the files its rules were read from */
    const char *summary;             /* one line */
    const sim_param *params;         /* NULL-name-terminated */
    const char *const *rules;        /* in the library's vocabulary, NULL-terminated */
    const char *const *not_modelled; /* NULL-terminated */
    /*
     * Build the layer from the values (v[i] for params[i]); the layer comes
     * with fusebox's defaults and its name set. On a bad combination return
     * FB_EINVAL with msg (the loader names the layer's path).
     */
    int (*apply)(const struct sim_preset *p, const sim_param_value *v,
                 const struct sim_scenario *sc, struct sim_layer *L, char *msg, size_t msglen);
    /*
     * How far to trust it, one line: "recorded from LIB VERSION: N sequences, 0 differences[,
     * K not modelled] (tests/conformance/DIR)" when the library's own code was run
     * (tests/e2e/conformance.sh checks the claim against DIR), else "rules read from LIB
     * VERSION source" and how it was compared, or "(not run here)".
     */
    const char *verified;
} sim_preset;

/* The catalog, NULL-terminated, in the order `fusebox presets` lists it. */
const sim_preset *const *sim_presets(void);
const sim_preset *sim_preset_find(const char *name);
/* The index of the parameter named `name`, or -1. */
int sim_preset_param(const sim_preset *p, const char *name);

#endif /* SIM_PRESET_H */
