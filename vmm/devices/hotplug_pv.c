// SPDX-License-Identifier: MIT
/* The paravirt CPU hotplug port (see hotplug_pv.h): LISTEN, claim, DONE. */
#include "hotplug_pv.h"

#include <stddef.h>
#include <string.h>

#include "../vm.h"
#include "plugvm_abi.h"
#include "plugvm_hotplug.h"

/* The claim: every present slot and pending event into the guest's area; their count. */
static uint32_t claim(struct hotplug_pv *d)
{
	uint64_t area = atomic_load(&d->area);
	struct plugvm_hotplug_events ev = { 0 };
	void *p;
	unsigned n;

	if (!area)
		return ~0u;
	n = acpi_cpu_hotplug_pv_claim(d->block, ev.present, ev.insert, ev.remove,
				      PLUGVM_HOTPLUG_WORDS);
	p = mem_gpa_ptr(&d->vm->mem, area, sizeof(ev));
	if (p) /* checked at LISTEN; guest RAM does not move */
		memcpy(p, &ev, sizeof(ev));
	return n;
}

static uint32_t listen_cmd(struct hotplug_pv *d, const struct plugvm_hotplug_cmd *c)
{
	if (c->vector < PLUGVM_HOTPLUG_VECTOR_MIN || c->vector > PLUGVM_HOTPLUG_VECTOR_MAX ||
	    c->dest_apic_id > 255 || c->apic_id || c->op || c->result || c->reserved || c->guest_ns)
		return PLUGVM_HOTPLUG_EINVAL;
	if (!c->area || (c->area & 7) ||
	    !mem_gpa_ptr(&d->vm->mem, c->area, sizeof(struct plugvm_hotplug_events)))
		return PLUGVM_HOTPLUG_EADDR;
	atomic_store(&d->vector, c->vector);
	atomic_store(&d->dest, c->dest_apic_id);
	atomic_store(&d->area, c->area);
	/* After the stores: the block's lock orders them before any notify. */
	acpi_cpu_hotplug_pv_listen(d->block);
	return PLUGVM_HOTPLUG_OK;
}

static uint32_t done_cmd(struct hotplug_pv *d, const struct plugvm_hotplug_cmd *c)
{
	bool online = c->op == PLUGVM_HOTPLUG_OP_ONLINE;

	if ((c->op != PLUGVM_HOTPLUG_OP_ONLINE && c->op != PLUGVM_HOTPLUG_OP_OFFLINE) ||
	    c->apic_id >= d->vm->cfg->max_cpus || c->reserved || c->area || c->vector ||
	    c->dest_apic_id)
		return PLUGVM_HOTPLUG_EINVAL;
	if (!atomic_load(&d->area))
		return PLUGVM_HOTPLUG_ESTATE;
	if (acpi_cpu_hotplug_pv_done(d->block, c->apic_id, online, c->result))
		return PLUGVM_HOTPLUG_ESTATE;
	d->ops.report(d->ops.opaque, c->apic_id, online, c->result, c->guest_ns);
	return PLUGVM_HOTPLUG_OK;
}

static void pv_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		  unsigned count, bool is_write)
{
	struct hotplug_pv *d = opaque;
	struct plugvm_hotplug_cmd c;
	uint32_t status;
	void *p;

	(void)vcpu_id;
	if (!is_write && offset == 0 && size == 4 && count == 1) {
		uint32_t n = claim(d);

		memcpy(data, &n, sizeof(n));
		return;
	}
	p = pv_port_request(&d->port, &d->vm->mem, offset, data, size, count, is_write, &c);
	if (!p)
		return;
	if (c.cmd == PLUGVM_HOTPLUG_CMD_LISTEN)
		status = listen_cmd(d, &c);
	else if (c.cmd == PLUGVM_HOTPLUG_CMD_DONE)
		status = done_cmd(d, &c);
	else
		status = PLUGVM_HOTPLUG_EINVAL;
	if (status != PLUGVM_HOTPLUG_OK)
		/* The guest is told why (status); rate-limited, as it may retry at will. */
		log_guest_info(&d->refused_rl, "paravirt hotplug command %u refused (status %u)",
			       c.cmd, status);
	memcpy((char *)p + offsetof(struct plugvm_hotplug_cmd, status), &status, sizeof(status));
}

int hotplug_pv_init(struct hotplug_pv *d, struct vm *vm, struct acpi_cpu_hotplug *block,
		    const struct hotplug_pv_ops *ops)
{
	d->vm = vm;
	d->block = block;
	d->ops = *ops;
	atomic_store(&d->area, 0);
	atomic_store(&d->vector, 0);
	atomic_store(&d->dest, 0);
	d->refused_rl = (struct log_ratelimit){ 0 };
	d->port = (struct pv_port){ .name = "paravirt hotplug",
				    .object = "command ",
				    .align = 8,
				    .len = sizeof(struct plugvm_hotplug_cmd) };
	return bus_register(&vm->pio, PLUGVM_PORT_HOTPLUG_PV, PLUGVM_PORT_HOTPLUG_PV_LEN, pv_io, d,
			    "hotplug-pv");
}

void hotplug_pv_notify(struct hotplug_pv *d)
{
	d->ops.notify(d->ops.opaque, atomic_load(&d->vector), atomic_load(&d->dest));
}

void hotplug_pv_reset(struct hotplug_pv *d)
{
	atomic_store(&d->area, 0);
}
