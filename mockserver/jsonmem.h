/*
 * jsonmem.h - cJSON's allocations while one request body is parsed and read, served from a block
 * of the caller's (its stack): a chat body is a dozen nodes and strings, each a malloc and a
 * free otherwise, and the whole tree is freed before the block goes.
 *
 * The hooks are process-wide (cJSON_InitHooks, installed once); outside a block, on any thread,
 * they are malloc and free, so every other cJSON user is served as before. Inside one, what does
 * not fit goes to malloc; freeing a pointer of the block does nothing. Whatever cJSON allocates
 * inside must be freed with cJSON_free (or cJSON_Delete) before mock_jsonmem_end, unless nothing
 * spilled: then all of it is in the block, and goes with it.
 */
#ifndef MOCK_JSONMEM_H
#define MOCK_JSONMEM_H

#include <stddef.h>

typedef struct mock_jsonmem {
    char *p;
    size_t cap, used;
    size_t spilled; /* allocations that did not fit (malloc'd) */
} mock_jsonmem;

/* From now until mock_jsonmem_end, cJSON on this thread allocates from mem (16-byte aligned). */
void mock_jsonmem_begin(mock_jsonmem *m, char *mem, size_t cap);
void mock_jsonmem_end(void);

#endif /* MOCK_JSONMEM_H */
