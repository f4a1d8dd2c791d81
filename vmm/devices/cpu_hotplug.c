// SPDX-License-Identifier: MIT
/*
 * The ACPI CPU hotplug device on the VM: QEMU's register block at 0xAF00
 * (acpi_cpu_hotplug.c) on the I/O bus, its GPE (bit 2) and SCI through the ACPI PM device,
 * _OST reports as QMP ACPI_DEVICE_OST events, and ejects carried out by the main loop: the ejected
 * vCPU's thread ends and its fd is parked, then DEVICE_DELETED goes out.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include "../control.h"
#include "../log.h"
#include "../qmp.h"
#include "../vcpu.h"
#include "../vm.h"
#include "acpi_cpu_hotplug.h"
#include "devices.h"
#include "plugvm_abi.h"

#define CPUHP_GPE_BIT 2

struct cpu_hotplug {
	struct vm *vm;
	pthread_mutex_t lock;
	struct acpi_cpu_hotplug regs;
	int eject_fd; /* eventfd: ejects wait for the main loop */
	uint8_t *eject_pending; /* per slot, under lock */
	struct log_ratelimit rl;
};

static void on_raise_gpe(void *opaque)
{
	struct cpu_hotplug *h = opaque;

	acpi_pm_raise_gpe(h->vm, CPUHP_GPE_BIT);
}

/* Wake the main loop: an eject, or a refused removal for control_check_timeouts(). */
static void wake_main_loop(struct cpu_hotplug *h)
{
	uint64_t one = 1;

	if (write(h->eject_fd, &one, sizeof(one)) < 0)
		log_error("cpu-hotplug: eventfd: %s", strerror(errno));
}

static void on_eject(void *opaque, unsigned slot)
{
	struct cpu_hotplug *h = opaque;

	h->eject_pending[slot] = 1;
	wake_main_loop(h);
}

static void on_ost(void *opaque, unsigned slot, uint32_t event, uint32_t status)
{
	struct cpu_hotplug *h = opaque;
	struct json_object *data, *info;
	char s[16];

	if (!h->vm->qmp)
		return;
	/* _OST of an eject request: the guest said no. The main loop reports it. */
	if (event == 3 && status != 0 && control_unplug_failed(h->vm, slot))
		wake_main_loop(h);
	snprintf(s, sizeof(s), "%u", slot);
	info = json_object_new_object();
	json_object_object_add(info, "source", json_object_new_int64(event));
	json_object_object_add(info, "status", json_object_new_int64(status));
	json_object_object_add(info, "slot", json_object_new_string(s));
	json_object_object_add(info, "slot-type", json_object_new_string("CPU"));
	data = json_object_new_object();
	json_object_object_add(data, "info", info);
	/* Rate-limited per slot: one `rep outsl` is as many _OST writes as it has words. */
	qmp_server_event_key(h->vm->qmp, 0, "ACPI_DEVICE_OST", slot, data);
}

static void block_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		     unsigned count, bool is_write)
{
	struct cpu_hotplug *h = opaque;
	unsigned i, b;

	(void)vcpu_id;
	pthread_mutex_lock(&h->lock);
	for (i = 0; i < count; i++) {
		uint8_t *p = data + (size_t)i * size;
		uint32_t v = 0;

		if (is_write) {
			for (b = 0; b < size && b < 4; b++)
				v |= (uint32_t)p[b] << (8 * b);
			acpi_cpu_hotplug_write(&h->regs, (unsigned)offset, size, v);
		} else {
			v = acpi_cpu_hotplug_read(&h->regs, (unsigned)offset, size);
			for (b = 0; b < size; b++)
				p[b] = b < 4 ? (uint8_t)(v >> (8 * b)) : 0;
		}
	}
	pthread_mutex_unlock(&h->lock);
}

/* The guest's hotplug report (plugvm_abi.h): checked, then a PLUGVM_CPU_* event. */
static void report_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		      unsigned count, bool is_write)
{
	struct cpu_hotplug *h = opaque;
	struct plugvm_hotplug_report r;
	const void *p;
	uint32_t gpa;

	(void)vcpu_id;
	if (!is_write) {
		memset(data, 0xff, (size_t)size * count);
		return;
	}
	if (offset != 0 || size != 4 || count != 1) {
		log_guest_warn(&h->rl, "hotplug report: bad access (size %u at +%llu)", size,
			       (unsigned long long)offset);
		return;
	}
	memcpy(&gpa, data, 4);
	p = (gpa & 3) ? NULL : mem_gpa_ptr(&h->vm->mem, gpa, sizeof(r));
	if (!p) {
		log_guest_warn(&h->rl, "hotplug report: %#x is not in guest RAM", gpa);
		return;
	}
	memcpy(&r, p, sizeof(r)); /* one copy: the guest may change it under us */
	if (r.apic_id >= h->vm->cfg->max_cpus || r.reserved ||
	    (r.op != PLUGVM_HOTPLUG_OP_ONLINE && r.op != PLUGVM_HOTPLUG_OP_OFFLINE)) {
		log_guest_warn(&h->rl, "hotplug report: bad fields (apic %u, op %u)", r.apic_id,
			       r.op);
		return;
	}
	control_cpu_report(h->vm, r.apic_id, r.op == PLUGVM_HOTPLUG_OP_ONLINE, r.result,
			   r.guest_ns);
}

/* The guest's direct-start request (plugvm_abi.h): checked, answered, handed to the vCPU. */
static void start_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		     unsigned count, bool is_write)
{
	struct cpu_hotplug *h = opaque;
	struct vm *vm = h->vm;
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
		log_guest_warn(&h->rl, "direct start: bad access (size %u at +%llu)", size,
			       (unsigned long long)offset);
		return;
	}
	memcpy(&gpa, data, 4);
	p = (gpa & 7) ? NULL : mem_gpa_ptr(&vm->mem, gpa, sizeof(ctx));
	if (!p) {
		log_guest_warn(&h->rl, "direct start: context %#x is not in guest RAM", gpa);
		return;
	}
	memcpy(&ctx, p, sizeof(ctx)); /* one copy: the guest may change it under us */
	if (ctx.reserved)
		status = PLUGVM_START_EINVAL;
	else if (ctx.apic_id >= vm->cfg->max_cpus ||
		 atomic_load(&vm->vcpus[ctx.apic_id].state) != VCPU_RUNNING)
		status = PLUGVM_START_EAPIC;
	else if (!mem_gpa_ptr(&vm->mem, ctx.entry, 16) || ctx.stack < 8 ||
		 !mem_gpa_ptr(&vm->mem, ctx.stack - 8, 8) || (ctx.cr3 & 0xfff) ||
		 !mem_gpa_ptr(&vm->mem, ctx.cr3, 4096))
		status = PLUGVM_START_EADDR;
	if (status == PLUGVM_START_OK) {
		r = (struct long_mode_start){ ctx.entry, ctx.stack, ctx.cr3, ctx.gs_base, ctx.arg };
		if (vcpu_direct_start(&vm->vcpus[ctx.apic_id], &r))
			status = PLUGVM_START_EAPIC;
	} else {
		log_guest_warn(&h->rl, "direct start of APIC ID %u refused (%u)", ctx.apic_id,
			       status);
	}
	memcpy((char *)p + offsetof(struct plugvm_start_ctx, status), &status, sizeof(status));
}

int cpu_hotplug_init(struct vm *vm)
{
	const struct acpi_cpu_hotplug_ops ops = { NULL, on_raise_gpe, on_eject, on_ost };
	struct cpu_hotplug *h = calloc(1, sizeof(*h));
	struct acpi_cpu_hotplug_ops o = ops;
	int ret;

	if (!h)
		return -ENOMEM;
	h->vm = vm;
	o.opaque = h;
	h->eject_pending = calloc(vm->cfg->max_cpus, 1);
	h->eject_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ret = h->eject_pending && h->eject_fd >= 0 ? 0 : -ENOMEM;
	if (!ret)
		ret = acpi_cpu_hotplug_init(&h->regs, vm->cfg->max_cpus, vm->cfg->nr_cpus, &o);
	if (!ret)
		ret = bus_register(&vm->pio, PLUGVM_PORT_CPUHP, ACPI_CPU_HOTPLUG_LEGACY_LEN,
				   block_io, h, "acpi-cpu-hotplug");
	if (!ret)
		ret = bus_register(&vm->pio, PLUGVM_PORT_HOTPLUG_REPORT,
				   PLUGVM_PORT_HOTPLUG_REPORT_LEN, report_io, h, "hotplug-report");
	if (!ret)
		ret = bus_register(&vm->pio, PLUGVM_PORT_DIRECT_START, PLUGVM_PORT_DIRECT_START_LEN,
				   start_io, h, "direct-start");
	if (ret) {
		log_error("cpu-hotplug: %s", strerror(-ret));
		acpi_cpu_hotplug_exit(&h->regs);
		if (h->eject_fd >= 0)
			close(h->eject_fd);
		free(h->eject_pending);
		free(h);
		return ret;
	}
	pthread_mutex_init(&h->lock, NULL);
	vm->cpuhp = h;
	return 0;
}

int cpu_hotplug_plug(struct vm *vm, unsigned slot)
{
	struct cpu_hotplug *h = vm->cpuhp;
	int ret;

	pthread_mutex_lock(&h->lock);
	ret = acpi_cpu_hotplug_plug(&h->regs, slot);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

int cpu_hotplug_unplug_request(struct vm *vm, unsigned slot)
{
	struct cpu_hotplug *h = vm->cpuhp;
	int ret;

	pthread_mutex_lock(&h->lock);
	ret = acpi_cpu_hotplug_unplug_request(&h->regs, slot);
	pthread_mutex_unlock(&h->lock);
	return ret;
}

bool cpu_hotplug_present(struct vm *vm, unsigned slot)
{
	struct cpu_hotplug *h = vm->cpuhp;
	bool present;

	pthread_mutex_lock(&h->lock);
	present = slot < h->regs.nr_slots && h->regs.slots[slot].present;
	pthread_mutex_unlock(&h->lock);
	return present;
}

int cpu_hotplug_eject_fd(const struct vm *vm)
{
	return vm->cpuhp ? vm->cpuhp->eject_fd : -1;
}

void cpu_hotplug_process_ejects(struct vm *vm)
{
	struct cpu_hotplug *h = vm->cpuhp;
	uint64_t n;
	unsigned slot;

	if (!h)
		return;
	if (read(h->eject_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("cpu-hotplug: eventfd: %s", strerror(errno));
	for (slot = 0; slot < vm->cfg->max_cpus; slot++) {
		struct json_object *data;
		bool pending;
		char path[64];

		pthread_mutex_lock(&h->lock);
		pending = h->eject_pending[slot];
		h->eject_pending[slot] = 0;
		pthread_mutex_unlock(&h->lock);
		if (!pending)
			continue;
		/* The thread leaves KVM_RUN and ends; KVM keeps the fd: park it for reuse. */
		vcpu_stop_and_join(&vm->vcpus[slot]);
		log_info("vCPU %u ejected by the guest: parked", slot);
		if (!vm->qmp)
			continue;
		control_cpu_path(vm, slot, path, sizeof(path));
		data = json_object_new_object();
		if (vm->cpu_ids && vm->cpu_ids[slot])
			json_object_object_add(data, "device",
					       json_object_new_string(vm->cpu_ids[slot]));
		json_object_object_add(data, "path", json_object_new_string(path));
		qmp_server_event(vm->qmp, "DEVICE_DELETED", data);
		control_cpu_gone(vm, slot);
	}
}

void cpu_hotplug_exit(struct vm *vm)
{
	struct cpu_hotplug *h = vm->cpuhp;

	if (!h)
		return;
	acpi_cpu_hotplug_exit(&h->regs);
	close(h->eject_fd);
	free(h->eject_pending);
	pthread_mutex_destroy(&h->lock);
	free(h);
	vm->cpuhp = NULL;
}
