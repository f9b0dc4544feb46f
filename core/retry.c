/*
 * retry.c - when to try again, and how long to wait first.
 *
 * fb_retry_next() is a pure decision over (policy, per-request state, the
 * failure's class, the server's hint, budget, rng, now). Every check that can
 * refuse a retry runs before anything is charged, except the budget's own
 * failure accounting, which gRPC defines per failure, not per retry.
 */
#include "retry.h"

/* Growth beyond cap * 2^54 cannot change a jittered-then-capped result (see raw_backoff). */
#define JITTER_CEILING 18014398509481984.0 /* 2^54 */

static bool valid_double(double x) {
    return x == x && x < 1e300 && x > -1e300;
}

int fb_retry_policy_init(fb_retry_policy *p, const fb_retry_config *cfg) {
    static const fb_retry_config defaults = {0};
    if (p == NULL) return FB_EINVAL;
    if (cfg == NULL) cfg = &defaults;
    fb_retry_config c = *cfg;

    if (c.attempts == 0) c.attempts = 3;
    if (c.attempts > FB_RETRY_ATTEMPTS_MAX) return FB_ERANGE;
    if ((unsigned)c.backoff > FB_BACKOFF_NONE || (unsigned)c.jitter > FB_JITTER_PROPORTIONAL ||
        (unsigned)c.cap_order > FB_CAP_AFTER_JITTER ||
        (unsigned)c.retry_after > FB_RETRY_AFTER_AS_IS || (unsigned)c.giveup_above_max > FB_OFF)
        return FB_EINVAL;
    if (c.base_us < 0 || c.delay_us_max < 0 || c.retry_after_us_max < 0 ||
        c.attempt_timeout_us < 0 || c.deadline_us < 0)
        return FB_EINVAL;
    if (!valid_double(c.multiplier) || !valid_double(c.jitter_fraction) ||
        !valid_double(c.retry_after_jitter))
        return FB_EINVAL;
    if (c.retry_after_jitter < 0.0 || c.retry_after_jitter > 10.0) return FB_ERANGE;
    if (c.base_us == 0) c.base_us = 500 * FB_US_PER_MS;
    if (c.multiplier == 0.0) c.multiplier = 2.0;
    if (c.multiplier < 1.0) return FB_ERANGE; /* a shrinking backoff is not a backoff */
    if (c.delay_us_max == 0) c.delay_us_max = 60 * FB_US_PER_S;
    if (c.jitter_fraction == 0.0) c.jitter_fraction = 0.25;
    if (c.jitter_fraction < 0.0 || c.jitter_fraction > 1.0) return FB_ERANGE;
    if (c.retry_after_us_max == 0) c.retry_after_us_max = 60 * FB_US_PER_S;
    if (c.giveup_above_max == FB_DEFAULT) c.giveup_above_max = FB_OFF;

    p->cfg = c;
    /*
     * The retry number from which the exponential backoff is the cap, found
     * with the same multiplications fb_retry_backoff() does, so that calls
     * past it cost nothing and calls before it never loop past it.
     */
    double cap = (double)c.delay_us_max, d = (double)c.base_us;
    uint32_t n = 1;
    if (c.multiplier > 1.0) {
        while (d < cap && n < FB_RETRY_ATTEMPTS_MAX) {
            d *= c.multiplier;
            n++;
        }
    }
    p->cap_retry = d >= cap ? n : UINT32_MAX;
    return FB_OK;
}

void fb_retry_begin(fb_retry_state *s, fb_time_us now_us) {
    *s = (fb_retry_state){.start_us = now_us};
}

void fb_retry_attempt(fb_retry_state *s, fb_time_us now_us) {
    if (s->attempt == 0) s->start_us = now_us;
    if (s->attempt < UINT32_MAX) s->attempt++;
}

/* base * multiplier^(n-1), multiplying one step at a time and stopping at `limit`. */
static double grow(const fb_retry_config *c, uint32_t n, double limit) {
    double d = (double)c->base_us;
    for (uint32_t k = 1; k < n && d < limit; k++) d *= c->multiplier;
    return d;
}

fb_time_us fb_retry_backoff(const fb_retry_policy *p, uint32_t n) {
    const fb_retry_config *c = &p->cfg;
    fb_time_us cap = c->delay_us_max;
    if (n == 0) n = 1;
    if (n > FB_RETRY_ATTEMPTS_MAX) n = FB_RETRY_ATTEMPTS_MAX;
    switch (c->backoff) {
    case FB_BACKOFF_NONE:
        return 0;
    case FB_BACKOFF_CONSTANT:
        return c->base_us < cap ? c->base_us : cap;
    case FB_BACKOFF_LINEAR:
        return c->base_us > cap / (fb_time_us)n ? cap : c->base_us * (fb_time_us)n;
    case FB_BACKOFF_EXPONENTIAL:
    default:
        if (n >= p->cap_retry) return cap;
        double d = grow(c, n, (double)cap);
        return d >= (double)cap ? cap : (fb_time_us)d;
    }
}

/*
 * The uncapped backoff, for FB_CAP_AFTER_JITTER. It stops growing at
 * cap * 2^54: a uniform draw with 53 bits is either 0 or at least 2^-53, so
 * past that point every jitter gives 0 or a value above twice the cap, the
 * same as with the true (possibly infinite) value once clamped.
 */
static double raw_backoff(const fb_retry_policy *p, uint32_t n) {
    const fb_retry_config *c = &p->cfg;
    if (n > FB_RETRY_ATTEMPTS_MAX) n = FB_RETRY_ATTEMPTS_MAX;
    switch (c->backoff) {
    case FB_BACKOFF_NONE:
        return 0.0;
    case FB_BACKOFF_CONSTANT:
        return (double)c->base_us;
    case FB_BACKOFF_LINEAR:
        return (double)c->base_us * (double)n;
    case FB_BACKOFF_EXPONENTIAL:
    default:
        return grow(c, n, (double)c->delay_us_max * JITTER_CEILING);
    }
}

static fb_time_us clamp_to(double v, fb_time_us cap) {
    if (v >= (double)cap) return cap;
    return v > 0.0 ? (fb_time_us)v : 0;
}

/* Backoff and jitter for retry number n; draws at most one uniform number. */
static fb_time_us jittered_delay(const fb_retry_policy *p, const fb_retry_state *s, uint32_t n,
                                 fb_rng *rng) {
    const fb_retry_config *c = &p->cfg;
    fb_time_us cap = c->delay_us_max;
    if (c->backoff == FB_BACKOFF_NONE) return 0;
    fb_jitter j = rng != NULL ? c->jitter : FB_JITTER_NONE;
    if (j == FB_JITTER_NONE) return fb_retry_backoff(p, n);

    double u = fb_rng_uniform(rng);
    if (j == FB_JITTER_DECORRELATED) {
        /* Its own schedule: grows from the last returned delay, not from n. */
        double lo = (double)c->base_us;
        double prev = s->prev_delay_us > 0 ? (double)s->prev_delay_us : lo;
        double hi = 3.0 * prev > lo ? 3.0 * prev : lo;
        return clamp_to(lo + u * (hi - lo), cap);
    }

    bool before = c->cap_order == FB_CAP_BEFORE_JITTER;
    double d = before ? (double)fb_retry_backoff(p, n) : raw_backoff(p, n);
    double v;
    switch (j) {
    case FB_JITTER_FULL:
        v = u * d;
        break;
    case FB_JITTER_EQUAL:
        v = d / 2.0 + u * (d / 2.0);
        break;
    case FB_JITTER_PROPORTIONAL:
    default: {
        double lo = d * (1.0 - c->jitter_fraction), hi = d * (1.0 + c->jitter_fraction);
        if (before && hi > (double)cap) hi = (double)cap; /* draw inside the cap, no pile-up */
        if (lo > hi) lo = hi;
        v = lo + u * (hi - lo);
        break;
    }
    }
    return clamp_to(v, cap);
}

static uint32_t quota_cost(const fb_budget *b, fb_outcome o) {
    return o == FB_OUT_TIMEOUT ? b->cfg.timeout_cost : b->cfg.retry_cost;
}

static fb_retry_decision give_up(fb_giveup why) {
    return (fb_retry_decision){.retry = false, .delay_us = 0, .reason = why};
}

fb_retry_decision fb_retry_next(const fb_retry_policy *p, fb_retry_state *s, const fb_class *c,
                                fb_time_us hint_us, fb_budget *budget, fb_rng *rng,
                                fb_time_us now_us) {
    const fb_retry_config *cfg = &p->cfg;
    if (c == NULL || !c->retryable) return give_up(FB_GIVEUP_NOT_RETRYABLE);
    if (budget != NULL) fb_budget_on_failure(budget, c->outcome);

    uint32_t n = s->attempt > 0 ? s->attempt : 1; /* the retry about to be decided */
    if (n >= cfg->attempts) return give_up(FB_GIVEUP_ATTEMPTS);

    fb_time_us delay = jittered_delay(p, s, n, rng);
    if (cfg->retry_after != FB_RETRY_AFTER_IGNORE && hint_us >= 0) {
        fb_time_us h = hint_us;
        if (h > cfg->retry_after_us_max) {
            if (cfg->giveup_above_max == FB_ON) return give_up(FB_GIVEUP_RETRY_AFTER_CAP);
            h = cfg->retry_after_us_max;
        }
        if (cfg->retry_after == FB_RETRY_AFTER_AS_IS || h > delay) {
            delay = h;
            /* upward only (Envoy): nobody comes back before the server asked, and
             * clients told the same Retry-After no longer return together */
            if (cfg->retry_after_jitter > 0.0 && rng != NULL)
                delay = fb_time_add(
                    h, (fb_time_us)((double)h * cfg->retry_after_jitter * fb_rng_uniform(rng)));
        }
    }

    /* An attempt starting exactly at the deadline could not finish before it. */
    if (cfg->deadline_us > 0 &&
        fb_time_add(now_us, delay) >= fb_time_add(s->start_us, cfg->deadline_us))
        return give_up(FB_GIVEUP_DEADLINE);

    /* Last, so that a retry refused for another reason is never charged. */
    if (budget != NULL) {
        if (!fb_budget_withdraw(budget, c->outcome)) return give_up(FB_GIVEUP_BUDGET);
        if (budget->cfg.kind == FB_BUDGET_QUOTA)
            s->budget_withdrawn = quota_cost(budget, c->outcome);
    }
    s->prev_delay_us = delay;
    return (fb_retry_decision){.retry = true, .delay_us = delay, .reason = FB_GIVEUP_NONE};
}

/* ---- budgets ---------------------------------------------------------------------------- */

/* Token counts are kept to 3 decimals (gRPC): exact integer arithmetic in milli-tokens. */
static int64_t milli(double x) {
    return (int64_t)(x * 1000.0 + 0.5);
}

int fb_budget_init(fb_budget *b, const fb_budget_config *cfg) {
    static const fb_budget_config defaults = {0};
    if (b == NULL) return FB_EINVAL;
    if (cfg == NULL) cfg = &defaults;
    fb_budget_config c = *cfg;
    if ((unsigned)c.kind > FB_BUDGET_QUOTA) return FB_EINVAL;
    if (!valid_double(c.max_tokens) || !valid_double(c.ratio)) return FB_EINVAL;
    if (c.max_tokens == 0.0) c.max_tokens = 10.0;
    if (c.ratio == 0.0) c.ratio = 0.1;
    if (c.kind == FB_BUDGET_TOKEN_BUCKET) {
        /* gRPC A6: 0 < maxTokens <= 1000, tokenRatio > 0 with 3 decimals. */
        if (c.max_tokens < 0.0 || c.max_tokens > 1000.0 || milli(c.max_tokens) == 0)
            return FB_ERANGE;
        if (c.ratio < 0.0 || c.ratio > 1000.0 || milli(c.ratio) == 0) return FB_ERANGE;
    }
    if (c.capacity == 0) c.capacity = 500;
    if (c.retry_cost == 0) c.retry_cost = 5;
    if (c.timeout_cost == 0) c.timeout_cost = 10;
    if (c.no_retry_refund == 0) c.no_retry_refund = 1;

    *b = (fb_budget){.cfg = c};
    b->tokens = (double)milli(c.max_tokens) / 1000.0;
    b->available = c.capacity;
    return FB_OK;
}

bool fb_budget_withdraw(fb_budget *b, fb_outcome o) {
    bool ok = true;
    switch (b->cfg.kind) {
    case FB_BUDGET_TOKEN_BUCKET:
        /* Strictly more than half (gRPC): at exactly half, retries stop. */
        ok = 2 * milli(b->tokens) > milli(b->cfg.max_tokens);
        break;
    case FB_BUDGET_QUOTA: {
        uint32_t cost = quota_cost(b, o);
        ok = b->available >= (int64_t)cost;
        if (ok) b->available -= cost;
        break;
    }
    case FB_BUDGET_NONE:
    default:
        break;
    }
    if (ok)
        b->allowed++;
    else
        b->refused++;
    return ok;
}

void fb_budget_on_success(fb_budget *b, const fb_retry_state *s) {
    switch (b->cfg.kind) {
    case FB_BUDGET_TOKEN_BUCKET: {
        int64_t k = milli(b->tokens) + milli(b->cfg.ratio), max = milli(b->cfg.max_tokens);
        b->tokens = (double)(k < max ? k : max) / 1000.0;
        break;
    }
    case FB_BUDGET_QUOTA: {
        /* Refills with every success, so a drained quota always recovers (aws-sdk-go-v2#3550). */
        uint32_t refund =
            s != NULL && s->budget_withdrawn > 0 ? s->budget_withdrawn : b->cfg.no_retry_refund;
        int64_t a = b->available + refund;
        b->available = a < (int64_t)b->cfg.capacity ? a : (int64_t)b->cfg.capacity;
        break;
    }
    case FB_BUDGET_NONE:
    default:
        break;
    }
}

void fb_budget_on_failure(fb_budget *b, fb_outcome o) {
    if (b->cfg.kind != FB_BUDGET_TOKEN_BUCKET) return;
    if (o == FB_OUT_SUCCESS || o == FB_OUT_CANCELLED) return;
    int64_t k = milli(b->tokens) - 1000;
    b->tokens = (double)(k > 0 ? k : 0) / 1000.0;
}

/* ---- Retry-After ------------------------------------------------------------------------ */

typedef struct cursor {
    const char *p, *end;
} cursor;

static cursor trimmed(const char *value) {
    cursor c = {value, value};
    while (*c.end != '\0') c.end++;
    while (c.p < c.end && (*c.p == ' ' || *c.p == '\t')) c.p++;
    while (c.end > c.p && (c.end[-1] == ' ' || c.end[-1] == '\t')) c.end--;
    return c;
}

static bool is_digit(char ch) {
    return ch >= '0' && ch <= '9';
}

/*
 * A non-negative decimal "123" or "123.45" scaled to an integer count of
 * 1/scale units (digits past the unit are dropped). The whole cursor must be
 * the number; no sign, no exponent. Overflow of int64 is a parse error.
 */
static int parse_decimal(cursor c, int frac_digits, int64_t *out) {
    int64_t scale = 1;
    for (int i = 0; i < frac_digits; i++) scale *= 10;
    const int64_t ip_max = INT64_MAX / scale;
    int64_t ip = 0, frac = 0;
    const char *p = c.p;
    if (p == c.end || !is_digit(*p)) return FB_EPARSE;
    for (; p < c.end && is_digit(*p); p++) {
        ip = ip * 10 + (*p - '0');
        if (ip > ip_max) return FB_EPARSE;
    }
    if (p < c.end && *p == '.') {
        p++;
        if (p == c.end || !is_digit(*p)) return FB_EPARSE;
        int64_t unit = scale;
        for (; p < c.end && is_digit(*p); p++) {
            unit /= 10;
            frac += (*p - '0') * unit;
        }
    }
    if (p != c.end) return FB_EPARSE;
    if (ip > (INT64_MAX - frac) / scale) return FB_EPARSE;
    *out = ip * scale + frac;
    return FB_OK;
}

int fb_retry_after_parse_ms(const char *value, fb_time_us *delay_us) {
    if (value == NULL || delay_us == NULL) return FB_EINVAL;
    return parse_decimal(trimmed(value), 3, delay_us);
}

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The Gregorian year containing day `z` since 1970-01-01 (civil_from_days). */
static int64_t year_of_day(int64_t z) {
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    return yoe + era * 400 + (mp >= 10);
}

static bool leap(int64_t y) {
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int64_t days_in_month(int64_t y, int64_t m) {
    static const int8_t days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && leap(y) ? 29 : days[m - 1];
}

static bool take(cursor *c, const char *lit) {
    const char *p = c->p;
    for (; *lit != '\0'; lit++, p++)
        if (p == c->end || *p != *lit) return false;
    c->p = p;
    return true;
}

static bool take_digits(cursor *c, int count, int64_t *out) {
    int64_t v = 0;
    for (int i = 0; i < count; i++) {
        if (c->p == c->end || !is_digit(*c->p)) return false;
        v = v * 10 + (*c->p++ - '0');
    }
    *out = v;
    return true;
}

/* Index 0..6 of a day name, short ("Sun") or long ("Sunday"); -1 when neither. */
static int take_day(cursor *c, bool long_form) {
    static const char *const names[7][2] = {
        {"Mon", "Monday"}, {"Tue", "Tuesday"},  {"Wed", "Wednesday"}, {"Thu", "Thursday"},
        {"Fri", "Friday"}, {"Sat", "Saturday"}, {"Sun", "Sunday"},
    };
    for (int i = 0; i < 7; i++)
        if (take(c, names[i][long_form])) return i;
    return -1;
}

static bool take_month(cursor *c, int64_t *month) {
    static const char *const names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    for (int i = 0; i < 12; i++) {
        if (take(c, names[i])) {
            *month = i + 1;
            return true;
        }
    }
    return false;
}

static bool take_time(cursor *c, int64_t *h, int64_t *mi, int64_t *s) {
    return take_digits(c, 2, h) && take(c, ":") && take_digits(c, 2, mi) && take(c, ":") &&
           take_digits(c, 2, s);
}

/*
 * An HTTP-date (RFC 9110 section 5.6.7) as seconds since 1970. The three
 * forms are told apart by what follows the day name: ", dd " (IMF-fixdate),
 * ", dd-" (RFC 850) or " " (asctime). Names are case-sensitive, as the RFC says.
 */
static int parse_http_date(cursor c, int64_t now_unix_us, int64_t *unix_s) {
    int64_t y = 0, m = 0, d = 0, h = 0, mi = 0, s = 0;
    cursor imf = c, rfc850 = c, asc = c;
    if (take_day(&imf, false) >= 0 && take(&imf, ", ")) {
        /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
        c = imf;
        if (!(take_digits(&c, 2, &d) && take(&c, " ") && take_month(&c, &m) && take(&c, " ") &&
              take_digits(&c, 4, &y) && take(&c, " ") && take_time(&c, &h, &mi, &s) &&
              take(&c, " GMT")))
            return FB_EPARSE;
    } else if (take_day(&rfc850, true) >= 0 && take(&rfc850, ", ")) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
        c = rfc850;
        int64_t yy = 0;
        if (!(take_digits(&c, 2, &d) && take(&c, "-") && take_month(&c, &m) && take(&c, "-") &&
              take_digits(&c, 2, &yy) && take(&c, " ") && take_time(&c, &h, &mi, &s) &&
              take(&c, " GMT")))
            return FB_EPARSE;
        /* The latest year ending in yy that is not more than 50 years ahead (RFC 9110). */
        int64_t now_day = now_unix_us / (86400 * FB_US_PER_S);
        if (now_unix_us < 0 && now_unix_us % (86400 * FB_US_PER_S) != 0) now_day--;
        int64_t now_year = year_of_day(now_day);
        int64_t century = now_year - ((now_year % 100) + 100) % 100;
        y = century + 100 + yy;
        while (y > now_year + 50) y -= 100;
    } else if (take_day(&asc, false) >= 0 && take(&asc, " ")) {
        /* asctime: Sun Nov  6 08:49:37 1994 */
        c = asc;
        if (!(take_month(&c, &m) && take(&c, " "))) return FB_EPARSE;
        if (!(take(&c, " ") ? take_digits(&c, 1, &d) : take_digits(&c, 2, &d))) return FB_EPARSE;
        if (!(take(&c, " ") && take_time(&c, &h, &mi, &s) && take(&c, " ") &&
              take_digits(&c, 4, &y)))
            return FB_EPARSE;
    } else {
        return FB_EPARSE;
    }
    if (c.p != c.end) return FB_EPARSE;
    if (d < 1 || d > days_in_month(y, m) || h > 23 || mi > 59 || s > 60) return FB_EPARSE;
    *unix_s = days_from_civil(y, m, d) * 86400 + h * 3600 + mi * 60 + s;
    return FB_OK;
}

int fb_retry_after_parse(const char *value, int64_t now_unix_us, fb_time_us *delay_us) {
    if (value == NULL || delay_us == NULL) return FB_EINVAL;
    cursor c = trimmed(value);
    if (c.p < c.end && is_digit(*c.p)) return parse_decimal(c, 6, delay_us);

    int64_t unix_s = 0;
    int rc = parse_http_date(c, now_unix_us, &unix_s);
    if (rc != FB_OK) return rc;
    int64_t at_us = unix_s * FB_US_PER_S; /* years 0..9999: far from overflow */
    if (now_unix_us < 0 && at_us > INT64_MAX + now_unix_us) {
        *delay_us = FB_TIME_MAX;
        return FB_OK;
    }
    int64_t delay = at_us - now_unix_us;
    *delay_us = delay > 0 ? delay : 0; /* a date in the past: retry now */
    return FB_OK;
}

fb_time_us fb_retry_after_hint(const char *retry_after_ms, const char *retry_after,
                               int64_t now_unix_us) {
    fb_time_us d = 0;
    if (retry_after_ms != NULL && fb_retry_after_parse_ms(retry_after_ms, &d) == FB_OK) return d;
    if (retry_after != NULL && fb_retry_after_parse(retry_after, now_unix_us, &d) == FB_OK)
        return d;
    return FB_TIME_NONE;
}

const char *fb_giveup_name(fb_giveup g) {
    switch (g) {
    case FB_GIVEUP_NONE:
        return "none";
    case FB_GIVEUP_NOT_RETRYABLE:
        return "not_retryable";
    case FB_GIVEUP_ATTEMPTS:
        return "attempts";
    case FB_GIVEUP_DEADLINE:
        return "deadline";
    case FB_GIVEUP_BUDGET:
        return "budget";
    case FB_GIVEUP_RETRY_AFTER_CAP:
        return "retry_after_cap";
    default:
        return "unknown";
    }
}
