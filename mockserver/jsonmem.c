/* jsonmem.c - see jsonmem.h. */
#include "mockserver/jsonmem.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

static _Thread_local mock_jsonmem *current;

static void *block_malloc(size_t n) {
    mock_jsonmem *m = current;
    size_t at = m != NULL ? (m->used + 15) & ~(size_t)15 : 0;
    if (m == NULL || n > m->cap || at > m->cap - n) {
        if (m != NULL) m->spilled++;
        return malloc(n);
    }
    m->used = at + n;
    return m->p + at;
}

static void block_free(void *p) {
    mock_jsonmem *m = current;
    if (m != NULL && (uintptr_t)p >= (uintptr_t)m->p && (uintptr_t)p < (uintptr_t)m->p + m->cap)
        return;
    free(p);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

static void install(void) {
    cJSON_Hooks h = {block_malloc, block_free};
    cJSON_InitHooks(&h);
}

void mock_jsonmem_begin(mock_jsonmem *m, char *mem, size_t cap) {
    pthread_once(&once, install);
    m->p = mem;
    m->cap = cap;
    m->used = 0;
    m->spilled = 0;
    current = m;
}

void mock_jsonmem_end(void) {
    current = NULL;
}
