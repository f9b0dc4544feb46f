/*
 * sim.c - the public entry points: run one variant of a scenario.
 *
 * The run itself is spread over the files listed in simint.h; this one
 * builds it (setup.c), drives the right clock (engine.c) and closes it.
 */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simint.h"

const char *sim_end_name(sim_end e) {
    static const char *const names[] = {
#define SIM_END_NAME(name, text) text,
        SIM_END_MAP(SIM_END_NAME)
#undef SIM_END_NAME
    };
    return (unsigned)e < SIM_END_COUNT ? names[e] : "unknown";
}

const char *sim_answer_word_name(sim_answer_word w) {
    static const char *const names[] = {"timeout", "reset", "broken"};
    return (unsigned)w < SIM_ANSWER_WORDS ? names[w] : "unknown";
}

static int run(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
               const sim_port *port, sim_summary *out, sim_error *err, bool zeroed);

int sim_run(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts, sim_summary *out,
            sim_error *err) {
    return run(sc, variant, opts, NULL, out, err, false);
}

int sim_run_zeroed(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
                   sim_summary *out, sim_error *err) {
    return run(sc, variant, opts, NULL, out, err, true);
}

int sim_run_port(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
                 const sim_port *port, sim_summary *out, sim_error *err) {
    return run(sc, variant, opts, port, out, err, false);
}

static int run(const sim_scenario *sc, uint32_t variant, const sim_run_opts *opts,
               const sim_port *port, sim_summary *out, sim_error *err, bool zeroed) {
    static const sim_run_opts no_opts;
    memset(err, 0, sizeof *err);
    snprintf(err->file, sizeof err->file, "%s", sc->file);
    if (!zeroed) memset(out, 0, sizeof *out);
    if (variant >= sc->variant_count) {
        snprintf(err->msg, sizeof err->msg, "no variant %u", variant);
        return FB_EINVAL;
    }
    sim *s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return FB_ENOMEM;
    }
    s->sc = sc;
    s->pol = &sc->variants[variant];
    s->opts = opts ? opts : &no_opts;
    s->port = port;
    s->sum = out;
    s->err = err;
    snprintf(out->variant, sizeof out->variant, "%s", s->pol->name);
    int rc = sim__setup(s);
    if (rc != FB_OK && s->rc == FB_OK)
        sim__stop(s, rc, "cannot set up the run: %s", fb_strerror(rc));
    if (s->port)
        sim__run_port(s);
    else
        sim__run_model(s);
    /* quiet ticks at the end (no event left before the end of traffic) */
    if (s->rc == FB_OK) sim__emit_ticks(s, s->sc->duration_us);
    if (!s->baseline_ready) sim__close_baseline(s);
    sim__stat_finalize(s);
    out->complete = s->rc == FB_OK;
    if (s->rc == FB_OK && s->opts->check_invariants) sim__stat_check_invariants(s);
    rc = s->rc;
    sim__teardown(s);
    free(s);
    return rc;
}
