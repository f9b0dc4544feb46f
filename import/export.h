/*
 * export.h - a preset layer written back as the library's own configuration.
 *
 * The inverse of import-policy (policy.h): a layer of the resilience4j,
 * litellm or envoy preset, in the library's keys and units, becomes the
 * block of the user's file that sets those keys (a Spring Boot
 * resilience4j instance, a LiteLLM proxy config's model_list and
 * router_settings, an Envoy route's retry policy and its cluster's circuit
 * breakers and outlier detection). Only the keys the layer gives are
 * written: what it leaves to the library's default stays out of the file.
 * Each preset parameter maps to one place in the file through a table in
 * export.c (one row per parameter); parameters with no place in the file
 * (the model a request asks for, Envoy's hosts) are reported, not dropped
 * silently. import-policy reads the output back to the same layer
 * (tests/unit/test_export.c checks every row).
 */
#ifndef IMP_EXPORT_H
#define IMP_EXPORT_H

#include <stddef.h>

/* The kinds imp_export_policy() writes, NULL-terminated (import-policy's kinds). */
const char *const *imp_export_kinds(void);
/* The preset a kind's layers use ("resilience4j", "litellm", "envoy"), or NULL. */
const char *imp_export_preset(const char *kind);

/*
 * The layer (JSON text: {"preset": P, KEY: VALUE, ...}; fusebox's own keys
 * name, description and preset are not parameters) as `kind`'s YAML, into
 * *yaml (malloc). `name` is the instance (resilience4j) or cluster (Envoy)
 * the block configures; LiteLLM's config has none. *notes gets one line
 * "KEY: why" per key not written (malloc, or NULL when none). FB_OK, or
 * FB_EINVAL with msg (a key that is no parameter of the preset, a layer of
 * another preset), FB_ENOMEM.
 */
int imp_export_policy(const char *kind, const char *name, const char *layer_json, char **yaml,
                      char **notes, char *msg, size_t msglen);

/*
 * The same values written into the user's file (its text, `len` bytes, named
 * `file` in messages): a key the file has gets the layer's value in place
 * (its value's text replaced, the rest of the line kept); a key it lacks is
 * added after its map's last line, at that map's indentation; everything else
 * (comments, order, quoting, keys fusebox does not model) stays as it was.
 * Keys are matched as the library does (resilience4j: Spring's relaxed
 * binding, and "resilience4j.retry:" as one key). resilience4j and litellm
 * only; LiteLLM's model_list is not rewritten (noted). *out is the new text
 * (malloc). FB_EINVAL with msg where the file cannot take the edit in place
 * (a flow map to add to, a value that is an alias), FB_EPARSE for YAML that
 * does not parse.
 */
int imp_export_into(const char *kind, const char *name, const char *layer_json, const char *file,
                    const char *text, size_t len, char **out, char **notes, char *msg,
                    size_t msglen);

#endif /* IMP_EXPORT_H */
