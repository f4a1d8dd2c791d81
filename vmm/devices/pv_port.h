/* SPDX-License-Identifier: MIT */
/*
 * What plugvm's paravirt ports share (plugvm_abi.h: the direct-start and hotplug report
 * ports): the guest writes, with one 32-bit OUT at the port's base, the guest-physical
 * address of a request in RAM, which the device copies once before it looks at it; reads
 * return all ones. Everything else a guest may do there is refused with a rate-limited
 * warning.
 */
#ifndef PLUGVM_VMM_DEVICES_PV_PORT_H
#define PLUGVM_VMM_DEVICES_PV_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../log.h"
#include "../mem.h"

struct pv_port {
	const char *name; /* in warnings: "direct start" */
	const char *object; /* before the address in warnings: "context " or "" */
	uint32_t align; /* the request's alignment in guest memory */
	size_t len; /* its size */
	struct log_ratelimit rl;
};

/*
 * The request a port access carries (the bus handler's arguments): copied to `copy`
 * (port->len bytes), and its host address returned, for a status the device writes back.
 * NULL for a read (answered with ones) and for what is refused (warned).
 */
void *pv_port_request(struct pv_port *port, const struct guest_mem *mem, uint64_t offset,
		      uint8_t *data, unsigned size, unsigned count, bool is_write, void *copy);

#endif
