/* SPDX-License-Identifier: MIT */
/*
 * Lookups in QMP values that say what an absent member gives, so that a reply missing a
 * field prints a default instead of crashing the tool.
 */
#ifndef PLUGVM_TOOLS_LIB_JSON_GET_H
#define PLUGVM_TOOLS_LIB_JSON_GET_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* o[a] (or o[a][b] when b is not NULL) as a string owned by `o`; NULL when absent. */
const char *get_str(struct json_object *o, const char *a, const char *b);
/* o[a] (or o[a][b] when b is not NULL) as an int; -1 when absent. */
int get_int(struct json_object *o, const char *a, const char *b);
/* o[k] as an int64; 0 when absent. */
int64_t get_i64(struct json_object *o, const char *k);
/* o[k] as a boolean; false when absent. */
bool get_bool(struct json_object *o, const char *k);

#endif
