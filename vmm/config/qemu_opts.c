// SPDX-License-Identifier: MIT
/*
 * QEMU's option values (qemu_cli.h): "a,b=c,d=e,,f" and the JSON object form libvirt writes
 * for -device, -object and -audiodev. Pure; every key comes out as a string, and a key no
 * handler takes is an error (qopts_check_used()), so nothing given is ignored silently.
 */
#include "qemu_cli.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

static int add(struct qopts *q, const char *key, size_t klen, char *val, const char *opt, char *err,
	       size_t errlen)
{
	if (q->n == QOPTS_MAX) {
		free(val);
		config_set_err(err, errlen, "%s: more than %d keys", opt, QOPTS_MAX);
		return -EINVAL;
	}
	if (!klen) {
		free(val);
		config_set_err(err, errlen, "%s: an empty key", opt);
		return -EINVAL;
	}
	q->o[q->n].key = strndup(key, klen);
	q->o[q->n].val = val;
	q->o[q->n].used = false;
	if (!q->o[q->n].key || !val) {
		free(q->o[q->n].key);
		free(val);
		config_set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	q->n++;
	return 0;
}

/* The text of *p up to an unpaired ',' (",," kept as one ','); *p moves past it. */
static char *take_item(const char **p)
{
	const char *s = *p;
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	for (; *s; s++) {
		if (*s == ',' && s[1] == ',') {
			*o++ = ',';
			s++;
		} else if (*s == ',') {
			break;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
	*p = *s ? s + 1 : s;
	return out;
}

static int parse_keyval(struct qopts *q, const char *s, const char *implied, const char *opt,
			char *err, size_t errlen)
{
	const char *p = s;
	bool first = true;

	if (!*s) {
		config_set_err(err, errlen, "%s: an empty value", opt);
		return -EINVAL;
	}
	while (*p || first) {
		char *item = take_item(&p), *eq;
		int ret;

		if (!item) {
			config_set_err(err, errlen, "out of memory");
			return -ENOMEM;
		}
		eq = strchr(item, '=');
		if (first && implied && !eq) {
			ret = add(q, implied, strlen(implied), strdup(item), opt, err, errlen);
		} else if (!eq) {
			ret = add(q, item, strlen(item), strdup("on"), opt, err, errlen);
		} else {
			ret = add(q, item, (size_t)(eq - item), strdup(eq + 1), opt, err, errlen);
		}
		free(item);
		if (ret)
			return ret;
		first = false;
	}
	return 0;
}

static int parse_json(struct qopts *q, const char *s, const char *opt, char *err, size_t errlen)
{
	enum json_tokener_error jerr;
	struct json_object *obj = json_tokener_parse_verbose(s, &jerr);
	int ret = 0;

	if (!obj || !json_object_is_type(obj, json_type_object)) {
		config_set_err(err, errlen, "%s: not a JSON object: %s", opt,
			       obj ? "another JSON value" : json_tokener_error_desc(jerr));
		json_object_put(obj);
		return -EINVAL;
	}
	json_object_object_foreach(obj, key, v)
	{
		const char *text;

		switch (json_object_get_type(v)) {
		case json_type_string:
		case json_type_int:
			text = json_object_get_string(v);
			break;
		case json_type_boolean:
			text = json_object_get_boolean(v) ? "on" : "off";
			break;
		default:
			config_set_err(err, errlen,
				       "%s: key '%s': only strings, integers and booleans are "
				       "supported",
				       opt, key);
			ret = -EINVAL;
			goto out;
		}
		ret = add(q, key, strlen(key), strdup(text), opt, err, errlen);
		if (ret)
			goto out;
	}
out:
	json_object_put(obj);
	return ret;
}

int qopts_parse(struct qopts *q, const char *s, const char *implied, const char *opt, char *err,
		size_t errlen)
{
	int ret;

	memset(q, 0, sizeof(*q));
	ret = s[0] == '{' ? parse_json(q, s, opt, err, errlen)
			  : parse_keyval(q, s, implied, opt, err, errlen);
	if (ret)
		qopts_free(q);
	return ret;
}

const char *qopts_take(struct qopts *q, const char *key)
{
	const char *val = NULL;
	unsigned i;

	for (i = 0; i < q->n; i++)
		if (!strcmp(q->o[i].key, key)) {
			q->o[i].used = true;
			val = q->o[i].val;
		}
	return val;
}

int qopts_check_used(const struct qopts *q, const char *opt, const char *hint, char *err,
		     size_t errlen)
{
	unsigned i;

	for (i = 0; i < q->n; i++)
		if (!q->o[i].used) {
			config_set_err(err, errlen, "%s: unsupported key '%s=%s'%s%s", opt,
				       q->o[i].key, q->o[i].val, hint ? ": " : "",
				       hint ? hint : "");
			return -EINVAL;
		}
	return 0;
}

void qopts_free(struct qopts *q)
{
	unsigned i;

	for (i = 0; i < q->n; i++) {
		free(q->o[i].key);
		free(q->o[i].val);
	}
	q->n = 0;
}
