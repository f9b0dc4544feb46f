/* helpers.c - the shared test helpers (helpers.h). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/helpers.h"

/*
 * CMOCKA_TEST_FILTER='sim_metastable*' runs only the matching tests of a binary
 * (`make unit T=sim F=...`). cmocka 1.1 has the filter but does not read it from
 * the environment; this runs before every test binary's main().
 */
__attribute__((constructor)) static void filter_from_environment(void) {
    cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
}

sim_scenario *th_load(const char *json) {
    return th_load_with(json, NULL, 0, NULL);
}

sim_scenario *th_load_with(const char *json, const char *const *sets, size_t set_count,
                           const uint64_t *seed) {
    sim_scenario *sc = NULL;
    sim_error err;
    int rc = scn_parse(json, strlen(json), "test.json", sets, set_count, seed, &sc, &err);
    if (rc != FB_OK) fail_msg("scenario: %s: %s", err.path, err.msg);
    assert_non_null(sc);
    return sc;
}

sim_summary *th_run(const sim_scenario *sc, uint32_t v, sim_row_fn on_row, void *ctx) {
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_run_opts opts = {on_row, NULL, NULL, ctx, 0, true, NULL};
    sim_error err;
    if (sim_run(sc, v, &opts, s, &err) != FB_OK) fail_msg("run: %s", err.msg);
    assert_true(s->complete);
    return s;
}

void th_keep_row(void *ctx, const sim_row *row) {
    th_rows *c = ctx;
    if (c->n < TH_ROWS_MAX) c->r[c->n++] = *row;
}

void th_ends(const th_rows *rows, char *buf, size_t len) {
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < rows->n && o < len; i++)
        if (rows->r[i].ended)
            o += (size_t)snprintf(buf + o, len - o, "%s%lld:%llu", o ? " " : "",
                                  (long long)(rows->r[i].t_us / FB_US_PER_MS),
                                  (unsigned long long)rows->r[i].ended);
}

sim_summary *th_run_ends(const sim_scenario *sc, th_rows *rows, const char *want) {
    memset(rows, 0, sizeof *rows);
    sim_summary *s = th_run(sc, 0, th_keep_row, rows);
    char got[256];
    th_ends(rows, got, sizeof got);
    assert_string_equal(got, want);
    return s;
}

double th_metric(const sim_scenario *sc, const sim_summary *s, const char *name) {
    double v = 0;
    char msg[200];
    if (sim_metric_value(sc, s, name, &v, NULL, msg, sizeof msg) != FB_OK) fail_msg("%s", msg);
    return v;
}

sim_summary *th_summary(const char *variant) {
    sim_summary *s = calloc(1, sizeof *s);
    assert_non_null(s);
    snprintf(s->variant, sizeof s->variant, "%s", variant);
    fb_hist_init(&s->latency);
    fb_hist_init(&s->latency_ok);
    for (uint32_t c = 0; c < SIM_CLASSES_MAX; c++) fb_hist_init(&s->classes[c].latency);
    return s;
}

void th_mix(uint64_t *hash, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) *hash = (*hash ^ b[i]) * 1099511628211ULL;
}

void th_in_small_memory(void (*fn)(void *ctx, char *out, size_t outlen), void *ctx, char *out,
                        size_t outlen) {
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fd[0]);
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f == NULL || fscanf(f, "%ld", &pages) != 1) _exit(3);
        fclose(f);
        size_t vsz = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
        struct rlimit rl = {vsz + ((size_t)16 << 20), vsz + ((size_t)16 << 20)};
        if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(4);
        char text[1024] = "";
        fn(ctx, text, sizeof text);
        size_t w = strlen(text);
        if (write(fd[1], text, w) != (ssize_t)w) _exit(5);
        _exit(0);
    }
    close(fd[1]);
    size_t have = 0;
    ssize_t k;
    while (have + 1 < outlen && (k = read(fd[0], out + have, outlen - 1 - have)) > 0)
        have += (size_t)k;
    out[have] = '\0';
    close(fd[0]);
    int status = 0;
    assert_true(waitpid(pid, &status, 0) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("the child under a memory limit ended with status %d", status);
}
