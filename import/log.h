/*
 * log.h - what a log of LLM calls says, in one model both readers fill.
 *
 * `fusebox import` reads the logs of a bad hour (OpenTelemetry traces, LiteLLM's
 * StandardLoggingPayload records) into logical requests, the arrivals, each with its
 * attempts: the HTTP calls the old policy made for it (its retries and fallbacks).
 * Keeping the two apart is the point: a replay must send the requests, not the old
 * policy's amplification. Times are unix microseconds; an unknown count is -1.
 *
 * Every growing thing has a cap: the records (requests + attempts, max_records), the
 * providers (SIM_PROVIDERS_MAX), the classes (SIM_CLASSES_MAX); reaching one is an error
 * (FB_ECAP) that says which cap and how to raise it.
 */
#ifndef IMP_LOG_H
#define IMP_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/fb.h"
#include "import/yaml.h"
#include "scenario/scenario.h"

#define IMP_RECORDS_MAX 1000000           /* default cap on records (--max-records) */
#define IMP_BYTES_MAX ((size_t)256 << 20) /* default cap on the file (--max-bytes) */
#define IMP_RESEND_MAX 1000               /* a larger http.request.resend_count is not read */
#define IMP_RECORDS_LIMIT 100000000       /* the highest --max-records accepted */
#define IMP_BYTES_LIMIT ((size_t)4 << 30) /* the highest --max-bytes accepted */
#define IMP_CALL_MAX_US                                                                            \
    ((int64_t)24 * 3600 * 1000000) /* a request or attempt longer is an error                      \
                                    */

typedef enum imp_format { IMP_FORMAT_AUTO = 0, IMP_FORMAT_OTLP, IMP_FORMAT_LITELLM } imp_format;

/* How an attempt ended, as far as the log can tell. */
typedef enum imp_outcome {
    IMP_OK = 0,    /* an answer */
    IMP_STATUS,    /* an error status (`status`) */
    IMP_TIMEOUT,   /* no answer before the client gave up */
    IMP_RESET,     /* connection refused, reset or another transport error */
    IMP_BROKEN,    /* a 200 whose body or stream broke */
    IMP_CANCELLED, /* given up because its request ended first: says nothing of the provider */
    IMP_OUTCOME_COUNT
} imp_outcome;

typedef struct imp_attempt {
    uint32_t request; /* index in requests */
    uint32_t seq;     /* order in the file: ties between equal times */
    uint8_t provider; /* index in providers */
    uint8_t outcome;  /* imp_outcome */
    int16_t status;   /* HTTP status; 0 when none came */
    int16_t resend;   /* http.request.resend_count: resends before it; -1 unknown */
    bool aborted;     /* no status and no error: the client aborted it (a timeout, or cancelled) */
    int64_t start_us, end_us; /* unix time */
    int64_t ttft_us;          /* time to first token; -1 unknown */
    int64_t retry_after_us;   /* the answer's Retry-After; -1 none recorded */
    int32_t tokens_in, tokens_out;
    double cost; /* USD; -1 unknown */
} imp_attempt;

typedef struct imp_request {
    int64_t start_us, end_us; /* arrival and end, unix time */
    uint32_t seq;
    uint8_t cls;
    bool ok;         /* answered */
    bool stream;     /* asked for a stream */
    bool user_abort; /* the application aborted the call (APIUserAbortError on its span) */
    int32_t tokens_in, tokens_out;
    uint32_t first, count; /* its attempts, att[first .. first + count), after imp_log_finish */
    uint64_t session;      /* its session (conversation): imp_session_id of its id; 0 none */
} imp_request;

typedef struct imp_provider {
    char name[SIM_NAME_MAX];    /* the scenario's name for it */
    char key[192];              /* what identifies it in the log: system|address|deployment */
    char system[48];            /* gen_ai.provider.name, gen_ai.system, custom_llm_provider */
    char address[128];          /* server.address:port, api_base */
    char model[64];             /* the model asked for */
    uint32_t context_window;    /* 0 = unknown */
    double price_in, price_out; /* USD per million tokens; -1 = unknown */
} imp_provider;

typedef struct imp_log {
    char file[256];
    imp_format format;
    size_t max_records;
    imp_request *req;
    size_t nreq, req_cap;
    imp_attempt *att;
    size_t natt, att_cap;
    imp_provider prov[SIM_PROVIDERS_MAX];
    uint32_t nprov;
    char cls[SIM_CLASSES_MAX][SIM_NAME_MAX];
    uint32_t ncls;
    /* what the reader noticed, for the scenario's description */
    size_t hidden_attempts;  /* requests with no attempt of their own: retries invisible */
    size_t no_call;          /* requests that made no call (a trace with HTTP spans elsewhere) */
    size_t call_spans;       /* GenAI spans with HTTP spans below: the request, not attempts */
    size_t ignored;          /* records that are no LLM call (an HTTP span outside GenAI) */
    size_t orphans;          /* spans whose parent is not in the file (treated as roots) */
    size_t assumed_status;   /* errors whose status was guessed from a class name */
    size_t aborted;          /* attempts with no status and no error: counted as timeouts */
    size_t user_aborted;     /* ... of them in flight when the application aborted the call */
    size_t ungrouped;        /* LiteLLM records without trace_id: each its own request */
    size_t sessioned;        /* requests that name their session (conversation) */
    size_t retry_after_seen; /* attempts with a recorded Retry-After */
    size_t ttft_seen;        /* attempts with a time to first token */
    /* http.request.resend_count (imp_log_finish): attempts that carry one; the attempts it
       counts that have no span (a request's k-th resend on a provider after fewer than k
       attempts there); with hidden attempts, the requests it says were resent, their
       resends in all, and the most for one */
    size_t resend_seen, resend_missing;
    size_t hidden_resent, hidden_resends;
    uint32_t hidden_resend_max;
} imp_log;

imp_log *imp_log_new(const char *file, imp_format format, size_t max_records);
void imp_log_free(imp_log *log);

/* A new request or attempt, zeroed but for the unknowns (-1); NULL with err on the cap. */
imp_request *imp_log_request(imp_log *log, imp_error *err);
imp_attempt *imp_log_attempt(imp_log *log, imp_error *err);

/*
 * The provider with this key, added when new: its name is `name` made a valid
 * scenario name (letters, digits, - _ .), made unique with -2, -3 ... Returns its
 * index, or -1 with err (more than SIM_PROVIDERS_MAX providers, or nothing to name it).
 */
int imp_log_provider(imp_log *log, const char *key, const char *name, imp_error *err);
/* The class with this name (made a valid name; "default" when empty), or -1 with err. */
int imp_log_class(imp_log *log, const char *name, imp_error *err);

/*
 * Sort requests by arrival and each request's attempts by start, and set first/count;
 * count what the attempts' http.request.resend_count says (resend_*, hidden_resen*).
 * FB_OK, or FB_EINVAL with err when the log holds no request at all.
 */
int imp_log_finish(imp_log *log, imp_error *err);

/* A session's id as a number (64-bit FNV-1a of the text, never 0); 0 for NULL or "". */
uint64_t imp_session_id(const char *s);

/* Make `in` a scenario name into out: letters, digits, '-', '_', '.' (others become '-'). */
void imp_name(const char *in, char *out, size_t len);
/* Record msg in err (with a position when line > 0); returns rc. */
int imp_fail(imp_error *err, int rc, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* IMP_LOG_H */
