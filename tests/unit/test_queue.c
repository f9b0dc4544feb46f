/* test_queue.c - the event queue: order, ties, lanes, the calendar against a reference, caps. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdlib.h>

#include "core/rng.h"
#include "sim/queue.h"
#include "tests/unit/helpers.h"

static void queue_pops_in_time_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100000), FB_OK);
    fb_rng rng;
    fb_rng_seed(&rng, 7, 1);
    for (uint32_t i = 0; i < 50000; i++)
        assert_int_equal(sim_queue_push(&q, (fb_time_us)fb_rng_below(&rng, 1000), 1, i, 0, 0),
                         FB_OK);
    sim_event ev, prev = {0};
    size_t n = 0;
    while (sim_queue_pop(&q, &ev)) {
        if (n > 0) {
            assert_true(ev.t >= prev.t);
            if (ev.t == prev.t) assert_true(ev.seq > prev.seq);
        }
        prev = ev;
        n++;
    }
    assert_int_equal(n, 50000);
    sim_queue_free(&q);
}

static void queue_ties_resolve_in_push_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 64), FB_OK);
    for (uint32_t i = 0; i < 20; i++) assert_int_equal(sim_queue_push(&q, 5, 1, i, 0, 0), FB_OK);
    sim_event ev;
    for (uint32_t i = 0; i < 20; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, i);
    }
    assert_false(sim_queue_pop(&q, &ev));
    sim_queue_free(&q);
}

/* A bucket of the ring drained into the run and sorted there (an insertion sort up to 32
 * events, qsort above): time order, ties in push order, either way. */
static void queue_drained_bucket_keeps_time_then_push_order(void **state) {
    (void)state;
    for (uint32_t count = 1; count <= 40; count++) {
        sim_queue q;
        assert_int_equal(sim_queue_init(&q, 1024), FB_OK);
        /* one bucket ahead of the clock (the run holds bucket 0): times 1000..1002, mixed */
        for (uint32_t i = 0; i < count; i++)
            assert_int_equal(sim_queue_push(&q, 1000 + (fb_time_us)((i * 7) % 3), 1, i, 0, 0),
                             FB_OK);
        sim_event ev, prev = {0};
        for (uint32_t k = 0; k < count; k++) {
            assert_true(sim_queue_pop(&q, &ev));
            if (k > 0) {
                assert_true(ev.t > prev.t || (ev.t == prev.t && ev.id > prev.id));
                assert_true(ev.t > prev.t || ev.seq > prev.seq);
            }
            prev = ev;
        }
        assert_false(sim_queue_pop(&q, &ev));
        sim_queue_free(&q);
    }
}

static void queue_lanes_merge_with_the_heap(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    assert_int_equal(sim_queue_push(&q, 10, 1, 100, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 5, 2, 200, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 10, 2, 201, 0, 0),
                     FB_OK); /* tie: pushed after 100 */
    assert_int_equal(sim_queue_push_lane(&q, 1, 7, 3, 300, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 1, 1, 101, 0, 0), FB_OK);
    uint32_t want[] = {101, 200, 300, 100, 201};
    sim_event ev;
    for (size_t i = 0; i < 5; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, want[i]);
    }
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
}

/* The outside lane: numbered when scheduled, held by the caller, its head merged in (time, seq). */
static void queue_outside_lane_merges_by_time_and_number(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    uint64_t s1 = 0, s2 = 0;
    assert_int_equal(sim_queue_push(&q, 10, 1, 100, 0, 0), FB_OK);
    assert_int_equal(sim_queue_outside_push(&q, &s1), FB_OK); /* due at 10, numbered after 100 */
    assert_int_equal(sim_queue_push_lane(&q, 0, 7, 3, 300, 0, 0), FB_OK);
    assert_int_equal(sim_queue_outside_push(&q, &s2), FB_OK);      /* due at 12 */
    assert_int_equal(sim_queue_push(&q, 12, 1, 101, 0, 0), FB_OK); /* numbered after s2 */
    assert_true(s2 > s1);
    assert_int_equal(sim_queue_len(&q), 5);
    assert_int_equal(q.pushed, 5);
    sim_event h1 = {10, s1, 500, 0, 4, 0}, h2 = {12, s2, 501, 0, 4, 0};
    sim_queue_outside_head(&q, 0, &h1);
    uint32_t want[] = {300, 100, 500, 501, 101};
    sim_event ev;
    for (size_t i = 0; i < 5; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, want[i]);
        if (ev.id == 500) sim_queue_outside_head(&q, 0, &h2); /* the caller names the next one */
        if (ev.id == 501) sim_queue_outside_head(&q, 0, NULL);
    }
    assert_false(sim_queue_pop(&q, &ev));
    /* one dropped unpopped: a later head replaces it, and it counts as cancelled */
    assert_int_equal(sim_queue_outside_push(&q, &s1), FB_OK);
    assert_int_equal(sim_queue_outside_push(&q, &s2), FB_OK);
    assert_int_equal(sim_queue_push(&q, 30, 1, 102, 0, 0), FB_OK);
    sim_event d1 = {20, s1, 600, 0, 4, 0}, d2 = {40, s2, 601, 0, 4, 0};
    sim_queue_outside_head(&q, 0, &d1);
    sim_queue_outside_head(&q, 0, &d2);
    sim_queue_outside_cancel(&q);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 102);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 601);
    sim_queue_outside_head(&q, 0, NULL);
    assert_false(sim_queue_pop(&q, &ev));
    assert_int_equal(q.cancelled, 1);
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
}

/* Outside lanes of one event each (a class's next arrival) and another lane's heads: the earliest
 * by (time, number) whichever lane or structure holds it; a tie goes to the one numbered first. */
static void queue_outside_lanes_merge_by_time_and_number(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    uint64_t s0 = 0;
    assert_int_equal(sim_queue_push_outside(&q, 2, 30, 1, 200, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 20, 2, 100, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_outside(&q, 1, 20, 1, 300, 0, 0), FB_OK); /* after 100 */
    assert_int_equal(sim_queue_outside_push(&q, &s0), FB_OK);
    sim_event d = {30, s0, 400, 0, 4, 0}; /* at 30 with 200, numbered after it */
    sim_queue_outside_head(&q, 0, &d);
    assert_int_equal(sim_queue_push(&q, 30, 2, 101, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 25, 3, 500, 0, 0), FB_OK);
    assert_int_equal(sim_queue_len(&q), 6);
    /* a lane with a head takes no other; a lane past the last, none */
    assert_int_equal(sim_queue_push_outside(&q, 1, 40, 1, 301, 0, 0), FB_EINVAL);
    assert_int_equal(sim_queue_push_outside(&q, SIM_OUTSIDE_MAX, 40, 1, 9, 0, 0), FB_EINVAL);
    uint32_t want[] = {100, 300, 500, 200, 400, 101, 301, 201};
    sim_event ev;
    for (size_t i = 0; i < 8; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, want[i]);
        /* each source names its next once its head popped: 301 at 35, 201 at 50 */
        if (ev.id == 300) assert_int_equal(sim_queue_push_outside(&q, 1, 35, 1, 301, 0, 0), FB_OK);
        if (ev.id == 200) assert_int_equal(sim_queue_push_outside(&q, 2, 50, 1, 201, 0, 0), FB_OK);
        if (ev.id == 400) sim_queue_outside_head(&q, 0, NULL);
    }
    assert_false(sim_queue_pop(&q, &ev));
    assert_int_equal(q.pushed, 8);
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
}

static void queue_outside_push_reports_the_cap(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 16), FB_OK);
    for (uint32_t i = 0; i < 16; i++) assert_int_equal(sim_queue_push(&q, i, 1, i, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_outside(&q, 3, 5, 1, 99, 0, 0), FB_ECAP);
    sim_event ev;
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(sim_queue_push_outside(&q, 3, 5, 1, 99, 0, 0), FB_OK);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 1);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 2);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 3);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 4);
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(ev.id, 5);
    assert_true(sim_queue_pop(&q, &ev)); /* at 5 too, numbered after 5 */
    assert_int_equal(ev.id, 99);
    sim_queue_free(&q);
}

static void queue_lane_rejects_out_of_order_push(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 50, 1, 1, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, 49, 1, 2, 0, 0), FB_EINVAL);
    assert_int_equal(sim_queue_push_lane(&q, SIM_LANES_MAX, 60, 1, 2, 0, 0), FB_EINVAL);
    sim_queue_free(&q);
}

static void queue_lane_ring_survives_wraparound_and_growth(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100000), FB_OK);
    fb_time_us t = 0;
    uint32_t next_out = 0, next_in = 0;
    sim_event ev;
    /* interleave pushes and pops so the ring wraps, then grows while wrapped */
    for (int round = 0; round < 200; round++) {
        for (int k = 0; k < round % 37 + 1; k++)
            assert_int_equal(sim_queue_push_lane(&q, 2, t++, 1, next_in++, 0, 0), FB_OK);
        for (int k = 0; k < round % 23; k++) {
            if (!sim_queue_pop(&q, &ev)) break;
            assert_int_equal(ev.id, next_out++);
        }
    }
    while (sim_queue_pop(&q, &ev)) assert_int_equal(ev.id, next_out++);
    assert_int_equal(next_out, next_in);
    sim_queue_free(&q);
}

static void queue_cap_is_a_reported_error(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 16), FB_OK);
    for (uint32_t i = 0; i < 10; i++) assert_int_equal(sim_queue_push(&q, i, 1, i, 0, 0), FB_OK);
    for (uint32_t i = 0; i < 6; i++)
        assert_int_equal(sim_queue_push_lane(&q, 0, 100 + i, 1, i, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 1, 1, 1, 0, 0), FB_ECAP);
    assert_int_equal(sim_queue_push_lane(&q, 0, 200, 1, 1, 0, 0), FB_ECAP);
    sim_event ev;
    assert_true(sim_queue_pop(&q, &ev));
    assert_int_equal(sim_queue_push(&q, 1, 1, 1, 0, 0), FB_OK);
    sim_queue_free(&q);
    assert_int_equal(sim_queue_init(&q, 3), FB_EINVAL);
}

/* ---- the calendar against a reference: a plain list scanned for its (time, sequence) minimum ----
 */

#define REF_MAX 4096

typedef struct ref_q {
    sim_event v[REF_MAX];
    size_t n;
    uint64_t seq;
} ref_q;

static void ref_push(ref_q *r, fb_time_us t, uint32_t id) {
    assert_true(r->n < REF_MAX);
    r->v[r->n++] = (sim_event){t, r->seq++, id, 0, 1, 0};
}

static bool ref_pop(ref_q *r, sim_event *out) {
    if (r->n == 0) return false;
    size_t best = 0;
    for (size_t i = 1; i < r->n; i++)
        if (r->v[i].t < r->v[best].t || (r->v[i].t == r->v[best].t && r->v[i].seq < r->v[best].seq))
            best = i;
    *out = r->v[best];
    r->v[best] = r->v[--r->n];
    return true;
}

/* A delay from each range the calendar treats apart: ties, within a bucket, within the
 * horizon, around its edge, beyond it (the heap) and far beyond (a jump). */
static fb_time_us some_delay(fb_rng *rng) {
    switch (fb_rng_below(rng, 6)) {
    case 0:
        return 0;
    case 1:
        return (fb_time_us)fb_rng_below(rng, 1u << SIM_CAL_SHIFT);
    case 2:
        return (fb_time_us)fb_rng_below(rng, 3000000);
    case 3:
        return ((fb_time_us)SIM_CAL_BUCKETS << SIM_CAL_SHIFT) - 2000000 +
               (fb_time_us)fb_rng_below(rng, 4000000);
    case 4:
        return (fb_time_us)fb_rng_below(rng, 40000000);
    default:
        return (fb_time_us)fb_rng_below(rng, 1u << 31); /* up to 36 minutes */
    }
}

/* Push a few events at now + some delays, and now and then one on a lane of fixed delay. */
static void push_some(sim_queue *q, ref_q *r, fb_rng *rng, fb_time_us now, uint32_t *id) {
    uint32_t pushes = r->n < 50 ? 3 : r->n > 3000 ? 0 : (uint32_t)fb_rng_below(rng, 3);
    for (uint32_t k = 0; k < pushes; k++, (*id)++) {
        fb_time_us t = now + 5 * S;
        if (fb_rng_below(rng, 8) == 0) {
            assert_int_equal(sim_queue_push_lane(q, 1, t, 1, *id, 0, 0), FB_OK);
        } else {
            t = now + some_delay(rng);
            assert_int_equal(sim_queue_push(q, t, 1, *id, 0, 0), FB_OK);
        }
        ref_push(r, t, *id);
    }
}

/* The calendar's pops against the reference, with the buckets a scenario of that many arrivals a
 * second gets (sim_queue_init_rate: 0 is the default width, 50 the widest). */
static void calendar_pops_exactly_as_a_reference(double arrivals_per_s, int ops) {
    sim_queue q;
    ref_q *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(sim_queue_init_rate(&q, 100000, arrivals_per_s), FB_OK);
    fb_rng rng;
    fb_rng_seed(&rng, 11, 3);
    fb_time_us now = 0;
    uint32_t id = 0;
    sim_event got, want;
    for (int op = 0; op < ops; op++) {
        push_some(&q, r, &rng, now, &id);
        if (op % 7 == 0) {
            /* a peek (the port's clock) and then a push before what it saw */
            if (!sim_queue_peek(&q, &got)) continue;
            fb_time_us t = now + (got.t - now) / 2;
            assert_int_equal(sim_queue_push(&q, t, 1, id, 0, 0), FB_OK);
            ref_push(r, t, id++);
        }
        assert_true(sim_queue_pop(&q, &got));
        assert_true(ref_pop(r, &want));
        assert_int_equal(got.t, want.t);
        assert_int_equal(got.id, want.id);
        assert_int_equal(got.seq, want.seq);
        now = got.t;
    }
    while (ref_pop(r, &want)) {
        assert_true(sim_queue_pop(&q, &got));
        assert_int_equal(got.id, want.id);
    }
    assert_false(sim_queue_pop(&q, &got));
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
    free(r);
}

static void queue_calendar_pops_exactly_as_a_reference(void **state) {
    (void)state;
    calendar_pops_exactly_as_a_reference(0, 200000);
}

/* 256 us from 500 arrivals a second up (or none known), twice as wide per halving below, at most
 * 16 times: the horizon stays SIM_CAL_BUCKETS << SIM_CAL_SHIFT. */
static void queue_bucket_width_follows_the_rate(void **state) {
    (void)state;
    static const struct {
        double rate;
        unsigned shift;
    } cases[] = {{0, 8},    {5000, 8},  {500, 8},   {499, 9}, {300, 9}, {200, 10},
                 {100, 11}, {62.6, 11}, {62.4, 12}, {50, 12}, {0.5, 12}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_queue q;
        assert_int_equal(sim_queue_init_rate(&q, 1000, cases[i].rate), FB_OK);
        assert_int_equal(q.shift, cases[i].shift);
        assert_int_equal((q.mask + 1) << q.shift, (size_t)SIM_CAL_BUCKETS << SIM_CAL_SHIFT);
        sim_queue_free(&q);
    }
}

static void queue_wider_buckets_pop_exactly_as_a_reference(void **state) {
    (void)state;
    calendar_pops_exactly_as_a_reference(300, 50000); /* 512 us */
    calendar_pops_exactly_as_a_reference(50, 50000);  /* 4 ms */
}

/*
 * Sources of one pending event each, on outside lanes (a class's arrivals:
 * the next one scheduled when the last pops), among calendar events whose
 * density changes by a factor of 1,000 (the refill's span adapts to it): the
 * pops match the reference exactly.
 */
static void sources_pop_exactly_as_a_reference(double arrivals_per_s, int ops) {
    enum { SOURCES = 3 };
    sim_queue q;
    ref_q *r = calloc(1, sizeof *r);
    assert_non_null(r);
    assert_int_equal(sim_queue_init_rate(&q, 100000, arrivals_per_s), FB_OK);
    fb_rng rng;
    fb_rng_seed(&rng, 12, 5);
    uint32_t id = 0;
    for (unsigned k = 0; k < SOURCES; k++) {
        fb_time_us t = (fb_time_us)fb_rng_below(&rng, 5000);
        assert_int_equal(sim_queue_push_outside(&q, k + 1, t, 7, k, 0, 0), FB_OK);
        ref_push(r, t, k);
    }
    id = SOURCES;
    sim_event got, want;
    for (int op = 0; op < ops; op++) {
        assert_true(sim_queue_pop(&q, &got));
        assert_true(ref_pop(r, &want));
        assert_int_equal(got.t, want.t);
        assert_int_equal(got.id, want.id);
        assert_int_equal(got.seq, want.seq);
        fb_time_us now = got.t;
        /* phases of 20,000 pops: gaps of up to 20 us (dense), then up to 20 ms (sparse) */
        uint32_t gap_max = (op / 20000) % 2 == 0 ? 20 : 20000;
        if (got.id < SOURCES) {
            fb_time_us t = now + (fb_time_us)fb_rng_below(&rng, gap_max * 4);
            assert_int_equal(sim_queue_push_outside(&q, got.id + 1, t, 7, got.id, 0, 0), FB_OK);
            ref_push(r, t, got.id);
        }
        for (uint32_t k = r->n < 40 ? 2 : (uint32_t)fb_rng_below(&rng, 2); k > 0; k--, id++) {
            fb_time_us t = now + (fb_time_us)fb_rng_below(&rng, gap_max * (1 + k % 2 * 200));
            assert_int_equal(sim_queue_push(&q, t, 1, id, 0, 0), FB_OK);
            ref_push(r, t, id);
        }
    }
    while (ref_pop(r, &want)) {
        assert_true(sim_queue_pop(&q, &got));
        assert_int_equal(got.id, want.id);
        if (got.id < SOURCES) sim_queue_outside_head(&q, got.id + 1, NULL);
    }
    assert_false(sim_queue_pop(&q, &got));
    assert_int_equal(sim_queue_len(&q), 0);
    sim_queue_free(&q);
    free(r);
}

static void queue_sources_pop_exactly_as_a_reference(void **state) {
    (void)state;
    sources_pop_exactly_as_a_reference(0, 200000);
}

static void queue_sources_pop_exactly_with_wider_buckets(void **state) {
    (void)state;
    sources_pop_exactly_as_a_reference(50, 80000);
}

/* Events at the end of time: the calendar's last bucket is reached through the heap, and a push
 * into it after a pop still goes before what is later. */
static void queue_last_bucket_keeps_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 100), FB_OK);
    sim_event e;
    assert_int_equal(sim_queue_push(&q, INT64_MAX - 5, 1, 1, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, INT64_MAX - 1, 1, 2, 0, 0), FB_OK);
    assert_true(sim_queue_pop(&q, &e));
    assert_int_equal(e.id, 1);
    assert_int_equal(sim_queue_push(&q, INT64_MAX - 3, 1, 3, 0, 0), FB_OK);
    assert_true(sim_queue_pop(&q, &e));
    assert_int_equal(e.id, 3);
    assert_true(sim_queue_pop(&q, &e));
    assert_int_equal(e.id, 2);
    assert_false(sim_queue_pop(&q, &e));
    sim_queue_free(&q);
}

/* Ties at one microsecond resolve in push order whichever structure each event went to. */
static void queue_ties_across_run_ring_and_heap(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    fb_time_us far = 3600 * S; /* beyond the horizon: the heap */
    assert_int_equal(sim_queue_push(&q, far, 1, 0, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, far, 1, 1, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, far, 1, 2, 0, 0), FB_OK);
    sim_event ev;
    assert_true(sim_queue_pop(&q, &ev)); /* the clock jumps to the hour */
    assert_int_equal(ev.id, 0);
    /* now at the hour: a push at the same time goes into the run, after the ones before it */
    assert_int_equal(sim_queue_push(&q, far, 1, 3, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, far + 1, 1, 4, 0, 0), FB_OK);      /* same bucket */
    assert_int_equal(sim_queue_push(&q, far + 10 * S, 1, 5, 0, 0), FB_OK); /* the ring */
    assert_int_equal(sim_queue_push(&q, far, 1, 6, 0, 0), FB_OK);
    /* a bucket of the ring that starts exactly at a lane's head: the ring's event was first */
    fb_time_us edge = far + ((fb_time_us)3 << SIM_CAL_SHIFT);
    assert_int_equal(sim_queue_push(&q, edge, 1, 7, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push_lane(&q, 0, edge, 1, 8, 0, 0), FB_OK);
    uint32_t want[] = {1, 2, 3, 6, 4, 7, 8, 5};
    for (size_t i = 0; i < 8; i++) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, want[i]);
    }
    assert_false(sim_queue_pop(&q, &ev));
    sim_queue_free(&q);
}

static bool keep_even(void *ctx, const sim_event *ev) {
    (void)ctx;
    return ev->id % 2 == 0;
}

/* Compaction drops what keep() refuses, keeps the rest in order, and counts it. */
static void queue_lane_compaction_keeps_order(void **state) {
    (void)state;
    sim_queue q;
    assert_int_equal(sim_queue_init(&q, 1000), FB_OK);
    sim_event ev;
    /* wrap the ring first: 40 pushed, 30 popped, then 40 more */
    for (uint32_t i = 0; i < 40; i++)
        assert_int_equal(sim_queue_push_lane(&q, 0, 100 + i, 1, i, 0, 0), FB_OK);
    for (uint32_t i = 0; i < 30; i++) assert_true(sim_queue_pop(&q, &ev));
    for (uint32_t i = 40; i < 80; i++)
        assert_int_equal(sim_queue_push_lane(&q, 0, 100 + i, 1, i, 0, 0), FB_OK);
    assert_int_equal(sim_queue_push(&q, 150, 1, 1001, 0, 0), FB_OK);
    assert_int_equal(sim_queue_lane_len(&q, 0), 50);
    assert_int_equal(sim_queue_compact_lane(&q, 0, keep_even, NULL), 25);
    assert_int_equal(q.cancelled, 25);
    assert_int_equal(sim_queue_len(&q), 26);
    /* 30, 32, ..., 48, then 1001 at t=150 (pushed after 50 at t=150), then 52, ..., 78 */
    for (uint32_t i = 30; i <= 78; i += 2) {
        assert_true(sim_queue_pop(&q, &ev));
        assert_int_equal(ev.id, i);
        if (i == 50) {
            assert_true(sim_queue_pop(&q, &ev));
            assert_int_equal(ev.id, 1001);
        }
    }
    assert_false(sim_queue_pop(&q, &ev));
    assert_int_equal(q.pushed, 81);
    sim_queue_free(&q);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queue_pops_in_time_order),
        cmocka_unit_test(queue_ties_resolve_in_push_order),
        cmocka_unit_test(queue_drained_bucket_keeps_time_then_push_order),
        cmocka_unit_test(queue_lanes_merge_with_the_heap),
        cmocka_unit_test(queue_outside_lane_merges_by_time_and_number),
        cmocka_unit_test(queue_outside_lanes_merge_by_time_and_number),
        cmocka_unit_test(queue_outside_push_reports_the_cap),
        cmocka_unit_test(queue_lane_rejects_out_of_order_push),
        cmocka_unit_test(queue_lane_ring_survives_wraparound_and_growth),
        cmocka_unit_test(queue_cap_is_a_reported_error),
        cmocka_unit_test(queue_calendar_pops_exactly_as_a_reference),
        cmocka_unit_test(queue_bucket_width_follows_the_rate),
        cmocka_unit_test(queue_wider_buckets_pop_exactly_as_a_reference),
        cmocka_unit_test(queue_sources_pop_exactly_as_a_reference),
        cmocka_unit_test(queue_sources_pop_exactly_with_wider_buckets),
        cmocka_unit_test(queue_ties_across_run_ring_and_heap),
        cmocka_unit_test(queue_last_bucket_keeps_order),
        cmocka_unit_test(queue_lane_compaction_keeps_order),
    };
    return cmocka_run_group_tests_name("queue", tests, NULL, NULL);
}
