/*
 * latency.c - how long this answer takes: the configured constants, or a draw from the
 * scenario's distributions (scenario/dist.h). A draw is keyed by the request: with an
 * x-fusebox-key, by (seed, key, that key's attempt number), so a client's retries see the same
 * sequence whatever else arrives; without one, by (seed, attempt number since the reset).
 */
#include "mockserver/serverint.h"
#include "scenario/dist.h"

void mock_draw_latency(req *r, uint64_t attempt, const char *key) {
    mock_server *s = r->s;
    const mock_config *c = &s->cfg;
    r->ttft_tl_us = c->ttft_us;
    r->error_tl_us = c->error_latency_us;
    if (!c->has_ttft_dist && !c->has_error_latency_dist) return;
    uint64_t entity = attempt, n = 0;
    if (key != NULL) {
        entity = mock_fnv1a(mock_fnv1a(0x6c61746e63790000ull, key), "\nlatency");
        pthread_mutex_lock(&s->lock);
        n = (uint64_t)mock_count_locked(s, entity);
        pthread_mutex_unlock(&s->lock);
    }
    fb_rng rng;
    fb_rng_derive(&rng, c->seed ^ 0x4c4154454e4359ull, entity, n);
    /* Both are drawn, in this order, so that one distribution's draw never shifts the other. */
    fb_time_us ttft = scn_dist_draw_us(&rng, &c->ttft_dist);
    fb_time_us err = scn_dist_draw_us(&rng, &c->error_latency_dist);
    if (c->has_ttft_dist) r->ttft_tl_us = ttft;
    if (c->has_error_latency_dist) r->error_tl_us = err;
}
