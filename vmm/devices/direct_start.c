// SPDX-License-Identifier: MIT
/* The paravirt direct-start port (see direct_start.h): one guest OUT, one checked request. */
#include "direct_start.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "../vm.h"
#include "plugvm_abi.h"

struct direct_start {
	struct vm *vm;
	struct direct_start_ops ops;
	struct log_ratelimit rl;
};

/* Entry, stack and a page-aligned CR3 in RAM: what the vCPU touches first. */
static bool ctx_in_ram(const struct guest_mem *mem, const struct plugvm_start_ctx *ctx)
{
	return mem_gpa_ptr(mem, ctx->entry, 16) && ctx->stack >= 8 &&
	       mem_gpa_ptr(mem, ctx->stack - 8, 8) && !(ctx->cr3 & 0xfff) &&
	       mem_gpa_ptr(mem, ctx->cr3, 4096);
}

static void start_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		     unsigned count, bool is_write)
{
	struct direct_start *d = opaque;
	struct plugvm_start_ctx ctx;
	struct long_mode_start r;
	uint32_t gpa, status = PLUGVM_START_OK;
	void *p;

	(void)vcpu_id;
	if (!is_write) {
		memset(data, 0xff, (size_t)size * count);
		return;
	}
	if (offset != 0 || size != 4 || count != 1) {
		log_guest_warn(&d->rl, "direct start: bad access (size %u at +%llu)", size,
			       (unsigned long long)offset);
		return;
	}
	memcpy(&gpa, data, 4);
	p = (gpa & 7) ? NULL : mem_gpa_ptr(&d->vm->mem, gpa, sizeof(ctx));
	if (!p) {
		log_guest_warn(&d->rl, "direct start: context %#x is not in guest RAM", gpa);
		return;
	}
	memcpy(&ctx, p, sizeof(ctx)); /* one copy: the guest may change it under us */
	if (ctx.reserved)
		status = PLUGVM_START_EINVAL;
	else if (ctx.apic_id >= d->vm->cfg->max_cpus || !d->ops.running(d->ops.opaque, ctx.apic_id))
		status = PLUGVM_START_EAPIC;
	else if (!ctx_in_ram(&d->vm->mem, &ctx))
		status = PLUGVM_START_EADDR;
	if (status == PLUGVM_START_OK) {
		r = (struct long_mode_start){ ctx.entry, ctx.stack, ctx.cr3, ctx.gs_base, ctx.arg };
		if (d->ops.start(d->ops.opaque, ctx.apic_id, &r))
			status = PLUGVM_START_EAPIC; /* it stopped since running() said yes */
	} else {
		log_guest_warn(&d->rl, "direct start of APIC ID %u refused (%u)", ctx.apic_id,
			       status);
	}
	memcpy((char *)p + offsetof(struct plugvm_start_ctx, status), &status, sizeof(status));
}

int direct_start_init(struct vm *vm, const struct direct_start_ops *ops, struct direct_start **out)
{
	struct direct_start *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->vm = vm;
	d->ops = *ops;
	ret = bus_register(&vm->pio, PLUGVM_PORT_DIRECT_START, PLUGVM_PORT_DIRECT_START_LEN,
			   start_io, d, "direct-start");
	if (ret) {
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void direct_start_exit(struct direct_start *d)
{
	free(d);
}
