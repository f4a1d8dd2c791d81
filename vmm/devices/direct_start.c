// SPDX-License-Identifier: MIT
/* The paravirt direct-start port (see direct_start.h): one guest OUT, one checked request. */
#include "direct_start.h"

#include <stddef.h>
#include <string.h>

#include "../vm.h"
#include "plugvm_abi.h"
#include "pv_port.h"

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
	uint32_t status = PLUGVM_START_OK;
	void *p;

	(void)vcpu_id;
	p = pv_port_request(&d->port, &d->vm->mem, offset, data, size, count, is_write, &ctx);
	if (!p)
		return;
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
		/* The guest is told why (status): a diagnostic, not a warning; rate-limited, as
		 * the guest may retry at will (test_flood.py counts the lines). */
		log_guest_info(&d->refused_rl, "direct start of APIC ID %u refused (status %u)",
			       ctx.apic_id, status);
	}
	memcpy((char *)p + offsetof(struct plugvm_start_ctx, status), &status, sizeof(status));
}

int direct_start_init(struct direct_start *d, struct vm *vm, const struct direct_start_ops *ops)
{
	d->vm = vm;
	d->ops = *ops;
	d->refused_rl = (struct log_ratelimit){ 0 };
	d->port = (struct pv_port){ .name = "direct start",
				    .object = "context ",
				    .align = 8,
				    .len = sizeof(struct plugvm_start_ctx) };
	return bus_register(&vm->pio, PLUGVM_PORT_DIRECT_START, PLUGVM_PORT_DIRECT_START_LEN,
			    start_io, d, "direct-start");
}
