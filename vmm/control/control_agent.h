/* SPDX-License-Identifier: MIT */
/*
 * The control socket's commands answered by the guest agent (control_agent.c): cpuhp
 * states and targets, failure injection, statistics, workloads; the guest's events as QMP
 * events. docs/qmp.md has the shapes.
 */
#ifndef PLUGVM_VMM_CONTROL_AGENT_H
#define PLUGVM_VMM_CONTROL_AGENT_H

#include "plugvm_agent.h"
#include "qmp.h"

struct vm;

/* Optional QMP events (qmp_subscribe bits). */
#define CONTROL_SUB_CPUHP 0x1u /* CPUHP_STATE, after cpuhp-subscribe */

extern const struct qmp_command control_agent_commands[];

/* A guest event from the agent (agent_set_event_fn). */
void control_agent_event(struct vm *vm, const struct plugvm_agent_msg *m);
void control_agent_free(struct vm *vm);

#endif
