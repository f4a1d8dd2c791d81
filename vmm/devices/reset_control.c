// SPDX-License-Identifier: MIT
/*
 * The reset control register at 0xcf9, as QEMU's PIIX3 and ICH9 have it: a write with
 * RST_CPU (bit 2) set is the guest's reset request, handed to the machine's reboot action
 * (vm_guest_reset()); SYS_RST (bit 1) is kept and read back; the other bits read 0.
 */
#include "reset_control.h"

#include <stdatomic.h>
#include <stdlib.h>

#include "../vm.h"

#define RCR_SYS_RST 0x02u
#define RCR_RST_CPU 0x04u

struct reset_control {
	struct vm *vm;
	atomic_uint rcr; /* SYS_RST as last written */
};

static struct reset_control the_rcr; /* one machine per process, one register */

static void rcr_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		   unsigned count, bool is_write)
{
	struct reset_control *r = opaque;
	unsigned i;

	(void)vcpu_id;
	/* One byte of register: each access's first byte, the rest of a wider one reads 0xff. */
	for (i = 0; i < size * count; i++) {
		bool ours = offset == 0 && i % size == 0;

		if (!is_write) {
			data[i] = ours ? (uint8_t)atomic_load(&r->rcr) : 0xff;
			continue;
		}
		if (!ours)
			continue;
		if (data[i] & RCR_RST_CPU) {
			vm_guest_reset(r->vm);
			return; /* the rest of a `rep outsb` goes with the machine */
		}
		atomic_store(&r->rcr, data[i] & RCR_SYS_RST);
	}
}

int reset_control_init(struct vm *vm)
{
	the_rcr.vm = vm;
	atomic_store(&the_rcr.rcr, 0);
	return bus_register(&vm->pio, RESET_CONTROL_PORT, 1, rcr_io, &the_rcr, "reset-control");
}

void reset_control_reset(void)
{
	atomic_store(&the_rcr.rcr, 0);
}
