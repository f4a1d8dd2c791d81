// SPDX-License-Identifier: MIT
/* The paravirt hotplug report port (see hotplug_report.h): one guest OUT, one checked report. */
#include "hotplug_report.h"

#include <string.h>

#include "../vm.h"
#include "plugvm_abi.h"
#include "pv_port.h"

static void report_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		      unsigned count, bool is_write)
{
	struct hotplug_report *d = opaque;
	struct plugvm_hotplug_report r;

	(void)vcpu_id;
	if (!pv_port_request(&d->port, &d->vm->mem, offset, data, size, count, is_write, &r))
		return;
	if (r.apic_id >= d->vm->cfg->max_cpus || r.reserved ||
	    (r.op != PLUGVM_HOTPLUG_OP_ONLINE && r.op != PLUGVM_HOTPLUG_OP_OFFLINE)) {
		log_guest_warn(&d->port.rl, "hotplug report: bad fields (apic %u, op %u)",
			       r.apic_id, r.op);
		return;
	}
	d->ops.report(d->ops.opaque, r.apic_id, r.op == PLUGVM_HOTPLUG_OP_ONLINE, r.result,
		      r.guest_ns);
}

int hotplug_report_init(struct hotplug_report *d, struct vm *vm,
			const struct hotplug_report_ops *ops)
{
	d->vm = vm;
	d->ops = *ops;
	d->port = (struct pv_port){ .name = "hotplug report",
				    .object = "",
				    .align = 4,
				    .len = sizeof(struct plugvm_hotplug_report) };
	return bus_register(&vm->pio, PLUGVM_PORT_HOTPLUG_REPORT, PLUGVM_PORT_HOTPLUG_REPORT_LEN,
			    report_io, d, "hotplug-report");
}
