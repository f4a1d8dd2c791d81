// SPDX-License-Identifier: MIT
/* The paravirt ports' shared access rule (see pv_port.h). */
#include "pv_port.h"

#include <string.h>

void *pv_port_request(struct pv_port *port, const struct guest_mem *mem, uint64_t offset,
		      uint8_t *data, unsigned size, unsigned count, bool is_write, void *copy)
{
	uint32_t gpa;
	void *p;

	if (!is_write) {
		memset(data, 0xff, (size_t)size * count);
		return NULL;
	}
	if (offset != 0 || size != 4 || count != 1) {
		log_guest_warn(&port->rl, "%s: bad access (size %u at +%llu)", port->name, size,
			       (unsigned long long)offset);
		return NULL;
	}
	memcpy(&gpa, data, 4);
	if (gpa & (port->align - 1)) {
		log_guest_warn(&port->rl, "%s: %s%#x is not %u-byte aligned", port->name,
			       port->object, gpa, port->align);
		return NULL;
	}
	p = mem_gpa_ptr(mem, gpa, port->len);
	if (!p) {
		log_guest_warn(&port->rl, "%s: %s%#x is not in guest RAM", port->name, port->object,
			       gpa);
		return NULL;
	}
	memcpy(copy, p, port->len); /* one copy: the guest may change it under us */
	return p;
}
