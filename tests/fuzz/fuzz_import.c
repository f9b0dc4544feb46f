/*
 * fuzz_import.c - a libFuzzer target for fusebox import's readers: OTLP/JSON traces and
 * LiteLLM StandardLoggingPayload records (import/source.c, otlp.c, otlp_tree.c,
 * litellm.c), then the fitting and the scenario written from what they read
 * (import/incident.c and the rest). Whatever the bytes, the readers must return a log or
 * an error, never crash, read out of bounds or leak; every fitted scenario must load.
 *
 * Built and run by tests/e2e/fuzz.sh (make V=fuzz CC=clang fuzz-build), from the seeds in
 * tests/fuzz/corpus/import/; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import/incident.h"
#include "import/source.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fit(const imp_log *log) {
    imp_build_opts o = {0, 0, 0, false, 1, "fuzz"};
    imp_incident *inc = NULL;
    imp_error err;
    if (imp_incident_build(log, &o, &inc, &err) != FB_OK) return;
    char *text = imp_incident_json(inc);
    if (text) {
        sim_scenario *sc = NULL;
        sim_error serr;
        /* what the import writes, the loader takes: anything else is a bug */
        if (scn_parse(text, strlen(text), "fuzz.json", NULL, 0, NULL, &sc, &serr) != FB_OK) abort();
        scn_free(sc);
    }
    free(text);
    imp_incident_free(inc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const imp_format formats[] = {IMP_FORMAT_AUTO, IMP_FORMAT_OTLP, IMP_FORMAT_LITELLM};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        imp_read_opts o = {formats[i], 20000, 0};
        imp_log *log = NULL;
        imp_error err;
        if (imp_read_text((const char *)data, size, "fuzz", &o, &log, &err) == FB_OK) fit(log);
        imp_log_free(log);
    }
    return 0;
}
