/* SPDX-License-Identifier: MIT */
/*
 * The guest's cpuhp state table as the host last read it (refreshed on the agent's HELLO
 * and by query-cpuhp-states): names for the ids the guest reports, ids for the names
 * clients give. Names were cleaned when read (agent_str_clean()). Main thread.
 */
#ifndef PLUGVM_VMM_CONTROL_AGENT_STATES_H
#define PLUGVM_VMM_CONTROL_AGENT_STATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugvm_agent.h"
#include "qmp.h"

#define AGENT_STATES_MAX 128 /* states the host keeps; a longer table is refused */

struct agent_states {
	uint32_t nr;
	struct plugvm_agent_state st[AGENT_STATES_MAX];
};

/* The table becomes the `n` entries at `st` (n <= AGENT_STATES_MAX). */
void agent_states_set(struct agent_states *t, const struct plugvm_agent_state *st, uint32_t n);

/* The name of state `id`, or its number written to `buf` when the table does not know it. */
const char *agent_states_name(const struct agent_states *t, int id, char *buf, size_t len);

/* State `id` is in the table and a CPU may rest there (a cpuhp-set-target target). */
bool agent_states_can_rest(const struct agent_states *t, int id);

/* o[key] = the name of state `id`, o["key-id"] = id. */
void agent_states_add(const struct agent_states *t, struct json_object *o, const char *key, int id);

/*
 * A state argument `v`: a name from the table or an id. Returns the id; -2 for "none" or
 * -1 when `allow_none`; -1 after setting err.
 */
int agent_states_arg(const struct agent_states *t, struct json_object *v, bool allow_none,
		     struct qmp_error *err);

/* query-cpuhp-states' answer: every named state, in bring-up order. */
struct json_object *agent_states_json(const struct agent_states *t);

#endif
