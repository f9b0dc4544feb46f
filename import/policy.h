/*
 * policy.h - a library's configuration file as fusebox layers.
 *
 * `fusebox import-policy KIND FILE` reads the configuration users already
 * have (Spring Boot's resilience4j properties, a LiteLLM config.yaml, an
 * Envoy route and cluster) and writes the equivalent layers: each a library
 * preset (docs/presets.md) with the file's own keys copied as the preset's
 * parameters. A key the preset does not model is reported by name and
 * position, never dropped silently; keys the importer reads for structure
 * (instance names, configs to inherit) are not parameters and not reported.
 */
#ifndef IMP_POLICY_H
#define IMP_POLICY_H

#include <stddef.h>

#include "import/yaml.h"

#define IMP_NOTES_MAX 256

/* A key of the file that the layers do not model. */
typedef struct imp_note {
    char path[256]; /* resilience4j.circuitbreaker.instances.backendA.eventConsumerBufferSize */
    int line, col;
    char why[160];
} imp_note;

typedef struct imp_result {
    char *json; /* {"layers": {"NAME": {layer}, ...}} as text (malloc) */
    imp_note notes[IMP_NOTES_MAX];
    size_t note_count;
    size_t notes_dropped; /* beyond IMP_NOTES_MAX */
} imp_result;

/* The kinds imp_policy() reads, NULL-terminated: "resilience4j", "litellm", "envoy". */
const char *const *imp_policy_kinds(void);
/* What a kind's file is, in one line (NULL for an unknown kind). */
const char *imp_policy_kind_summary(const char *kind);

/*
 * The layers a configuration describes, one per instance (resilience4j:
 * each named instance; LiteLLM: one, "litellm"; Envoy: one per cluster a
 * route sends to, named after it). FB_OK, or FB_EINVAL /
 * FB_ENOTFOUND with err filled (a position where there is one).
 */
int imp_policy(const char *kind, const imp_node *root, const char *file, imp_result *out,
               imp_error *err);
void imp_result_free(imp_result *r);

/*
 * One layer of a file, as JSON text (malloc): the instance `select` names,
 * or the only one (NULL); *notes gets the keys not modelled, one
 * "file:line:col: path: why" per line (malloc, or NULL when none). The
 * loader's import hook (sim_import's layer; ctx is unused).
 */
int imp_policy_layer(void *ctx, const char *kind, const char *file, const char *select, char **json,
                     char **notes, char *msg, size_t msglen);

#endif /* IMP_POLICY_H */
