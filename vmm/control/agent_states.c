// SPDX-License-Identifier: MIT
/* The guest's cpuhp state table, as the host knows it (see agent_states.h). */
#include "agent_states.h"

#include <stdio.h>
#include <string.h>

void agent_states_set(struct agent_states *t, const struct plugvm_agent_state *st, uint32_t n)
{
	memset(t->st, 0, sizeof(t->st));
	memcpy(t->st, st, n * sizeof(t->st[0]));
	t->nr = n;
}

const char *agent_states_name(const struct agent_states *t, int id, char *buf, size_t len)
{
	if (t && id >= 0 && (uint32_t)id < t->nr && t->st[id].name[0])
		return t->st[id].name;
	snprintf(buf, len, "%d", id);
	return buf;
}

bool agent_states_can_rest(const struct agent_states *t, int id)
{
	return id >= 0 && (uint32_t)id < t->nr && t->st[id].name[0] &&
	       (t->st[id].flags & PLUGVM_AGENT_STATE_CAN_REST);
}

void agent_states_add(const struct agent_states *t, struct json_object *o, const char *key, int id)
{
	char buf[16], idkey[32];

	json_object_object_add(o, key,
			       json_object_new_string(agent_states_name(t, id, buf, sizeof(buf))));
	snprintf(idkey, sizeof(idkey), "%s-id", key);
	json_object_object_add(o, idkey, json_object_new_int(id));
}

int agent_states_arg(const struct agent_states *t, struct json_object *v, bool allow_none,
		     struct qmp_error *err)
{
	uint32_t i;

	if (json_object_is_type(v, json_type_int)) {
		int64_t id = json_object_get_int64(v);

		if (allow_none && id == -1)
			return -2;
		if (id < 0 || id >= (int64_t)t->nr) {
			qmp_error_set(err, "GenericError",
				      "state %lld is not a cpuhp state id (0..%u)", (long long)id,
				      t->nr ? t->nr - 1 : 0);
			return -1;
		}
		return (int)id;
	}
	if (!json_object_is_type(v, json_type_string)) {
		qmp_error_set(err, "GenericError", "'state' must be a state name or id");
		return -1;
	}
	if (allow_none && !strcmp(json_object_get_string(v), "none"))
		return -2;
	for (i = 0; i < t->nr; i++)
		if (t->st[i].name[0] && !strcmp(t->st[i].name, json_object_get_string(v)))
			return (int)i;
	qmp_error_set(err, "GenericError",
		      "'%.64s' is not a cpuhp state (query-cpuhp-states lists them)",
		      json_object_get_string(v));
	return -1;
}

static const char *section_name(unsigned s)
{
	static const char *const names[] = { "prepare", "starting", "online" };

	return s < 3 ? names[s] : "unknown";
}

static struct json_object *flag(const struct plugvm_agent_state *st, uint8_t bit)
{
	return json_object_new_boolean(st->flags & bit);
}

struct json_object *agent_states_json(const struct agent_states *t)
{
	struct json_object *a = json_object_new_array();
	uint32_t i;

	for (i = 0; i < t->nr; i++) {
		const struct plugvm_agent_state *st = &t->st[i];
		struct json_object *o;

		if (!st->name[0])
			continue; /* a free dynamic slot */
		o = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int((int)i));
		json_object_object_add(o, "name", json_object_new_string(st->name));
		json_object_object_add(o, "section",
				       json_object_new_string(section_name(st->section)));
		json_object_object_add(o, "can-rest", flag(st, PLUGVM_AGENT_STATE_CAN_REST));
		json_object_object_add(o, "can-fail", flag(st, PLUGVM_AGENT_STATE_CAN_FAIL));
		json_object_object_add(o, "dynamic", flag(st, PLUGVM_AGENT_STATE_DYNAMIC));
		json_object_array_add(a, o);
	}
	return a;
}
