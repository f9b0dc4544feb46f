/*
 * test_store.c - the shared store's pods side (sim/store.c) and a restarted
 * pod's connections (sim/conn.c), white-box: a sim built by hand with one
 * layer, one provider and two pods, so that each answer is pinned at an
 * explicit time. Whole runs of the same mechanisms are in test_fleet.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sim/fleetint.h"
#include "tests/unit/helpers.h"

/* A hand-built sim: what store.c and conn.c read of it, nothing more. */
typedef struct rig {
    sim s;
    sim_layer L;
    sim_summary sum;
    fleet f;
    fb_breaker stores[1];
    fb_breaker breakers[2];
    view views[2];
    connpool pools[2];
    fb_fallback_provider fp[2];
} rig;

/* The store's breaker and pod 1's local one: closed, 3 failures in a row open them 30 s. */
static fb_breaker_config plain_breaker(void) {
    return (fb_breaker_config){.consecutive_failures = 3, .open_us = 30 * S};
}

static rig *rig_new(sim_store_outage mode) {
    rig *r = calloc(1, sizeof *r);
    assert_non_null(r);
    sim *s = &r->s;
    s->P = 1;
    s->npods = 2;
    s->NL = 1;
    s->sum = &r->sum;
    s->fleet = &r->f;
    r->L.breaker_scope = SIM_SCOPE_SHARED;
    r->L.store_outage = mode;
    r->L.per_provider[0].has_breaker = true;
    s->lays[0].cfg = &r->L;
    s->stores = r->stores;
    s->breakers = r->breakers;
    s->views = r->views;
    fb_breaker_config bc = plain_breaker();
    assert_int_equal(fb_breaker_init(&r->stores[0], &bc, 0), FB_OK);
    for (uint32_t k = 0; k < 2; k++) {
        assert_int_equal(fb_breaker_init(&r->breakers[k], &bc, 0), FB_OK);
        assert_int_equal(sim__pod_breaker(s, 0, k, 0, &r->fp[k]), FB_OK);
    }
    return r;
}

/* Pod k's peek (view_admits) at t, checked against what its allow does then. */
static bool peek(rig *r, uint32_t k, fb_time_us t) {
    const fb_breaker_port *port = &r->fp[k].port;
    assert_non_null(port->admits);
    bool admits = port->admits(port->ctx, t);
    fb_breaker_permit permit;
    memset(&permit, 0, sizeof permit);
    bool allowed = port->allow(port->ctx, t, &permit);
    assert_true(admits == allowed); /* the peek answers as the call would */
    return admits;
}

/* Pod 0 last heard from the store: open until 30 s. Pod 1 heard it closed. */
static void views_open_and_closed(rig *r) {
    r->views[0].state = FB_BREAKER_OPEN;
    r->views[0].open_until_us = 30 * S;
}

static void store_up_follows_the_views(void **state) {
    (void)state;
    rig *r = rig_new(SIM_STORE_FAIL_OPEN);
    views_open_and_closed(r);
    assert_false(peek(r, 0, 15 * S));
    assert_true(peek(r, 1, 15 * S));
    assert_int_equal(r->sum.fleet.store_unreachable, 0);
    free(r);
}

static void fail_open_admits_even_an_open_view(void **state) {
    (void)state;
    rig *r = rig_new(SIM_STORE_FAIL_OPEN);
    views_open_and_closed(r);
    r->f.store_down = true;
    assert_true(peek(r, 0, 15 * S));
    assert_true(peek(r, 1, 15 * S));
    assert_int_equal(r->sum.fleet.store_unreachable, 2); /* the allows count, the peeks do not */
    free(r);
}

static void fail_closed_rejects_even_a_closed_view(void **state) {
    (void)state;
    rig *r = rig_new(SIM_STORE_FAIL_CLOSED);
    views_open_and_closed(r);
    r->f.store_down = true;
    assert_false(peek(r, 0, 15 * S));
    assert_false(peek(r, 1, 15 * S));
    assert_int_equal(r->sum.layers[0].breaker_rejections, 2);
    free(r);
}

static void local_keeps_an_open_view_then_asks_its_own_breaker(void **state) {
    (void)state;
    rig *r = rig_new(SIM_STORE_LOCAL);
    views_open_and_closed(r);
    r->f.store_down = true;
    /* pod 0: its view says open until 30 s, then its fresh local breaker admits */
    assert_false(peek(r, 0, 15 * S));
    assert_false(peek(r, 0, 30 * S - 1));
    assert_true(peek(r, 0, 30 * S));
    /* pod 1: its local breaker opened at 12 s until 42 s (its own failures) */
    assert_int_equal(fb_breaker_sync(&r->breakers[1], FB_BREAKER_OPEN, 42 * S, 12 * S), FB_OK);
    assert_false(peek(r, 1, 20 * S));
    assert_false(peek(r, 1, 42 * S - 1));
    /* a forced-open view is open whatever its deadline */
    r->views[0].state = FB_BREAKER_FORCED_OPEN;
    assert_false(peek(r, 0, 60 * S));
    free(r);
}

/* ---- a restarted pod's connections (sim__conns_pod_reset) ---- */

static void restart_drops_only_that_pods_idle_connections(void **state) {
    (void)state;
    rig *r = rig_new(SIM_STORE_FAIL_OPEN);
    sim *s = &r->s;
    sim__conns_pod_reset(s, 1); /* no layer has connections: nothing to do */
    s->pools = r->pools;
    /* pod 1 (slot 1): 5 open, 3 idle (2 to provider 0, 1 to provider 1), 2 busy */
    connpool *cp = &r->pools[1];
    cp->open = 5;
    cp->idle[0] = 2;
    cp->idle[1] = 1;
    cp->idle_total = 3;
    cp->busy[0] = 2;
    r->pools[0] = *cp;
    sim__conns_pod_reset(s, 1);
    assert_int_equal(cp->open, 2);
    assert_int_equal(cp->idle_total, 0);
    assert_int_equal(cp->idle[0], 0);
    assert_int_equal(cp->idle[1], 0);
    assert_int_equal(cp->busy[0], 2);
    /* pod 0's pool is untouched */
    assert_int_equal(r->pools[0].open, 5);
    assert_int_equal(r->pools[0].idle_total, 3);
    assert_int_equal(r->pools[0].idle[0], 2);
    free(r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(store_up_follows_the_views),
        cmocka_unit_test(fail_open_admits_even_an_open_view),
        cmocka_unit_test(fail_closed_rejects_even_a_closed_view),
        cmocka_unit_test(local_keeps_an_open_view_then_asks_its_own_breaker),
        cmocka_unit_test(restart_drops_only_that_pods_idle_connections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
