/* SPDX-License-Identifier: MIT */
/*
 * I/O-port and MMIO dispatch: devices register address ranges with one handler signature
 * at init; vCPU threads look them up on every exit. Ranges never change while vCPUs run,
 * so lookups take no lock; handlers serialize themselves.
 */
#ifndef PLUGVM_VMM_BUS_H
#define PLUGVM_VMM_BUS_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One access of `size` bytes (1, 2, 4 or 8), repeated `count` times for string I/O (data
 * then holds count * size bytes), at `offset` from the range's base. Reads fill `data`.
 * Called on a vCPU thread; `vcpu_id` is the accessing vCPU.
 */
typedef void (*bus_handler_fn)(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data,
			       unsigned size, unsigned count, bool is_write);

struct bus_range {
	uint64_t base;
	uint64_t len;
	bus_handler_fn handler;
	void *opaque;
	const char *name;
};

#define BUS_MAX_RANGES 32

struct bus {
	const char *name; /* "pio" or "mmio" */
	int nr;
	struct bus_range ranges[BUS_MAX_RANGES]; /* sorted by base, non-overlapping */
};

/* Add a range. Returns 0, -EEXIST on overlap, -ENOSPC when full (both logged). */
int bus_register(struct bus *bus, uint64_t base, uint64_t len, bus_handler_fn handler, void *opaque,
		 const char *name);

/*
 * Dispatch an access to the range containing `addr`. Returns true if a device took it;
 * false for unclaimed addresses (reads were filled with 0xff, as on a PC bus).
 */
bool bus_dispatch(const struct bus *bus, int vcpu_id, uint64_t addr, uint8_t *data, unsigned size,
		  unsigned count, bool is_write);

#endif
