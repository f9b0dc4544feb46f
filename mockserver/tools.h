/*
 * tools.h - tools and structured output: what a request requires, and the least JSON that
 * satisfies a JSON schema.
 *
 * When a request requires a tool (OpenAI tool_choice "required" or a named function, Anthropic
 * tool_choice "any" or "tool", Gemini functionCallingConfig mode ANY), the answer is one call of
 * that tool (the named one, else the first declared) whose arguments are the schema's minimal
 * instance; when it asks for JSON (response_format / text.format json_schema or json_object,
 * Anthropic output_config.format, Gemini responseMimeType application/json), the answer text is
 * the minimal instance of the schema ("{}" without one). Rules in docs/mock.md.
 */
#ifndef MOCK_TOOLS_H
#define MOCK_TOOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "mockserver/api.h"
#include "mockserver/buf.h"

/* The minimal instance's size limit: a schema asking for more is a 400. */
#define MOCK_SCHEMA_OUT_MAX ((size_t)1 << 20)

/*
 * Append the minimal instance of `schema` ($refs resolve against `root`) to out. False with a
 * message (naming the schema path) when the schema cannot be satisfied within the limits.
 */
bool mock_schema_minimal(const cJSON *schema, const cJSON *root, util_buf *out, char *msg,
                         size_t msglen);

/* Per dialect: set r->output, r->tool_name and r->json (kept in st) from the request. */
bool mock_tools_chat(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen);
bool mock_tools_responses(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                          size_t msglen);
bool mock_tools_messages(const cJSON *root, mock_reply *r, mock_store *st, char *msg,
                         size_t msglen);
bool mock_tools_gemini(const cJSON *root, mock_reply *r, mock_store *st, char *msg, size_t msglen);

#endif /* MOCK_TOOLS_H */
