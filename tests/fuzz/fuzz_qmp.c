// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/control/qmp_session.c, the control socket's protocol. The input is
 * what a client sends, fed to one session in pieces whose sizes come from the input's first byte (so
 * requests split across reads are covered). Every output line must be one JSON object,
 * and the output stays within QMP_MAX_OUTPUT.
 */
#include <json-c/json.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vmm/control/qmp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct json_object *cmd_echo(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)ctx;
	(void)err;
	return json_object_get(args);
}

static struct json_object *cmd_fail(void *ctx, struct json_object *args, struct qmp_error *err)
{
	(void)ctx;
	(void)args;
	qmp_error_set(err, "GenericError", "no");
	return NULL;
}

static const struct qmp_arg echo_args[] = {
	{ "s", json_type_string, false },
	{ "n", json_type_int, true },
	{ "any", json_type_null, false },
	{ NULL, json_type_null, false },
};

static const struct qmp_command cmds[] = {
	{ "echo", cmd_echo, echo_args },
	{ "fail", cmd_fail, NULL },
	{ NULL, NULL, NULL },
};

/* Each complete line of the output must parse as a JSON object. */
static void check_output(struct qmp_session *c)
{
	size_t len;
	const char *out = qmp_session_output(c, &len), *nl;

	if (len > QMP_MAX_OUTPUT)
		abort();
	while (len && (nl = memchr(out, '\n', len)) != NULL) {
		size_t n = (size_t)(nl - out) + 1;
		char *line = strndup(out, n);
		struct json_object *o = json_tokener_parse(line);

		if (!o || !json_object_is_type(o, json_type_object))
			abort();
		json_object_put(o);
		free(line);
		qmp_session_consume(c, n);
		out = qmp_session_output(c, &len);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct qmp_server *s = qmp_server_create(cmds, NULL, "fuzz", 0, 0, 0);
	struct qmp_session *c = s ? qmp_session_create(s) : NULL;
	size_t step = size ? (size_t)data[0] % 64 + 1 : 1, off = size ? 1 : 0;

	if (!c) {
		qmp_server_destroy(s);
		return 0;
	}
	while (off < size && !qmp_session_closing(c)) {
		size_t n = size - off < step ? size - off : step;

		qmp_session_input(c, (const char *)data + off, n);
		check_output(c);
		off += n;
	}
	qmp_session_destroy(c);
	qmp_server_destroy(s);
	return 0;
}
