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
#include "scenario/table.h"

#define SIM_PRESET_PARAMS_MAX 64
#define SIM_PRESET_LIST_MAX 16

/* A parameter: a row of the format's tables (scenario/table.h: ld_field), with `notation` set. */
typedef ld_field sim_param;

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

/*
 * The library's vocabulary, for the reports (reports/settings.c, the events): what the
 * library calls its breaker, its retry and its states, and which of its parameters says
 * each fusebox setting. The report reads the value from the layer that ran (its effective
 * fb_breaker_config and fb_retry_config) and writes it in the parameter's notation, so the
 * words cannot drift from what ran.
 */
typedef enum sim_vocab_field {
    SIM_VF_NONE = 0,
    /* the breaker of each provider (fb_breaker_config) */
    SIM_VF_MODE,              /* words[mode] (resilience4j slidingWindowType) */
    SIM_VF_CONSECUTIVE,       /* consecutive_failures: opens at that many failures in a row */
    SIM_VF_CONSECUTIVE_ABOVE, /* N of "more than N in a row" (gobreaker ConsecutiveFailures > N) */
    SIM_VF_FAILURE_RATE,      /* failure_rate, as PERCENT or FRACTION */
    SIM_VF_SLOW_RATE,
    SIM_VF_SLOW_US,
    SIM_VF_WINDOW_CALLS,
    SIM_VF_WINDOW_US,
    SIM_VF_WINDOW_SECONDS, /* window_us as a count of seconds (resilience4j TIME_BASED) */
    SIM_VF_WINDOW_BUCKETS,
    SIM_VF_MINIMUM_CALLS,
    SIM_VF_OPEN_US,
    SIM_VF_OPEN_US_MAX,
    SIM_VF_PERMITS,
    SIM_VF_HALF_OPEN_MAX_US,
    SIM_VF_CLOSED_INTERVAL_US,
    SIM_VF_OPEN_ALIGN_US, /* open deadlines at multiples of it (Envoy's sweeps) */
    SIM_VF_OPEN_TIMER,    /* BOOL: open_timer ON */
    SIM_VF_AS_ADMITTED,   /* words[late_results == AS_ADMITTED] (pybreaker mode) */
    SIM_VF_ATTEMPTS,      /* the retry's (fb_retry_config, effective): calls, the first included */
    SIM_VF_RETRIES,       /* attempts - 1 */
    SIM_VF_BASE_US,       /* the first (or constant) wait */
    SIM_VF_DELAY_MAX_US,  /* the cap on a wait; none when unbounded */
    SIM_VF_MULTIPLIER,
    SIM_VF_BACKOFF,            /* words[backoff] */
    SIM_VF_JITTER,             /* words[jitter] (tenacity's wait function) */
    SIM_VF_JITTER_FRACTION,    /* jitter_fraction, where the jitter has one */
    SIM_VF_ATTEMPT_TIMEOUT_US, /* the retry's attempt timeout, else the provider's */
    SIM_VF_DEADLINE_US
} sim_vocab_field;

#define SIM_VF_FIRST_RETRY SIM_VF_ATTEMPTS /* fields before it are the breaker's */

typedef struct sim_vocab_param {
    const char *name; /* the library's parameter (sim_vocab.params says which names) */
    sim_vocab_field field;
    sim_param_kind kind; /* the notation of the value (PERCENT "50%", GO_DURATION "60s" ...) */
    /* when it applies: a breaker field in the breaker modes (1 << fb_breaker_mode), a retry
       field in the backoffs (1 << fb_backoff); 0: always */
    uint8_t modes;
    /* MODE, BACKOFF, JITTER, AS_ADMITTED: the library's word for each value of the enum (every
       value has an entry; NULL: none); ATTEMPTS, RETRIES: words[0] says no limit (fusebox's
       FB_RETRY_ATTEMPTS_MAX), e.g. cockatiel's "Infinity" */
    const char *const *words;
} sim_vocab_param;

typedef struct sim_vocab {
    const char *breaker; /* what the library calls its breaker ("resilience4j CircuitBreaker") */
    const char *retry;   /* ... and its retry ("resilience4j Retry"); NULL: no retry of its own */
    const char *name;    /* the library, first in an event's sentence ("resilience4j") */
    /* the library's names of CLOSED, OPEN and HALF_OPEN; NULL: it has no such state */
    const char *states[3];
    /* NULL-name-terminated, in the order the report says them; a name is one of the preset's
       parameters, or a keyword its parameters' docs name ("max" of tenacity's waits) */
    const sim_vocab_param *params;
} sim_vocab;

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
    const sim_vocab *vocab; /* the report's words for the library; NULL: fusebox's own */
} sim_preset;

/* The catalog, NULL-terminated, in the order `fusebox presets` lists it. */
const sim_preset *const *scn_presets(void);
const sim_preset *scn_preset_find(const char *name);
/* The index of the parameter named `name`, or -1. */
int scn_preset_param(const sim_preset *p, const char *name);
/*
 * Whether parameter `param` of layer L (given as a library preset) cannot change a run of
 * scenario sc, by one of the library's rules and what sc holds: 1 with the reason in `why`
 * (what of the scenario, and the rule in the library's words, as `fusebox presets` has it),
 * else 0 (no rule known: the parameter may still change nothing). A sweep says it beside a
 * dimension that changed no result (LiteLLM's cooldown_time when every error carries a
 * Retry-After: the cooldown lasts the header's time).
 */
int scn_preset_inert(const struct sim_layer *L, const struct sim_scenario *sc, const char *param,
                     char *why, size_t len);
/*
 * resilience4j: the failures a Java exception class names (a bit set of the kinds the preset
 * tells apart: 4xx, 429, 5xx, timeout, connection error, rejected call), or -1 when fusebox
 * cannot place it; and the names it can, comma-separated, into buf (returns the length).
 */
int scn_r4j_exception_kinds(const char *name);
size_t scn_r4j_exception_names(char *buf, size_t len);

#endif /* SIM_PRESET_H */
