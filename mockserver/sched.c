/* sched.c - a timer thread with a min-heap of (deadline, connection). */
#include "mockserver/sched.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct entry {
    fb_time_us due_us;
    uint64_t seq;                /* ties resolve in arrival order */
    struct MHD_Connection *conn; /* NULL: a timed call */
    void (*fn)(void *);
    void *arg;
} entry;

struct mock_sched {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    entry *heap;
    size_t n, cap;
    uint64_t seq;
    bool stopping;
};

fb_time_us mock_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (fb_time_us)ts.tv_sec * FB_US_PER_S + ts.tv_nsec / 1000;
}

static bool before(const entry *a, const entry *b) {
    return a->due_us < b->due_us || (a->due_us == b->due_us && a->seq < b->seq);
}

static void sift_up(entry *h, size_t i) {
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&h[i], &h[p])) break;
        entry t = h[i];
        h[i] = h[p];
        h[p] = t;
        i = p;
    }
}

static void sift_down(entry *h, size_t n, size_t i) {
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && before(&h[l], &h[m])) m = l;
        if (l + 1 < n && before(&h[l + 1], &h[m])) m = l + 1;
        if (m == i) return;
        entry t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void *run(void *arg) {
    mock_sched *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        fb_time_us now = mock_now_us();
        while (s->n > 0 && (s->stopping || s->heap[0].due_us <= now)) {
            entry e = s->heap[0];
            s->heap[0] = s->heap[--s->n];
            sift_down(s->heap, s->n, 0);
            if (e.conn != NULL) {
                MHD_resume_connection(e.conn);
            } else if (!s->stopping) {
                pthread_mutex_unlock(&s->lock);
                e.fn(e.arg);
                pthread_mutex_lock(&s->lock);
                now = mock_now_us();
            }
        }
        if (s->stopping) break;
        if (s->n == 0) {
            pthread_cond_wait(&s->wake, &s->lock);
        } else {
            fb_time_us due = s->heap[0].due_us;
            struct timespec ts = {.tv_sec = (time_t)(due / FB_US_PER_S),
                                  .tv_nsec = (long)(due % FB_US_PER_S) * 1000};
            pthread_cond_timedwait(&s->wake, &s->lock, &ts);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

int mock_sched_create(size_t capacity, mock_sched **out) {
    mock_sched *s = calloc(1, sizeof *s);
    if (s == NULL) return FB_ENOMEM;
    s->cap = capacity ? capacity : 1;
    s->heap = calloc(s->cap, sizeof *s->heap);
    if (s->heap == NULL) goto fail_heap;
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    if (rc != 0) goto fail_cond;
    pthread_mutex_init(&s->lock, NULL);
    if (pthread_create(&s->thread, NULL, run, s) != 0) goto fail_thread;
    *out = s;
    return FB_OK;
fail_thread:
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
fail_cond:
    free(s->heap);
fail_heap:
    free(s);
    return FB_ENOMEM;
}

bool mock_sched_suspend(mock_sched *s, struct MHD_Connection *conn, fb_time_us due_us) {
    pthread_mutex_lock(&s->lock);
    if (s->stopping || s->n == s->cap) {
        pthread_mutex_unlock(&s->lock);
        return false;
    }
    /* Suspend under the lock so that the timer thread cannot resume it first. */
    MHD_suspend_connection(conn);
    s->heap[s->n] = (entry){due_us, s->seq++, conn, NULL, NULL};
    sift_up(s->heap, s->n++);
    if (s->heap[0].conn == conn) pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    return true;
}

bool mock_sched_call(mock_sched *s, fb_time_us due_us, void (*fn)(void *), void *arg) {
    pthread_mutex_lock(&s->lock);
    bool ok = !s->stopping && s->n < s->cap;
    if (ok) {
        s->heap[s->n] = (entry){due_us, s->seq++, NULL, fn, arg};
        sift_up(s->heap, s->n++);
        if (s->heap[0].fn == fn && s->heap[0].arg == arg) pthread_cond_signal(&s->wake);
    }
    pthread_mutex_unlock(&s->lock);
    return ok;
}

bool mock_sched_wake(mock_sched *s, struct MHD_Connection *conn) {
    pthread_mutex_lock(&s->lock);
    size_t i = 0;
    while (i < s->n && s->heap[i].conn != conn) i++;
    bool found = i < s->n;
    if (found) {
        s->heap[i].due_us = 0;
        sift_up(s->heap, i);
        pthread_cond_signal(&s->wake);
    }
    pthread_mutex_unlock(&s->lock);
    return found;
}

void mock_sched_stop(mock_sched *s) {
    pthread_mutex_lock(&s->lock);
    bool was = s->stopping;
    s->stopping = true;
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
    if (!was) pthread_join(s->thread, NULL);
}

size_t mock_sched_pending(mock_sched *s) {
    pthread_mutex_lock(&s->lock);
    size_t n = s->n;
    pthread_mutex_unlock(&s->lock);
    return n;
}

void mock_sched_destroy(mock_sched *s) {
    if (s == NULL) return;
    mock_sched_stop(s);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s->heap);
    free(s);
}
