// SPDX-License-Identifier: MIT
/* Lookups in QMP values with a stated default for an absent member (see json_get.h). */
#include "json_get.h"

const char *get_str(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return NULL;
	if (b && !json_object_object_get_ex(x, b, &x))
		return NULL;
	return json_object_get_string(x);
}

int get_int(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x;

	if (!json_object_object_get_ex(o, a, &x))
		return -1;
	if (b && !json_object_object_get_ex(x, b, &x))
		return -1;
	return json_object_get_int(x);
}

int64_t get_i64(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) ? json_object_get_int64(v) : 0;
}

bool get_bool(struct json_object *o, const char *k)
{
	struct json_object *v;

	return json_object_object_get_ex(o, k, &v) && json_object_get_boolean(v);
}
