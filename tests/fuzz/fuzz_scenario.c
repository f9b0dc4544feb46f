/*
 * fuzz_scenario.c - a libFuzzer target for the scenario loader (scenario/scenario.c, load_*.c),
 * its --set overlay (scenario/load_set.c) and the expectations (reports/expect.c).
 *
 * Input: a scenario's JSON text, then optionally a NUL byte and lines, each a --set override
 * ("path=value") when it has an '=', and every one also an expectation to validate. Whatever
 * the bytes, the loader returns a scenario or an error; an error names the file and says
 * something; the same input twice gives the same answer; a loaded scenario's expectations
 * are validated and, when valid, evaluated (against empty summaries) without a crash. Nothing
 * here assumes the loader's leniency: a rejection is never a failure, only a crash, a leak,
 * undefined behaviour or an answer that changes.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reports/expect.h"
#include "scenario/scenario.h"
#include "sim/sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LINES_MAX 8

/* The lines after the first NUL, NUL-terminated in buf, at most LINES_MAX of them. */
static size_t split_lines(const uint8_t *data, size_t size, char *buf, const char **lines) {
    const uint8_t *nul = memchr(data, 0, size);
    if (nul == NULL) return 0;
    size_t off = (size_t)(nul - data) + 1, n = 0, len = size - off;
    memcpy(buf, data + off, len);
    buf[len] = '\0';
    for (char *p = buf; *p != '\0' && n < LINES_MAX;) {
        lines[n++] = p;
        char *nl = strchr(p, '\n');
        if (nl == NULL) break;
        *nl = '\0';
        p = nl + 1;
    }
    return n;
}

static void expectations(const sim_scenario *sc, const char *const *lines, size_t n) {
    static sim_summary sums[SIM_VARIANTS_MAX];
    sim_summary *ptrs[SIM_VARIANTS_MAX];
    for (uint32_t v = 0; v < sc->variant_count; v++) ptrs[v] = &sums[v];
    char msg[512];
    for (uint32_t i = 0; i < sc->expect_count + n; i++) {
        const char *e = i < sc->expect_count ? sc->expect[i] : lines[i - sc->expect_count];
        /* the loader keeps the texts; `fusebox check` validates them (cli/cmd_check.c) */
        if (rep_expect_validate(sc, e, msg, sizeof msg) != FB_OK) {
            if (msg[0] == '\0') abort(); /* a refusal says why */
            continue;
        }
        rep_expect_result res;
        (void)rep_expect_eval(sc, ptrs, sc->variant_count, e, &res, msg, sizeof msg);
    }
}

/* One load: its return code and the error message (or "") into msg. */
static int load(const uint8_t *data, size_t size, const char *const *sets, size_t nsets,
                sim_scenario **sc, char *msg, size_t msglen) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t len = nul ? (size_t)(nul - data) : size;
    sim_error err;
    memset(&err, 0, sizeof err);
    int rc = scn_parse((const char *)data, len, "fuzz.json", sets, nsets, NULL, sc, &err);
    msg[0] = '\0';
    if (rc != FB_OK) scn_error_format(&err, msg, msglen);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (buf == NULL) return 0;
    const char *lines[LINES_MAX], *sets[LINES_MAX];
    size_t n = split_lines(data, size, buf, lines), nsets = 0;
    for (size_t i = 0; i < n; i++)
        if (strchr(lines[i], '=') != NULL) sets[nsets++] = lines[i];
    sim_scenario *a = NULL, *b = NULL;
    char ma[1024], mb[1024];
    int ra = load(data, size, sets, nsets, &a, ma, sizeof ma);
    int rb = load(data, size, sets, nsets, &b, mb, sizeof mb);
    /* deterministic, and an error names the file and says what */
    if (ra != rb || strcmp(ma, mb) != 0) abort();
    if (ra != FB_OK && (strncmp(ma, "fuzz.json", 9) != 0 || strlen(ma) < 12)) abort();
    if (ra == FB_OK) expectations(a, lines, n);
    scn_free(a);
    scn_free(b);
    free(buf);
    return 0;
}
