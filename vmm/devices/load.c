// SPDX-License-Identifier: MIT
/* The guest load port (see load.h): one checked registration, consistent copies. */
#include "load.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "../vm.h"
#include "plugvm_abi.h"
#include "pv_port.h"

struct load_dev {
	struct vm *vm;
	struct pv_port port;
	/* 0: nothing registered. Written on a vCPU thread, read by the main thread. */
	_Atomic uint64_t area_gpa;
	_Atomic uint64_t generation; /* registrations and withdrawals accepted */
};

unsigned load_copy_tries = LOAD_COPY_TRIES;

/* The registration's status for `r`: PLUGVM_LOAD_OK when it can be taken as it is. */
static uint32_t check_register(struct load_dev *d, const struct plugvm_load_register *r)
{
	unsigned max = d->vm->cfg->max_cpus;

	if (r->magic != PLUGVM_LOAD_MAGIC || r->version != PLUGVM_LOAD_VERSION || r->reserved ||
	    r->status)
		return PLUGVM_LOAD_EINVAL;
	if (!r->area_gpa)
		return PLUGVM_LOAD_OK; /* withdrawn */
	if (r->count < max || r->count > PLUGVM_MAX_CPUS)
		return PLUGVM_LOAD_EINVAL;
	if ((r->area_gpa & 63) || !mem_gpa_ptr(&d->vm->mem, r->area_gpa,
					       (size_t)r->count * sizeof(struct plugvm_load_latch)))
		return PLUGVM_LOAD_EADDR;
	return PLUGVM_LOAD_OK;
}

static void load_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		    unsigned count, bool is_write)
{
	struct load_dev *d = opaque;
	struct plugvm_load_register r;
	uint32_t status;
	void *p;

	(void)vcpu_id;
	p = pv_port_request(&d->port, &d->vm->mem, offset, data, size, count, is_write, &r);
	if (!p)
		return;
	status = check_register(d, &r);
	if (status == PLUGVM_LOAD_OK) {
		atomic_store(&d->area_gpa, r.area_gpa);
		atomic_fetch_add(&d->generation, 1);
	} else {
		/* The guest is told why (status); rate-limited, as it may retry at will. */
		log_guest_info(&d->port.rl,
			       "load: registration refused (status %u: magic %#x, version %u, "
			       "area %#llx, %u records)",
			       status, r.magic, r.version, (unsigned long long)r.area_gpa, r.count);
	}
	memcpy((char *)p + offsetof(struct plugvm_load_register, status), &status, sizeof(status));
}

int load_init(struct vm *vm)
{
	struct load_dev *d = calloc(1, sizeof(*d));
	int ret;

	if (!d) {
		log_error("load: out of memory");
		return -ENOMEM;
	}
	d->vm = vm;
	d->port = (struct pv_port){ .name = "load",
				    .object = "registration ",
				    .align = 8,
				    .len = sizeof(struct plugvm_load_register) };
	ret = bus_register(&vm->pio, PLUGVM_PORT_LOAD, PLUGVM_PORT_LOAD_LEN, load_io, d, "load");
	if (ret) {
		free(d);
		return ret;
	}
	vm->load = d;
	return 0;
}

void load_exit(struct vm *vm)
{
	free(vm->load);
	vm->load = NULL;
}

void load_reset(struct vm *vm)
{
	if (!vm->load)
		return;
	atomic_store(&vm->load->area_gpa, 0);
	atomic_fetch_add(&vm->load->generation, 1);
}

uint64_t load_generation(const struct vm *vm)
{
	return vm->load ? atomic_load(&vm->load->generation) : 0;
}

int load_read(struct vm *vm, unsigned slot, struct plugvm_load_cpu *out)
{
	struct load_dev *d = vm->load;
	uint64_t gpa = d ? atomic_load(&d->area_gpa) : 0;
	const struct plugvm_load_latch *l;
	const _Atomic uint32_t *seq;
	unsigned i;

	if (!gpa)
		return -ENODATA;
	if (slot >= vm->cfg->max_cpus)
		return -EINVAL;
	l = mem_gpa_ptr(&vm->mem, gpa + (uint64_t)slot * sizeof(*l), sizeof(*l));
	if (!l)
		return -EFAULT;
	seq = (const _Atomic uint32_t *)&l->seq;
	for (i = 0; i < load_copy_tries; i++) {
		uint32_t a = atomic_load_explicit(seq, memory_order_acquire);

		memcpy(out, &l->copy[a & 1], sizeof(*out));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(seq, memory_order_relaxed) == a)
			return 0;
	}
	return -EAGAIN;
}
