/*
 * fuzz_policy.c - a libFuzzer target for `fusebox import-policy`: the YAML reader
 * (import/yaml.c: libyaml's events into a located tree, anchors and aliases, the caps on
 * nodes, depth and expanded text, complex and duplicate keys) and the three importers on
 * its tree (import/policy_r4j.c, policy_litellm.c, policy_envoy.c).
 *
 * Input: one byte choosing the kind (resilience4j, litellm, envoy), then the YAML text.
 * Whatever the bytes, the reader returns a tree or an error with a message, and an importer
 * returns layers (JSON that parses) or an error with a message, without a crash, a leak or
 * undefined behaviour.
 *
 * Built and run by tests/e2e/fuzz.sh; by hand see docs/testing.md.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/fb.h"
#include "import/policy.h"
#include "import/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    static const char *const kinds[] = {"resilience4j", "litellm", "envoy"};
    const char *kind = kinds[data[0] % 3];
    imp_node *root = NULL;
    imp_error err;
    int rc = imp_yaml_parse((const char *)data + 1, size - 1, "fuzz.yml", &root, &err);
    if (rc != FB_OK) {
        if (root != NULL || err.msg[0] == '\0') abort(); /* an error says why, and holds no tree */
        return 0;
    }
    imp_result res;
    memset(&res, 0, sizeof res);
    rc = imp_policy(kind, root, "fuzz.yml", &res, &err);
    if (rc == FB_OK) {
        cJSON *j = res.json ? cJSON_Parse(res.json) : NULL;
        if (j == NULL) abort(); /* the layers are JSON */
        cJSON_Delete(j);
    } else if (err.msg[0] == '\0') {
        abort();
    }
    imp_result_free(&res);
    imp_node_free(root);
    return 0;
}
