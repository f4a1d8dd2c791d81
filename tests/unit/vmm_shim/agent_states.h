/* SPDX-License-Identifier: MIT */
/*
 * A guest's three-state cpuhp table as its agent answers LIST_STATES, shared by the agent's
 * unit tests and the fuzzers' seed generator.
 */
#ifndef PLUGVM_TESTS_UNIT_AGENT_STATES_H
#define PLUGVM_TESTS_UNIT_AGENT_STATES_H

#include <stdio.h>
#include <string.h>

#include "plugvm_agent.h"

/* States 0-2, one per section, each a valid target that can fail, named `names`. */
static inline void agent_states_fill(struct plugvm_agent_states *st, const char *const names[3])
{
	unsigned i;

	memset(st, 0, sizeof(*st));
	st->total = 3;
	st->count = 3;
	for (i = 0; i < 3; i++) {
		st->st[i].id = (int32_t)i;
		st->st[i].section = (uint8_t)i;
		st->st[i].flags = PLUGVM_AGENT_STATE_CAN_REST | PLUGVM_AGENT_STATE_CAN_FAIL;
		snprintf(st->st[i].name, sizeof(st->st[i].name), "%s", names[i]);
	}
}

#endif
