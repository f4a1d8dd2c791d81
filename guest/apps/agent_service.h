/* SPDX-License-Identifier: MIT */
/*
 * The agent service (apps/agent_service.c): what the agent channel's requests do and
 * which events the guest sends; drivers/agent.c carries them.
 */
#ifndef PLUGVM_APPS_AGENT_SERVICE_H
#define PLUGVM_APPS_AGENT_SERVICE_H

/*
 * Start the agent on the channel, if there is one: its thread says HELLO and from then on
 * answers requests and sends every cpuhp callback and lock-validator report as an event.
 * Init thread, once, after the boot CPUs are up (agent_start()).
 */
void agent_service_start(void);

#endif
