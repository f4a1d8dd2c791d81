// SPDX-License-Identifier: MIT
/*
 * Weak stand-ins for the VMM modules a unit test does not link: each does nothing (or
 * says "none", "not connected") unless the test defines its own, and a test that links
 * the real module gets the real one. One place for them, instead of a copy in every test.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vmm/autoscale.h"
#include "vmm/control/agent.h"
#include "vmm/chaos.h"
#include "vmm/control/control_agent.h"
#include "vmm/control/control_autoscale.h"
#include "vmm/devices/acpi_pm.h"
#include "vmm/devices/latency.h"
#include "vmm/devices/virtio_console.h"
#include "vmm/kvm.h"
#include "vmm/vm.h"

#define WEAK __attribute__((weak))

/* ---- the VM's stop ---- */
WEAK void vm_request_stop(struct vm *vm, int status)
{
	(void)vm;
	(void)status;
}

WEAK bool vm_stopping(struct vm *vm)
{
	(void)vm;
	return false;
}

WEAK void vm_request_reset(struct vm *vm)
{
	(void)vm;
}

WEAK void vm_guest_poweroff(struct vm *vm)
{
	(void)vm;
}

WEAK void vm_guest_reset(struct vm *vm)
{
	(void)vm;
}

WEAK bool vm_has_machine(const struct vm *vm)
{
	return vm->cpus != NULL; /* vm.c's */
}

/* ---- KVM's interrupt lines and --chaos ---- */
WEAK int kvm_irq_line(struct kvm *k, uint32_t gsi, int level)
{
	(void)k;
	(void)gsi;
	(void)level;
	return 0;
}

WEAK int kvm_signal_msi(struct kvm *k, uint32_t dest, uint32_t vector)
{
	(void)k;
	(void)dest;
	(void)vector;
	return 0;
}

WEAK int chaos_irq_line(struct chaos *c, uint32_t gsi, int level)
{
	(void)c;
	(void)gsi;
	(void)level;
	return 0;
}

WEAK void chaos_vcpu_stall(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	(void)c;
	(void)id;
	(void)stop;
}

WEAK void chaos_vcpu_start(struct chaos *c, unsigned id, const atomic_bool *stop)
{
	(void)c;
	(void)id;
	(void)stop;
}

/* ---- devices ---- */
WEAK void acpi_pm_raise_gpe(struct vm *vm, unsigned bit)
{
	(void)vm;
	(void)bit;
}

WEAK void acpi_pm_power_button(struct vm *vm)
{
	(void)vm;
}

WEAK int virtio_agent_send(struct vm *vm, const void *msg, size_t len)
{
	(void)vm;
	(void)msg;
	(void)len;
	return -ENODEV;
}

WEAK int latency_read(struct vm *vm, struct latency_snapshot *s)
{
	(void)vm;
	(void)s;
	return -ENODATA; /* the guest registered nothing */
}

/* ---- the autoscaler and its QMP commands: off ---- */
WEAK const struct qmp_command control_autoscale_commands[] = { { NULL, NULL, NULL } };

WEAK void control_autoscale_start(struct vm *vm)
{
	(void)vm;
}

WEAK void autoscale_manual(struct vm *vm, enum autoscale_op op, unsigned slot)
{
	(void)vm;
	(void)op;
	(void)slot;
}

WEAK bool autoscale_adopt(struct vm *vm, unsigned slot)
{
	(void)vm;
	(void)slot;
	return false;
}

WEAK void autoscale_cpus_event(struct vm *vm, const struct cpus_event *e)
{
	(void)vm;
	(void)e;
}

/* ---- the agent's QMP commands and events ---- */
WEAK const struct qmp_command control_agent_commands[] = { { NULL, NULL, NULL } };

WEAK void control_agent_event(struct vm *vm, const struct plugvm_agent_msg *m)
{
	(void)vm;
	(void)m;
}

WEAK void control_agent_free(struct vm *vm)
{
	(void)vm;
}

WEAK void agent_set_event_fn(struct vm *vm,
			     void (*fn)(struct vm *vm, const struct plugvm_agent_msg *m))
{
	(void)vm;
	(void)fn;
}
