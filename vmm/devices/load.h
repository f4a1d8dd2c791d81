/* SPDX-License-Identifier: MIT */
/*
 * The guest load port (common/plugvm_load.h, PLUGVM_FEATURE_LOAD): the guest registers its
 * per-CPU load latches once; the autoscaler (autoscale.h) copies one CPU's record whenever
 * it samples, without a guest round trip. A pure device: what the figures mean, and whether
 * they are believed, is the autoscaler's.
 */
#ifndef PLUGVM_VMM_DEVICES_LOAD_H
#define PLUGVM_VMM_DEVICES_LOAD_H

#include <stdint.h>

#include "plugvm_load.h"

struct vm;

/* Copy attempts per record before the read gives up for this sample; tests may lower it. */
#define LOAD_COPY_TRIES 64
extern unsigned load_copy_tries;

/* Put the port on vm->pio (vm->load). Returns 0 or -errno (logged). */
int load_init(struct vm *vm);
/* Free it (after the vCPU threads ended). */
void load_exit(struct vm *vm);
/* A system reset: the registration is withdrawn (the guest registers again as it boots). */
void load_reset(struct vm *vm);

/*
 * Copy the record of APIC ID `slot` (below maxcpus) into *out as the guest left it:
 * unchecked. Any thread. Returns 0, -ENODATA if no area is registered, -EAGAIN if its writer
 * moved on during every try (a guest spinning on its sequence count), -EFAULT if the area is
 * no longer guest RAM. Counts registrations for load_generation().
 */
int load_read(struct vm *vm, unsigned slot, struct plugvm_load_cpu *out);
/* Registrations so far (a new one restarts every CPU's figures). Any thread. */
uint64_t load_generation(const struct vm *vm);

#endif
