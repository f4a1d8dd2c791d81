// SPDX-License-Identifier: MIT
/*
 * One client's QMP protocol, without I/O (qmp.h, docs/qmp.md): the streaming JSON parser,
 * capabilities negotiation, the request's envelope, the command table and its arguments,
 * replies and errors, deferred replies and event subscriptions. The socket is
 * qmp_server.c's; the unit tests and the fuzzer drive sessions without one.
 */
#include "qmp_internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * gcc 12's -fanalyzer loses a session's output buffer once the session is reached through
 * the server's lists, and reports the buffer as leaked. The ASan run of the integration
 * tests (make check) checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

#define TOKENER_DEPTH 32 /* QEMU's parser allows 1024; nothing here nests past 4 */

struct qmp_deferred {
	struct qmp_server *s;
	uint64_t serial;
	struct json_object *id;
};

void qmp_error_set(struct qmp_error *err, const char *class, const char *fmt, ...)
{
	va_list ap;

	err->class = class;
	va_start(ap, fmt);
	vsnprintf(err->desc, sizeof(err->desc), fmt, ap);
	va_end(ap);
}

/* ---- output ---------------------------------------------------------------------------- */

/* Room for `need` bytes of output. */
static bool out_reserve(struct qmp_session *c, size_t need)
{
	size_t cap = c->out_cap ? c->out_cap : 4096;
	char *p;

	if (c->out && need <= c->out_cap)
		return true;
	while (cap < need)
		cap *= 2;
	p = realloc(c->out, cap);
	if (!p)
		return false;
	c->out = p;
	c->out_cap = cap;
	return true;
}

void qmp_session_drop(struct qmp_session *c)
{
	c->closing = true;
	c->gone = true;
	c->out_len = 0;
}

void qmp_session_end_input(struct qmp_session *c)
{
	/* A request cut short by the end of input is lost, as at a disconnect. */
	json_tokener_reset(c->tok);
	c->pending = 0;
	c->input_ended = true;
}

bool qmp_session_done(const struct qmp_session *c)
{
	return c->closing || (c->input_ended && !c->nr_deferred && !c->out_len);
}

void qmp_session_append(struct qmp_session *c, const char *text, size_t len)
{
	if (c->closing)
		return;
	if (c->out_len + len + 2 > QMP_MAX_OUTPUT) {
		/* A client that reads nothing does not get to hold the VMM's memory. */
		log_warn("qmp: client not reading its replies (%zu bytes queued): dropping it",
			 c->out_len);
		qmp_session_drop(c);
		return;
	}
	if (!out_reserve(c, c->out_len + len + 2)) {
		qmp_session_drop(c);
		return;
	}
	memcpy(&c->out[c->out_len], text, len);
	c->out[c->out_len + len] = '\r';
	c->out[c->out_len + len + 1] = '\n';
	c->out_len += len + 2;
}

static void out_json(struct qmp_session *c, struct json_object *o)
{
	size_t len;
	const char *text = json_object_to_json_string_length(
	    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

	qmp_session_append(c, text, len);
}

static void reply_error(struct qmp_session *c, struct json_object *id, const char *class,
			const char *desc)
{
	struct json_object *r = json_object_new_object(), *e = json_object_new_object();

	json_object_object_add(e, "class", json_object_new_string(class));
	json_object_object_add(e, "desc", json_object_new_string(desc));
	json_object_object_add(r, "error", e);
	if (id)
		json_object_object_add(r, "id", json_object_get(id));
	out_json(c, r);
	json_object_put(r);
}

const char *qmp_session_output(const struct qmp_session *c, size_t *len)
{
	*len = c->out_len;
	return c->out;
}

void qmp_session_consume(struct qmp_session *c, size_t len)
{
	if (len > c->out_len)
		len = c->out_len;
	memmove(c->out, c->out + len, c->out_len - len);
	c->out_len -= len;
}

bool qmp_session_closing(const struct qmp_session *c)
{
	return c->closing;
}

/* ---- requests -------------------------------------------------------------------------- */

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_boolean:
		return "boolean";
	case json_type_int:
		return "integer";
	case json_type_double:
		return "number";
	case json_type_string:
		return "string";
	case json_type_object:
		return "object";
	case json_type_array:
		return "array";
	default:
		return "null";
	}
}

/* Arguments against the command's list: nothing unknown, right types, nothing missing. */
static bool check_args(const struct qmp_command *cmd, struct json_object *args,
		       struct qmp_error *err)
{
	const struct qmp_arg *a;

	json_object_object_foreach(args, key, val)
	{
		for (a = cmd->args; a && a->name; a++)
			if (!strcmp(a->name, key))
				break;
		if (!a || !a->name) {
			qmp_error_set(err, "GenericError", "Parameter '%.64s' is unexpected", key);
			return false;
		}
		if (a->type != json_type_null && !json_object_is_type(val, a->type)) {
			qmp_error_set(err, "GenericError",
				      "Invalid parameter type for '%s', expected: %s", a->name,
				      type_name(a->type));
			return false;
		}
	}
	for (a = cmd->args; a && a->name; a++) {
		if (a->required && !json_object_object_get_ex(args, a->name, NULL)) {
			qmp_error_set(err, "GenericError", "Parameter '%s' is missing", a->name);
			return false;
		}
	}
	return true;
}

static const struct qmp_arg capabilities_args[] = {
	{ "enable", json_type_array, false },
	{ NULL, json_type_null, false },
};

/* qmp_capabilities: plugvm offers no optional capability (no out-of-band execution). */
static struct json_object *do_capabilities(struct qmp_session *c, struct json_object *args,
					   struct qmp_error *err)
{
	struct json_object *enable;
	size_t i;

	if (json_object_object_get_ex(args, "enable", &enable)) {
		for (i = 0; i < json_object_array_length(enable); i++) {
			struct json_object *cap = json_object_array_get_idx(enable, i);

			qmp_error_set(err, "GenericError", "Capability '%.64s' not available",
				      json_object_is_type(cap, json_type_string)
					  ? json_object_get_string(cap)
					  : "?");
			return NULL;
		}
	}
	c->negotiated = true;
	return NULL;
}

const struct qmp_command qmp_capabilities_command = { "qmp_capabilities", NULL, capabilities_args,
						      QMP_CMD_NO_MACHINE };

/*
 * The request's envelope: an object with a string `execute`, maybe an object `arguments`
 * and any `id`, nothing else. False after replying with the error.
 */
static bool check_envelope(struct qmp_session *c, struct json_object *req, struct json_object **id,
			   const char **name, struct json_object **args)
{
	struct json_object *exec = NULL;

	*id = *args = NULL;
	if (!json_object_is_type(req, json_type_object)) {
		reply_error(c, NULL, "GenericError", "QMP input must be a JSON object");
		return false;
	}
	json_object_object_get_ex(req, "id", id);
	json_object_object_foreach(req, key, val)
	{
		(void)val;
		if (strcmp(key, "execute") && strcmp(key, "arguments") && strcmp(key, "id")) {
			char desc[128];

			snprintf(desc, sizeof(desc), "QMP input member '%.64s' is unexpected", key);
			reply_error(c, *id, "GenericError", desc);
			return false;
		}
	}
	if (!json_object_object_get_ex(req, "execute", &exec)) {
		reply_error(c, *id, "GenericError", "QMP input lacks member 'execute'");
		return false;
	}
	if (!json_object_is_type(exec, json_type_string)) {
		reply_error(c, *id, "GenericError", "QMP input member 'execute' must be a string");
		return false;
	}
	if (json_object_object_get_ex(req, "arguments", args) &&
	    !json_object_is_type(*args, json_type_object)) {
		reply_error(c, *id, "GenericError",
			    "QMP input member 'arguments' must be an object");
		return false;
	}
	*name = json_object_get_string(exec);
	return true;
}

/*
 * The command `name` names, as negotiation allows it (only qmp_capabilities before, never
 * after). NULL after replying with CommandNotFound.
 */
static const struct qmp_command *find_command(struct qmp_session *c, struct json_object *id,
					      const char *name)
{
	const struct qmp_command *cmd;
	char desc[160];

	if (!c->negotiated && strcmp(name, "qmp_capabilities")) {
		reply_error(c, id, "CommandNotFound",
			    "Expecting capabilities negotiation with 'qmp_capabilities'");
		return NULL;
	}
	if (!strcmp(name, "qmp_capabilities")) {
		if (!c->negotiated)
			return &qmp_capabilities_command;
		reply_error(c, id, "CommandNotFound",
			    "Capabilities negotiation is already complete, command ignored");
		return NULL;
	}
	for (cmd = c->s->cmds; cmd->name; cmd++)
		if (!strcmp(cmd->name, name))
			return cmd;
	snprintf(desc, sizeof(desc), "The command %.100s has not been found", name);
	reply_error(c, id, "CommandNotFound", desc);
	return NULL;
}

/*
 * Run `cmd` with its checked arguments and reply, unless it took a deferred reply
 * (qmp_defer(): answered later by qmp_deferred_return()).
 */
static void run_command(struct qmp_session *c, const struct qmp_command *cmd,
			struct json_object *id, struct json_object *args)
{
	struct json_object *ret, *reply;
	struct qmp_error err = { 0 };

	if (c->s->no_machine && !(cmd->flags & QMP_CMD_NO_MACHINE)) {
		/* Before its arguments, as a command that is not there: fn never sees NULL cpus. */
		qmp_error_set(&err, "GenericError", "%s", c->s->no_machine);
		ret = NULL;
	} else if (!check_args(cmd, args, &err)) {
		ret = NULL;
	} else if (cmd == &qmp_capabilities_command) {
		ret = do_capabilities(c, args, &err);
	} else {
		c->s->current = c;
		c->s->current_id = id;
		c->s->deferred = false;
		ret = cmd->fn(c->s->ctx, args, &err);
		c->s->current = NULL;
		c->s->current_id = NULL;
		if (c->s->deferred && !err.class) {
			json_object_put(ret);
			return;
		}
	}
	if (err.class) {
		json_object_put(ret);
		reply_error(c, id, err.class, err.desc);
		return;
	}
	reply = json_object_new_object();
	json_object_object_add(reply, "return", ret ? ret : json_object_new_object());
	if (id)
		json_object_object_add(reply, "id", json_object_get(id));
	out_json(c, reply);
	json_object_put(reply);
}

/* One whole JSON value from the client: a request, answered (or deferred) or refused. */
static void execute_request(struct qmp_session *c, struct json_object *req)
{
	struct json_object *id, *args, *empty = NULL;
	const struct qmp_command *cmd;
	const char *name;

	if (!check_envelope(c, req, &id, &name, &args))
		return;
	cmd = find_command(c, id, name);
	if (!cmd)
		return;
	if (!args)
		args = empty = json_object_new_object();
	run_command(c, cmd, id, args);
	json_object_put(empty);
}

size_t qmp_session_input_some(struct qmp_session *c, const char *buf, size_t len, unsigned *budget)
{
	size_t off = 0;

	while (off < len && *budget && !c->closing && !c->input_ended) {
		struct json_object *obj;
		enum json_tokener_error jerr;
		size_t chunk = len - off, used;

		if (c->skip_line) {
			const char *nl = memchr(buf + off, '\n', len - off);

			if (!nl)
				return len;
			off = (size_t)(nl - buf) + 1;
			c->skip_line = false;
			continue;
		}
		if (chunk > INT_MAX)
			chunk = INT_MAX;
		obj = json_tokener_parse_ex(c->tok, buf + off, (int)chunk);
		jerr = json_tokener_get_error(c->tok);
		used = json_tokener_get_parse_end(c->tok);
		if (jerr == json_tokener_continue) {
			c->pending += chunk;
			off += chunk;
			if (c->pending > QMP_MAX_REQUEST) {
				reply_error(c, NULL, "GenericError",
					    "JSON parse error, request too large");
				c->closing = true;
			}
			continue;
		}
		json_tokener_reset(c->tok);
		c->pending = 0;
		if (jerr != json_tokener_success) {
			char desc[160];

			snprintf(desc, sizeof(desc), "JSON parse error, %s",
				 json_tokener_error_desc(jerr));
			reply_error(c, NULL, "GenericError", desc);
			--*budget;
			/* Resynchronise at the next line, as a line-oriented client expects. */
			off += used ? used : 1;
			if (off > 0 && buf[off - 1] != '\n')
				c->skip_line = true;
			continue;
		}
		off += used;
		--*budget;
		execute_request(c, obj);
		json_object_put(obj);
	}
	return off;
}

void qmp_session_input(struct qmp_session *c, const char *buf, size_t len)
{
	unsigned budget = UINT_MAX;

	qmp_session_input_some(c, buf, len, &budget);
}

struct qmp_session *qmp_session_create(struct qmp_server *s)
{
	struct qmp_session *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->s = s;
	c->fd = -1;
	c->tok = json_tokener_new_ex(TOKENER_DEPTH);
	if (!c->tok) {
		free(c);
		return NULL;
	}
	qmp_session_append(c, s->greeting, strlen(s->greeting));
	c->serial = ++s->next_serial;
	c->all_next = s->sessions;
	s->sessions = c;
	return c;
}

void qmp_session_destroy(struct qmp_session *c)
{
	struct qmp_session **pp;

	if (!c)
		return;
	for (pp = &c->s->sessions; *pp; pp = &(*pp)->all_next) {
		if (*pp == c) {
			*pp = c->all_next;
			break;
		}
	}
	json_tokener_free(c->tok);
	free(c->in);
	free(c->out);
	free(c);
}

/* ---- deferred replies and subscriptions ----------------------------------------------- */

struct qmp_deferred *qmp_defer(struct qmp_server *s)
{
	struct qmp_deferred *d;

	if (!s->current)
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->s = s;
	d->serial = s->current->serial;
	d->id = s->current_id ? json_object_get(s->current_id) : NULL;
	s->deferred = true;
	s->current->nr_deferred++;
	return d;
}

void qmp_deferred_return(struct qmp_deferred *d, struct json_object *ret,
			 const struct qmp_error *err)
{
	struct qmp_session *c;

	for (c = d->s->sessions; c && c->serial != d->serial; c = c->all_next)
		;
	if (c) {
		c->nr_deferred--;
		if (err && err->class) {
			reply_error(c, d->id, err->class, err->desc);
		} else {
			struct json_object *reply = json_object_new_object();

			json_object_object_add(
			    reply, "return", ret ? json_object_get(ret) : json_object_new_object());
			if (d->id)
				json_object_object_add(reply, "id", json_object_get(d->id));
			out_json(c, reply);
			json_object_put(reply);
		}
		/*
		 * This may run inside a command of any session, even c's own: the dispatcher
		 * sends it (deliver_events() flushes every client), never this function, which
		 * must not close c under its callers.
		 */
		if (c->fd >= 0)
			qmp_server_wake(d->s);
	}
	json_object_put(ret);
	json_object_put(d->id);
	free(d);
}

bool qmp_subscribe(struct qmp_server *s, uint32_t mask, bool on)
{
	if (!s->current)
		return false;
	if (on)
		s->current->subscribed |= mask;
	else
		s->current->subscribed &= ~mask;
	return true;
}
