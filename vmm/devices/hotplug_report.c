// SPDX-License-Identifier: MIT
/* The paravirt hotplug report port (see hotplug_report.h): one guest OUT, one checked report. */
#include "hotplug_report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "../vm.h"
#include "plugvm_abi.h"

struct hotplug_report {
	struct vm *vm;
	struct hotplug_report_ops ops;
	struct log_ratelimit rl;
};

static void report_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		      unsigned count, bool is_write)
{
	struct hotplug_report *d = opaque;
	struct plugvm_hotplug_report r;
	const void *p;
	uint32_t gpa;

	(void)vcpu_id;
	if (!is_write) {
		memset(data, 0xff, (size_t)size * count);
		return;
	}
	if (offset != 0 || size != 4 || count != 1) {
		log_guest_warn(&d->rl, "hotplug report: bad access (size %u at +%llu)", size,
			       (unsigned long long)offset);
		return;
	}
	memcpy(&gpa, data, 4);
	p = (gpa & 3) ? NULL : mem_gpa_ptr(&d->vm->mem, gpa, sizeof(r));
	if (!p) {
		log_guest_warn(&d->rl, "hotplug report: %#x is not in guest RAM", gpa);
		return;
	}
	memcpy(&r, p, sizeof(r)); /* one copy: the guest may change it under us */
	if (r.apic_id >= d->vm->cfg->max_cpus || r.reserved ||
	    (r.op != PLUGVM_HOTPLUG_OP_ONLINE && r.op != PLUGVM_HOTPLUG_OP_OFFLINE)) {
		log_guest_warn(&d->rl, "hotplug report: bad fields (apic %u, op %u)", r.apic_id,
			       r.op);
		return;
	}
	d->ops.report(d->ops.opaque, r.apic_id, r.op == PLUGVM_HOTPLUG_OP_ONLINE, r.result,
		      r.guest_ns);
}

int hotplug_report_init(struct vm *vm, const struct hotplug_report_ops *ops,
			struct hotplug_report **out)
{
	struct hotplug_report *d = calloc(1, sizeof(*d));
	int ret;

	if (!d)
		return -ENOMEM;
	d->vm = vm;
	d->ops = *ops;
	ret = bus_register(&vm->pio, PLUGVM_PORT_HOTPLUG_REPORT, PLUGVM_PORT_HOTPLUG_REPORT_LEN,
			   report_io, d, "hotplug-report");
	if (ret) {
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void hotplug_report_exit(struct hotplug_report *d)
{
	free(d);
}
