// SPDX-License-Identifier: MIT
/* Sorted range table for port and MMIO dispatch; binary search per exit. */
#include "bus.h"

#include <errno.h>
#include <string.h>

#include "log.h"

int bus_register(struct bus *bus, uint64_t base, uint64_t len, bus_handler_fn handler, void *opaque,
		 const char *name)
{
	int i, pos = bus->nr;

	if (bus->nr == BUS_MAX_RANGES) {
		log_error("%s bus: no room for %s", bus->name, name);
		return -ENOSPC;
	}
	for (i = 0; i < bus->nr; i++) {
		const struct bus_range *r = &bus->ranges[i];

		/* Differences, not ends: a range may end exactly at 2^64 (base + len == 0). */
		if (base >= r->base ? base - r->base < r->len : r->base - base < len) {
			log_error("%s bus: %s [%#llx+%#llx) overlaps %s", bus->name, name,
				  (unsigned long long)base, (unsigned long long)len, r->name);
			return -EEXIST;
		}
		if (base < r->base && pos == bus->nr)
			pos = i;
	}
	memmove(&bus->ranges[pos + 1], &bus->ranges[pos],
		(size_t)(bus->nr - pos) * sizeof(bus->ranges[0]));
	bus->ranges[pos] = (struct bus_range){ base, len, handler, opaque, name };
	bus->nr++;
	return 0;
}

bool bus_dispatch(const struct bus *bus, int vcpu_id, uint64_t addr, uint8_t *data, unsigned size,
		  unsigned count, bool is_write)
{
	int lo = 0, hi = bus->nr - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		const struct bus_range *r = &bus->ranges[mid];

		if (addr < r->base) {
			hi = mid - 1;
		} else if (addr - r->base >= r->len) {
			lo = mid + 1;
		} else {
			/* An access straddling the range end goes to the device; it checks. */
			r->handler(r->opaque, vcpu_id, addr - r->base, data, size, count, is_write);
			return true;
		}
	}
	if (!is_write)
		memset(data, 0xff, (size_t)size * count);
	return false;
}
