// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: the CPU hotplug devices a guest writes to, as register-write programs
 * on the real I/O bus: QEMU's ACPI CPU hotplug block (vmm/devices/acpi_cpu_hotplug.c) and
 * plugvm's paravirt report, direct-start and hotplug ports (hotplug_report.c, direct_start.c,
 * hotplug_pv.c, pv_port.c), with the host's plug and unplug requests interleaved. The input: a byte of
 * slots (1-16), a byte of "running" bits for the first 8 APIC IDs, then 8-byte steps:
 *   op (1), arg (1), value (4), offset (2)
 *   op % 8: 0 write to the block at +arg % 14 (size 1 << (op >> 3) % 4), 1 read from it
 *           (arg >= 0x80: a claim, IN from the paravirt hotplug port), 2 / 3 OUT of `value`
 *           to the report (arg >= 0x80: the paravirt hotplug port) / start port (size as
 *           above, arg % 4 + 1 = count for string I/O), 4 store `value` in guest RAM at `offset`, 5 store `value` in the
 *           high half of the 8 bytes at `offset`, 6 host plug of slot arg, 7 host unplug
 *           request of slot arg.
 * The devices' callbacks check what they are told: only present, non-boot slots are
 * ejected, only slots below maxcpus reach _OST or reports, a direct start only reaches
 * the lifecycle with a running APIC ID and addresses inside guest RAM, and a paravirt
 * notification only names a vector the protocol allows and an APIC ID below 256.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_abi.h"
#include "plugvm_hotplug.h"
#include "vmm/bus.h"
#include "vmm/config/config.h"
#include "vmm/devices/acpi_cpu_hotplug.h"
#include "vmm/devices/direct_start.h"
#include "vmm/devices/hotplug_pv.h"
#include "vmm/devices/hotplug_report.h"
#include "vmm/log.h"
#include "vmm/mem.h"
#include "vmm/vm.h"
#include "vmm/x86/cpu.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RAM (64u << 10)

static struct vm vm;
static struct vm_config cfg;
static struct acpi_cpu_hotplug block;
static struct direct_start start;
static struct hotplug_report report;
static struct hotplug_pv pv;
static uint8_t running_bits;
static bool present[16];

static void raise_gpe(void *opaque)
{
	(void)opaque;
}

static void notify_pv(void *opaque)
{
	(void)opaque;
	hotplug_pv_notify(&pv);
}

static void on_msi(void *opaque, uint32_t vector, uint32_t dest)
{
	(void)opaque;
	if (vector < PLUGVM_HOTPLUG_VECTOR_MIN || vector > PLUGVM_HOTPLUG_VECTOR_MAX || dest > 255)
		abort();
}

static void on_eject(void *opaque, unsigned slot)
{
	(void)opaque;
	if (slot == 0 || slot >= cfg.max_cpus || !present[slot])
		abort();
	present[slot] = false;
}

static void on_ost(void *opaque, unsigned slot, uint32_t event, uint32_t status)
{
	(void)opaque;
	(void)event;
	(void)status;
	if (slot >= cfg.max_cpus)
		abort();
}

static bool on_running(void *opaque, unsigned apic_id)
{
	(void)opaque;
	if (apic_id >= cfg.max_cpus)
		abort();
	return apic_id < 8 && (running_bits >> apic_id) & 1;
}

static bool in_ram(uint64_t gpa, uint64_t len)
{
	return gpa < RAM && len <= RAM - gpa;
}

static int on_start(void *opaque, unsigned apic_id, const struct long_mode_start *r)
{
	(void)opaque;
	if (!on_running(NULL, apic_id) || !in_ram(r->entry, 16) || r->stack < 8 ||
	    !in_ram(r->stack - 8, 8) || (r->cr3 & 0xfff) || !in_ram(r->cr3, 4096))
		abort();
	return 0;
}

static void on_report(void *opaque, unsigned apic_id, bool online, int32_t result,
		      uint64_t guest_ns)
{
	(void)opaque;
	(void)online;
	(void)result;
	(void)guest_ns;
	if (apic_id >= cfg.max_cpus)
		abort();
}

static void setup(void)
{
	static const struct direct_start_ops sops = { .running = on_running, .start = on_start };
	static const struct hotplug_report_ops rops = { .report = on_report };
	static const struct hotplug_pv_ops pops = { .notify = on_msi, .report = on_report };

	vm.cfg = &cfg;
	vm.pio.name = "pio";
	if (mem_init(&vm.mem, RAM) || direct_start_init(&start, &vm, &sops) ||
	    hotplug_report_init(&report, &vm, &rops) || hotplug_pv_init(&pv, &vm, &block, &pops))
		abort();
	log_set_level(LOG_ERROR); /* the devices' guest warnings */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct acpi_cpu_hotplug_ops bops = {
		.raise_gpe = raise_gpe, .eject = on_eject, .ost = on_ost, .notify_pv = notify_pv
	};
	unsigned nr_present, i;
	size_t off;

	if (size < 2)
		return 0;
	if (!vm.mem.nr_regions)
		setup();
	cfg.max_cpus = 1 + data[0] % 16;
	nr_present = 1 + (data[0] >> 4) % cfg.max_cpus;
	running_bits = data[1];
	memset(vm.mem.regions[0].hva, 0, RAM);
	memset(present, 0, sizeof(present));
	for (i = 0; i < nr_present; i++)
		present[i] = true;
	/* The block's range stays registered (same object): only its state is renewed. */
	if (acpi_cpu_hotplug_init(&block, cfg.max_cpus, nr_present, &bops))
		abort();
	if (vm.pio.nr < 4 && acpi_cpu_hotplug_attach(&block, &vm.pio, PLUGVM_PORT_CPUHP))
		abort();
	hotplug_pv_reset(&pv);
	for (off = 2; off + 8 <= size; off += 8) {
		uint8_t op = data[off], arg = data[off + 1], buf[4 * 16];
		unsigned sz = 1u << ((op >> 3) % 4), count = 1 + arg % 4;
		uint32_t v;
		uint16_t at;

		memcpy(&v, data + off + 2, 4);
		memcpy(&at, data + off + 6, 2);
		switch (op % 8) {
		case 0:
		case 1:
			memcpy(buf, &v, 4);
			if (op % 8 == 1 && arg >= 0x80)
				bus_dispatch(&vm.pio, 0, PLUGVM_PORT_HOTPLUG_PV, buf, 4, 1, false);
			else
				bus_dispatch(&vm.pio, 0, PLUGVM_PORT_CPUHP + arg % 14, buf, sz, 1,
					     op % 8 == 0);
			break;
		case 2:
		case 3:
			for (i = 0; i < count; i++)
				memcpy(buf + 4 * i, &v, 4);
			bus_dispatch(&vm.pio, 0,
				     op % 8 == 3   ? PLUGVM_PORT_DIRECT_START
				     : arg >= 0x80 ? PLUGVM_PORT_HOTPLUG_PV
						   : PLUGVM_PORT_HOTPLUG_REPORT,
				     buf, sz, count, true);
			break;
		case 4:
			if (at <= RAM - 4)
				memcpy((uint8_t *)vm.mem.regions[0].hva + at, &v, 4);
			break;
		case 5:
			if (at <= RAM - 8)
				memcpy((uint8_t *)vm.mem.regions[0].hva + at + 4, &v, 4);
			break;
		case 6:
			if (acpi_cpu_hotplug_plug(&block, arg % cfg.max_cpus) == 0)
				present[arg % cfg.max_cpus] = true;
			break;
		default:
			acpi_cpu_hotplug_unplug_request(&block, arg % cfg.max_cpus);
			break;
		}
	}
	acpi_cpu_hotplug_exit(&block);
	return 0;
}
