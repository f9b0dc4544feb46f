/*
 * policyint.h - what policy.c shares with the importers of each kind
 * (policy_r4j.c, policy_litellm.c, policy_envoy.c).
 *
 * policy.c holds the common part: errors, notes, YAML to JSON, copying a
 * map's keys as a preset's parameters, the dispatcher and the loader's hook.
 * Each importer walks its file's structure to the objects that hold the
 * library's settings, adds one layer per instance to `layers` and reports
 * every key it does not turn into a parameter.
 */
#ifndef IMP_POLICYINT_H
#define IMP_POLICYINT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "import/policy.h"
#include "scenario/preset.h"

/* err at n's position (or none), msg formatted with one string argument; returns rc. */
int imp_fail_at(imp_error *err, const imp_node *n, int rc, const char *fmt, const char *arg);
/* A key not modelled: path, where it stands, why. A place already noted is not noted again. */
void imp_add_note(imp_result *r, const char *path, const imp_node *at, const char *why);

/* How a plain (unquoted) scalar reads: NULL when it is a string (the caller makes it one). */
typedef cJSON *(*imp_scalar_fn)(const char *value);
/* YAML 1.2's core schema: true, false, null, ~, empty, and numbers. */
cJSON *imp_scalar_core(const char *value);
/* A node as JSON; `scalar` reads plain scalars (NULL: imp_scalar_core). */
cJSON *imp_to_json(const imp_node *n, imp_scalar_fn scalar);

/* A map's key as the preset's parameter name (Spring's relaxed binding); NULL: verbatim. */
typedef void (*imp_rename_fn)(const char *key, char *out, size_t len);

/*
 * The keys of `map` that are parameters of preset p go into `layer`
 * (replacing an inherited value); the others are reported under `path`.
 * `skip` lists the structural keys, which are neither.
 */
void imp_copy_params(const imp_node *map, const sim_preset *p, cJSON *layer, const char *path,
                     const char *const *skip, imp_rename_fn rename, imp_scalar_fn scalar,
                     imp_result *r);
/*
 * An object parameter (the preset's "NAME.KEY" parameters): the keys of `map`
 * that are NAME's, as a JSON object; the others reported under `path`. An
 * empty map gives an empty object (the parameter given, every key defaulted).
 */
cJSON *imp_copy_object(const imp_node *map, const sim_preset *p, const char *name, const char *path,
                       imp_scalar_fn scalar, imp_result *r);

/* v is one of the NULL-terminated `words` (NULL: none). */
bool imp_one_of(const char *v, const char *const *words);

/* "PATH.KEY" and "PATH[I]" into a buffer of IMP_PATH_MAX. */
#define IMP_PATH_MAX 256
void imp_path_key(char *out, const char *path, const char *key);
void imp_path_index(char *out, const char *path, size_t i);

/* The importers: FB_OK with one layer per instance in `layers`, or an error in err. */
int imp_import_r4j(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err);
int imp_import_litellm(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err);
int imp_import_envoy(const imp_node *root, cJSON *layers, imp_result *r, imp_error *err);

/* The litellm_settings key (a litellm module global) the Router also reads for its argument
 * `param` ("num_retries", "timeout": "request_timeout", the fallbacks), or NULL. */
const char *imp__litellm_module_key(const char *param);

#endif /* IMP_POLICYINT_H */
