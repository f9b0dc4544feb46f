/*
 * test_load_tables.c - the scenario format's tables (scenario/loadint.h): every
 * table is well formed and its stored defaults read, and the defaults of the
 * traffic, client, fleet and observed sections are what the loader stored
 * before they came from the tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/loadint.h"
#include "tests/unit/helpers.h"

#define S FB_US_PER_S

/* Each row says what the walker needs: a hook for LD_HOOK, names for LD_ENUM, a size it can
 * store for LD_INTEGER and LD_ENUM, a range that is not empty. */
static void tables_rows_are_well_formed(void **state) {
    (void)state;
    size_t sections = 0;
    for (size_t i = 0; scn__sections[i]; i++, sections++) {
        const ld_section *s = scn__sections[i];
        assert_non_null(s->name);
        assert_true(s->schema_at[0] == '/' || s->schema_at[0] == '\0'); /* "": the root */
        for (const ld_field *f = s->fields; f->name; f++) {
            if (f->kind == LD_HOOK) assert_non_null(f->hook);
            if (f->kind == LD_ENUM) {
                assert_non_null(f->names);
                assert_int_equal(f->size, sizeof(int));
            }
            if (f->kind == LD_INTEGER)
                assert_true(f->size == sizeof(uint32_t) || f->size == sizeof(uint64_t));
            if (f->kind == LD_NUMBER || f->kind == LD_INTEGER) assert_true(f->lo <= f->hi);
            if (f->flags & LD_F_SET) assert_non_null(f->def);
            if (f->flags & LD_F_UNLIMITED) {
                assert_int_equal(f->kind, LD_INTEGER);
                assert_null(f->def);
            }
        }
    }
    assert_true(sections >= 31);
}

/* A stored default is read as the document would read it: a default out of its own range or
 * of the wrong type fails here. sim_scenario holds every section's struct, so it is room
 * enough for any of them. */
static void tables_stored_defaults_read(void **state) {
    (void)state;
    void *base = calloc(1, sizeof(sim_scenario));
    assert_non_null(base);
    for (size_t i = 0; scn__sections[i]; i++) {
        sim_error err;
        memset(&err, 0, sizeof err);
        memset(base, 0, sizeof(sim_scenario));
        int rc = scn__set_defaults(scn__sections[i], base, &err);
        if (rc != FB_OK) print_error("%s: %s: %s\n", scn__sections[i]->name, err.path, err.msg);
        assert_int_equal(rc, FB_OK);
    }
    free(base);
}

static void assert_same_dist(sim_dist a, sim_dist b) {
    assert_memory_equal(&a, &b, sizeof a);
}

static const char *const head =
    "{\"name\":\"t\",\"duration\":\"60s\",\"providers\":[{\"name\":\"a\"},{\"name\":\"b\"}],";

/* A class without token, service, think or resubmit keys gets the loader's constants. */
static void tables_class_defaults(void **state) {
    (void)state;
    char json[1024];
    snprintf(json, sizeof json,
             "%s\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"closed\":{\"users\":2}},"
             "\"resubmit\":{\"probability\":0.5}},"
             "{\"class\":\"d\",\"arrivals\":{\"poisson\":1},\"diurnal\":{\"amplitude\":0.5}}]}",
             head);
    sim_scenario *sc = th_load(json);
    const sim_class *c = &sc->classes[0], *d = &sc->classes[1];
    assert_same_dist(c->prompt_tokens, scn__dist_const(1000));
    assert_same_dist(c->completion_tokens, scn__dist_const(200));
    assert_same_dist(c->service_us, scn__dist_const(0));
    assert_same_dist(c->think_us, scn__dist_const(1e6));
    assert_same_dist(c->resubmit.think_us, scn__dist_const(5e6));
    assert_int_equal(c->resubmit.max, 3);
    assert_int_equal(c->source, SIM_SOURCE_SHARED);
    assert_int_equal(c->target, SIM_TARGET_LLM);
    assert_int_equal(d->diurnal_period_us, 86400 * S);
    assert_int_equal(d->diurnal_peak_us, 14 * 3600 * S);
    scn_free(sc);
}

/* Hedging, connections and a concurrency limit with only their required keys. */
static void tables_client_defaults(void **state) {
    (void)state;
    char json[1024];
    snprintf(json, sizeof json,
             "%s\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"poisson\":1}}],"
             "\"policy\":{\"hedging\":{},\"connections\":{\"max\":4},"
             "\"concurrency_limit\":{\"a\":{\"algorithm\":\"aimd\"},"
             "\"b\":{\"algorithm\":\"fixed\",\"limit\":3}}}}",
             head);
    sim_scenario *sc = th_load(json);
    const sim_layer *L = &sc->variants[0].layers[0];
    assert_int_equal(L->hedge.max_attempts, 2);
    assert_int_equal(L->hedge.delay_us, 2 * S);
    assert_int_equal(L->hedge.window, 100);
    assert_int_equal(L->hedge.cancel, FB_ON);
    assert_int_equal(L->pool.keepalive, UINT32_MAX);
    assert_same_dist(L->pool.setup_us, scn__dist_const(0));
    const fb_conclimit_config *a = &L->per_provider[0].conclimit,
                              *b = &L->per_provider[1].conclimit;
    assert_int_equal(a->initial_limit, 20);
    assert_int_equal(a->min_limit, 20);
    assert_int_equal(a->max_limit, 200);
    assert_int_equal(a->timeout_drops, FB_OFF);
    assert_int_equal(b->initial_limit, 3);
    assert_int_equal(b->min_limit, 0);
    assert_int_equal(b->max_limit, 0);
    scn_free(sc);
}

/* HPA's defaults, the table's, each direction's rules included (scale_up's and scale_down's rows);
 * a rule given keeps the others' defaults. */
static void tables_autoscale_defaults(void **state) {
    (void)state;
    char json[1024];
    snprintf(json, sizeof json,
             "%s\"traffic\":[{\"class\":\"c\",\"arrivals\":{\"poisson\":1}}],"
             "\"variants\":{\"v\":{\"autoscale\":{\"metric\":\"in_flight\",\"target\":4,"
             "\"max\":3}},\"w\":{},\"x\":{\"autoscale\":{\"metric\":\"in_flight\",\"target\":4,"
             "\"max\":3,\"scale_down\":{\"stabilization\":\"1m\"}}}}}",
             head);
    sim_scenario *sc = th_load(json);
    const sim_autoscale *a = &sc->variants[0].autoscale, *off = &sc->variants[1].autoscale;
    assert_true(a->on);
    assert_int_equal(a->min, 1);
    assert_int_equal(a->period_us, 15 * S);
    assert_int_equal(a->window_us, 15 * S);
    assert_true(a->tolerance == 0.1);
    assert_int_equal(a->up.stabilization_us, 0);
    assert_int_equal(a->up.pods, 4);
    assert_int_equal(a->up.percent, 100);
    assert_int_equal(a->up.period_us, 15 * S);
    assert_int_equal(a->up.select, SIM_SELECT_MAX);
    assert_int_equal(a->down.stabilization_us, 300 * S);
    assert_int_equal(a->down.pods, 0);
    assert_int_equal(a->down.percent, 100);
    assert_int_equal(a->down.period_us, 15 * S);
    assert_int_equal(a->down.select, SIM_SELECT_MAX);
    const sim_autoscale *x = &sc->variants[2].autoscale;
    assert_int_equal(x->down.stabilization_us, 60 * S);
    assert_int_equal(x->down.percent, 100);
    assert_int_equal(x->down.period_us, 15 * S);
    assert_int_equal(x->up.pods, 4);
    assert_false(off->on);
    assert_int_equal(off->min, 1);
    assert_int_equal(off->period_us, 15 * S);
    assert_int_equal(off->window_us, 0);
    scn_free(sc);
}

/* The parse context's error is sticky: the first is kept with its path, and later getters and
 * key checks store nothing and return it (a parser reads as a straight list of calls). */
static void tables_error_is_sticky(void **state) {
    (void)state;
    sim_error err;
    memset(&err, 0, sizeof err);
    pctx P = {&err, "", 0, false, NULL, NULL, FB_OK};
    cJSON *obj = cJSON_Parse("{\"a\": \"x\", \"b\": 7, \"c\": \"2s\", \"d\": true}");
    assert_non_null(obj);
    double a = 1, b = 1;
    fb_time_us c = 1;
    bool d = false;
    assert_int_equal(scn__get_number(&P, obj, "a", &a, 0, 10), FB_EINVAL);
    assert_string_equal(err.path, "a");
    assert_string_equal(err.msg, "expected a number, got a string");
    /* valid keys after the error: not read */
    assert_int_equal(scn__get_number(&P, obj, "b", &b, 0, 10), FB_EINVAL);
    assert_int_equal(scn__get_duration(&P, obj, "c", &c, false), FB_EINVAL);
    assert_int_equal(scn__get_bool(&P, obj, "d", &d), FB_EINVAL);
    assert_true(a == 1 && b == 1 && c == 1 && !d);
    assert_int_equal(scn__need_key(&P, obj, "zz"), FB_EINVAL);
    assert_int_equal(scn__fail(&P, "a second error"), FB_EINVAL);
    assert_string_equal(err.path, "a");
    assert_string_equal(err.msg, "expected a number, got a string");
    /* a callee's code (its own context, an allocation) is kept when it is the first */
    pctx Q = {&err, "", 0, false, NULL, NULL, FB_OK};
    assert_int_equal(scn__keep(&Q, FB_OK), FB_OK);
    assert_int_equal(scn__keep(&Q, FB_ENOMEM), FB_ENOMEM);
    assert_int_equal(scn__keep(&Q, FB_EINVAL), FB_ENOMEM);
    assert_int_equal(scn__get_number(&Q, obj, "b", &b, 0, 10), FB_ENOMEM);
    assert_true(b == 1);
    cJSON_Delete(obj);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tables_rows_are_well_formed),
        cmocka_unit_test(tables_stored_defaults_read),
        cmocka_unit_test(tables_class_defaults),
        cmocka_unit_test(tables_client_defaults),
        cmocka_unit_test(tables_autoscale_defaults),
        cmocka_unit_test(tables_error_is_sticky),
    };
    return cmocka_run_group_tests_name("load_tables", tests, NULL, NULL);
}
