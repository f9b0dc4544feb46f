/*
 * test_sim_port.c - the simulator with a port instead of its provider model.
 *
 * The fake port below is a provider with constant latencies and the
 * scenario's outage windows, on a clock that jumps to whatever the
 * simulator waits for: it answers exactly as the model would, so a run
 * through it must give the model's numbers. Other cases check what the
 * simulator does with the port's errors, cancellations and stale answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "sim/sim.h"
#include "tests/unit/helpers.h"

#define PENDING_MAX 4096

typedef struct pending {
    uint64_t id;
    fb_time_us at_us;
    sim_port_answer answer;
} pending;

typedef struct fake {
    const sim_scenario *sc;
    fb_time_us now_us;
    pending p[PENDING_MAX];
    size_t n;
    uint64_t sends, cancels, delivered;
    bool hang;                /* never answer */
    bool twice;               /* deliver every answer twice (the second is stale) */
    uint64_t send_limit;      /* > 0: send fails past this many */
    fb_time_us stop_at_us;    /* > 0: wait fails once the clock reaches it */
    uint64_t rows, row_hash;  /* what the run emitted */
    fb_time_us last_row_t_us; /* start of the last row */
} fake;

static void on_row(void *ctx, const sim_row *row) {
    fake *f = ctx;
    f->rows++;
    f->last_row_t_us = row->t_us;
    /* in_service counts attempts at the provider: with a port, errors being answered too */
    sim_row r = *row;
    for (int p = 0; p < SIM_PROVIDERS_MAX; p++) r.p[p].in_service = 0;
    th_mix(&f->row_hash, &r, sizeof r);
}

static bool outage_at(const sim_provider *pv, fb_time_us t, int *status) {
    for (uint32_t i = 0; i < pv->fault_count; i++) {
        const sim_fault *fa = &pv->faults[i];
        if (fa->kind == SIM_FAULT_OUTAGE && t >= fa->at_us && t - fa->at_us < fa->for_us) {
            *status = fa->status;
            return true;
        }
    }
    return false;
}

static int fake_send(void *ctx, const sim_port_attempt *a, char *msg, size_t msglen) {
    fake *f = ctx;
    if (f->send_limit > 0 && f->sends >= f->send_limit) {
        snprintf(msg, msglen, "too many transfers");
        return FB_ECAP;
    }
    f->sends++;
    if (f->hang) return FB_OK;
    assert_true(f->n < PENDING_MAX);
    const sim_provider *pv = &f->sc->providers[a->provider];
    pending *p = &f->p[f->n++];
    memset(p, 0, sizeof *p);
    p->id = a->id;
    p->answer.hint_us = FB_TIME_NONE;
    p->answer.reply.should_retry = -1;
    int status;
    if (outage_at(pv, f->now_us, &status)) {
        p->answer.reply.status = status;
        p->at_us = f->now_us + (fb_time_us)pv->error_latency_us.a;
    } else {
        p->answer.reply.status = 200;
        p->answer.served = true;
        p->answer.tokens_out = a->tokens_out;
        p->at_us = f->now_us + (fb_time_us)pv->ttft_us.a + pv->per_token_us * a->tokens_out;
    }
    return FB_OK;
}

static void fake_cancel(void *ctx, uint64_t id) {
    fake *f = ctx;
    f->cancels++;
    for (size_t i = 0; i < f->n; i++) {
        if (f->p[i].id != id) continue;
        f->p[i] = f->p[--f->n];
        return;
    }
}

static int fake_wait(void *ctx, fb_time_us until_us, fb_time_us *now_us, char *msg, size_t msglen) {
    fake *f = ctx;
    fb_time_us next = until_us;
    for (size_t i = 0; i < f->n; i++)
        if (f->p[i].at_us < next) next = f->p[i].at_us;
    assert_true(next != FB_TIME_MAX);
    if (next > f->now_us) f->now_us = next;
    *now_us = f->now_us;
    if (f->stop_at_us > 0 && f->now_us >= f->stop_at_us) {
        snprintf(msg, msglen, "interrupted");
        return FB_ESTATE;
    }
    return FB_OK;
}

/* Deliver what is due, earliest first (ties by id, as the model's sequence numbers). */
static void fake_collect(void *ctx, struct sim *s) {
    fake *f = ctx;
    for (;;) {
        size_t best = f->n;
        for (size_t i = 0; i < f->n; i++) {
            if (f->p[i].at_us > f->now_us) continue;
            if (best == f->n || f->p[i].at_us < f->p[best].at_us ||
                (f->p[i].at_us == f->p[best].at_us && f->p[i].id < f->p[best].id))
                best = i;
        }
        if (best == f->n) return;
        pending p = f->p[best];
        f->p[best] = f->p[--f->n];
        f->delivered++;
        p.answer.at_us = p.at_us;
        sim_port_deliver(s, p.id, &p.answer);
        if (f->twice) sim_port_deliver(s, p.id, &p.answer);
    }
}

static const char outage_json[] =
    "{\"name\":\"port\",\"seed\":7,\"duration\":\"60s\","
    "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"poisson\":\"20/s\"},"
    "\"prompt_tokens\":100,\"completion_tokens\":20}],"
    "\"pods\":{\"count\":2,\"workers\":50,\"queue\":100},"
    "\"providers\":[{\"name\":\"primary\",\"latency\":{\"ttft\":\"200ms\","
    "\"per_output_token\":\"5ms\",\"error\":\"50ms\"},"
    "\"faults\":[{\"at\":\"20s\",\"for\":\"20s\",\"outage\":{\"status\":503}}]},"
    "{\"name\":\"backup\",\"latency\":{\"ttft\":\"300ms\",\"error\":\"50ms\"}}],"
    "\"policy\":{\"retry\":{\"attempts\":2,\"backoff\":{\"constant\":\"100ms\"},\"jitter\":"
    "\"full\"},"
    "\"breaker\":{\"consecutive_failures\":5,\"open\":\"5s\"},"
    "\"fallback\":[\"primary\",\"backup\"]}}";

static fake *new_fake(const sim_scenario *sc) {
    fake *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->sc = sc;
    return f;
}

static int run_port(fake *f, sim_summary *out, sim_error *err) {
    sim_port port = {fake_send, fake_cancel, fake_wait, fake_collect, f, NULL};
    sim_run_opts opts = {on_row, NULL, NULL, f, 0, true, NULL};
    return sim_run_port(f->sc, 0, &opts, &port, out, err);
}

static void port_answering_like_the_model_gives_the_model_numbers(void **state) {
    (void)state;
    sim_scenario *sc = th_load(outage_json);
    fake *model = new_fake(sc), *f = new_fake(sc);
    sim_summary *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    sim_error err;
    sim_run_opts opts = {on_row, NULL, NULL, model, 0, true, NULL};
    assert_int_equal(sim_run(sc, 0, &opts, a, &err), FB_OK);
    assert_int_equal(run_port(f, b, &err), FB_OK);
    assert_true(b->complete);
    assert_true(a->requests > 1000);
    assert_int_equal(b->requests, a->requests);
    assert_int_equal(b->success_primary, a->success_primary);
    assert_int_equal(b->success_fallback, a->success_fallback);
    assert_true(b->success_fallback > 100);
    assert_int_equal(b->errors, a->errors);
    for (int p = 0; p < 2; p++) {
        assert_int_equal(b->providers[p].attempts, a->providers[p].attempts);
        assert_int_equal(b->providers[p].served, a->providers[p].served);
        assert_int_equal(b->providers[p].tokens_out, a->providers[p].tokens_out);
        assert_int_equal(b->providers[p].breaker_opens, a->providers[p].breaker_opens);
        assert_int_equal(b->providers[p].breaker_transitions, a->providers[p].breaker_transitions);
    }
    assert_true(b->providers[0].breaker_opens >= 4);
    assert_int_equal(fb_hist_percentile(&b->latency, 50), fb_hist_percentile(&a->latency, 50));
    assert_int_equal(fb_hist_percentile(&b->latency, 99), fb_hist_percentile(&a->latency, 99));
    assert_int_equal(b->end_us, a->end_us);
    assert_int_equal(f->rows, model->rows);
    assert_int_equal(f->row_hash, model->row_hash);
    assert_int_equal(f->sends, b->attempts);
    assert_int_equal(f->delivered, b->attempts);
    assert_int_equal(f->cancels, 0);
    free(a);
    free(b);
    free(model);
    free(f);
    scn_free(sc);
}

static void port_stale_answers_are_ignored(void **state) {
    (void)state;
    sim_scenario *sc = th_load(outage_json);
    fake *once = new_fake(sc), *f = new_fake(sc);
    f->twice = true;
    sim_summary *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(a);
    assert_non_null(b);
    sim_error err;
    assert_int_equal(run_port(once, a, &err), FB_OK);
    assert_int_equal(run_port(f, b, &err), FB_OK);
    assert_int_equal(b->providers[0].served, a->providers[0].served);
    assert_int_equal(b->providers[1].served, a->providers[1].served);
    assert_int_equal(b->success_fallback, a->success_fallback);
    assert_int_equal(f->row_hash, once->row_hash);
    free(a);
    free(b);
    free(once);
    free(f);
    scn_free(sc);
}

static void port_attempt_timeout_cancels_the_attempt(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"hang\",\"duration\":\"10s\","
                "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"constant\":\"2/s\"}}],"
                "\"pods\":{\"request_timeout\":\"20s\"},"
                "\"providers\":[{\"name\":\"p\"}],"
                "\"policy\":{\"retry\":{\"attempts\":2,\"backoff\":\"none\","
                "\"attempt_timeout\":\"1s\"}}}");
    fake *f = new_fake(sc);
    f->hang = true;
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_error err;
    assert_int_equal(run_port(f, s, &err), FB_OK);
    assert_int_equal(s->requests, 20);
    assert_int_equal(s->attempts, 40);
    assert_int_equal(f->cancels, 40);
    assert_int_equal(s->providers[0].outcomes[FB_OUT_TIMEOUT], 40);
    assert_int_equal(s->ended[SIM_END_EXHAUSTED], 20);
    /* the last request arrives at 9.5 s and gives up after two 1 s attempts */
    assert_int_equal(s->end_us, 11500 * FB_US_PER_MS);
    free(s);
    free(f);
    scn_free(sc);
}

static void port_request_deadline_cancels_the_attempt(void **state) {
    (void)state;
    sim_scenario *sc =
        th_load("{\"name\":\"hang\",\"duration\":\"10s\","
                "\"traffic\":[{\"class\":\"chat\",\"arrivals\":{\"constant\":\"1/s\"}}],"
                "\"pods\":{\"request_timeout\":\"3s\"},"
                "\"providers\":[{\"name\":\"p\"}]}");
    fake *f = new_fake(sc);
    f->hang = true;
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_error err;
    assert_int_equal(run_port(f, s, &err), FB_OK);
    assert_int_equal(s->requests, 10);
    assert_int_equal(f->cancels, 10);
    assert_int_equal(s->ended[SIM_END_TIMEOUT], 10);
    assert_int_equal(s->providers[0].unfinished, 0);
    free(s);
    free(f);
    scn_free(sc);
}

static void port_send_error_stops_the_run_with_its_reason(void **state) {
    (void)state;
    sim_scenario *sc = th_load(outage_json);
    fake *f = new_fake(sc);
    f->send_limit = 10;
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_error err;
    assert_int_equal(run_port(f, s, &err), FB_ECAP);
    assert_false(s->complete);
    assert_non_null(strstr(s->stop_reason, "too many transfers at t="));
    /* the eleventh was counted, then could not be sent */
    assert_int_equal(s->attempts, 11);
    free(s);
    free(f);
    scn_free(sc);
}

static void port_wait_error_keeps_what_was_measured(void **state) {
    (void)state;
    sim_scenario *sc = th_load(outage_json);
    fake *f = new_fake(sc);
    f->stop_at_us = 5 * FB_US_PER_S + 1;
    sim_summary *s = malloc(sizeof *s);
    assert_non_null(s);
    sim_error err;
    assert_int_equal(run_port(f, s, &err), FB_ESTATE);
    assert_false(s->complete);
    if (strstr(s->stop_reason, "interrupted at t=5.0") == NULL) fail_msg("%s", s->stop_reason);
    /* about 5 s of 20/s arrived; no row beyond the interruption */
    assert_true(s->requests > 60 && s->requests < 140);
    assert_int_equal(f->rows, 5);
    assert_int_equal(f->last_row_t_us, 4 * FB_US_PER_S);
    /* answers still in flight are counted as unfinished */
    assert_int_equal(s->providers[0].unfinished, f->n);
    free(s);
    free(f);
    scn_free(sc);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(port_answering_like_the_model_gives_the_model_numbers),
        cmocka_unit_test(port_stale_answers_are_ignored),
        cmocka_unit_test(port_attempt_timeout_cancels_the_attempt),
        cmocka_unit_test(port_request_deadline_cancels_the_attempt),
        cmocka_unit_test(port_send_error_stops_the_run_with_its_reason),
        cmocka_unit_test(port_wait_error_keeps_what_was_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
