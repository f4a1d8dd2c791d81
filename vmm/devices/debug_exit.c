// SPDX-License-Identifier: MIT
/*
 * QEMU's isa-debug-exit at 0xf4 (iosize 4): a write of value v, masked to the access
 * width, stops the VM with exit status (v << 1) | 1. Reads return 0.
 */
#include "debug_exit.h"

#include <string.h>

#include "../vm.h"
#include "plugvm_abi.h"

static void debug_exit_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
			  unsigned count, bool is_write)
{
	struct vm *vm = opaque;
	uint32_t v = 0;

	(void)vcpu_id;
	(void)offset;
	if (!is_write) {
		memset(data, 0, (size_t)size * count);
		return;
	}
	memcpy(&v, data, size > 4 ? 4 : size);
	/* QEMU's exit() truncates the status to 8 bits; so does the kernel for us. */
	vm_request_stop(vm, (int)(((v << 1) | 1) & 0xff));
}

int debug_exit_init(struct vm *vm)
{
	return bus_register(&vm->pio, PLUGVM_PORT_DEBUG_EXIT, PLUGVM_PORT_DEBUG_EXIT_LEN,
			    debug_exit_io, vm, "isa-debug-exit");
}
