/*
 * quantile_verdict - the verdict of fusebox import and run on a latency quantile, for a log
 * whose values a test holds (tests/e2e/import/corpus/corpus_check.py: the truth of a corpus
 * trace against its replays), so that the test and fusebox judge with the same code.
 *
 *   quantile_verdict Q VALUE... < LATENCIES
 *
 * LATENCIES: the log's latencies in seconds (numbers separated by white space, at most
 * 10,000,000); Q: the quantile, in (0, 1); each VALUE: a replay's Q-quantile in seconds. Prints
 * one JSON line:
 *
 *   {"q": 0.9, "n": 945, "log": 1.249, "from": 0.880482, "to": 0.919518, "lo": 0.757974,
 *    "hi": 1.405492, "verdicts": ["cliff", "ok", "miss"]}
 *
 * log: the log's Q-quantile (the order statistic a run reports); from, to, lo, hi: its rank
 * band (scn_obs_rank_band); a verdict per VALUE (rep_latency_within): "ok" within 10% of log,
 * "cliff" within only by the band (within 10% of the log at a rank from..to), "miss" neither.
 * Exit 0; 2 on bad input.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "reports/breakdown.h"
#include "scenario/scenario.h"

#define VALUES_MAX 10000000

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* A number of seconds from s, in microseconds; -1 when s is not one (or is negative). */
static double seconds(const char *s) {
    char *end = NULL;
    double x = strtod(s, &end);
    return end != s && *end == '\0' && x >= 0 && x <= 1e9 ? x * 1e6 : -1;
}

int main(int argc, char **argv) {
    char *end = NULL;
    double q = argc > 2 ? strtod(argv[1], &end) : 0;
    if (argc < 3 || *end != '\0' || !(q > 0 && q < 1)) {
        fprintf(stderr, "usage: quantile_verdict Q VALUE... < LATENCIES (seconds; 0 < Q < 1)\n");
        return 2;
    }
    size_t n = 0, cap = 1024;
    int64_t *v = malloc(cap * sizeof *v);
    double x;
    while (v != NULL && scanf("%lf", &x) == 1) {
        if (!(x >= 0 && x <= 1e9) || n == VALUES_MAX) {
            fprintf(stderr, "quantile_verdict: latency %zu: %g is not in [0, 1e9] s, or too many\n",
                    n + 1, x);
            free(v);
            return 2;
        }
        if (n == cap) {
            int64_t *w = realloc(v, 2 * cap * sizeof *v);
            if (w == NULL) break;
            v = w;
            cap *= 2;
        }
        v[n++] = llround(x * 1e6);
    }
    if (v == NULL || n == 0 || !feof(stdin)) {
        fprintf(stderr, "quantile_verdict: %s\n",
                v == NULL      ? "out of memory"
                : !feof(stdin) ? "a latency on stdin is not a number"
                               : "no latencies on stdin");
        free(v);
        return 2;
    }
    qsort(v, n, sizeof *v, cmp_i64);
    double log = (double)scn_obs_order_statistic(v, n, q);
    sim_obs_rank r = scn_obs_rank_band(v, n, q);
    free(v);
    printf("{\"q\": %g, \"n\": %zu, \"log\": %.6f, \"from\": %.6f, \"to\": %.6f, \"lo\": %.6f, "
           "\"hi\": %.6f, \"verdicts\": [",
           q, n, log / 1e6, r.from, r.to, (double)r.lo_us / 1e6, (double)r.hi_us / 1e6);
    for (int i = 2; i < argc; i++) {
        double s = seconds(argv[i]);
        if (s < 0) {
            fprintf(stderr, "\nquantile_verdict: VALUE '%s' is not a number of seconds\n", argv[i]);
            return 2;
        }
        bool cliff = false, ok = rep_latency_within(log, s, &r, &cliff);
        printf("%s\"%s\"", i > 2 ? ", " : "", !ok ? "miss" : cliff ? "cliff" : "ok");
    }
    printf("]}\n");
    return 0;
}
