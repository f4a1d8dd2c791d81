// SPDX-License-Identifier: MIT
/*
 * The paravirt CPU hotplug port (vmm/devices/hotplug_pv.c) as a guest drives it: LISTEN
 * (refused for bad vectors, destinations, areas and reserved fields, with nothing changed),
 * the claim read (all ones before LISTEN; then every present slot and pending event in the
 * area, once), DONE (the report and the block's _OST and eject in one command; refused
 * before LISTEN, for APIC IDs past maxcpus, bad ops, and an eject of CPU 0), and the
 * notification moving from the GPE to the MSI.
 */
#include "tests/unit/unit.h"

#include <stddef.h>

#include "plugvm_abi.h"
#include "plugvm_hotplug.h"
#include "vmm/devices/hotplug_pv.h"
#include "vmm/vm.h"

#define CMD_GPA	 0x1000
#define AREA_GPA 0x2000

static struct vm vm;
static struct vm_config cfg;
static struct acpi_cpu_hotplug block;
static struct hotplug_pv pv;

static struct {
	unsigned gpe, msi, ost, eject, report;
	uint32_t vector, dest, ost_event, ost_status;
	unsigned apic_id;
	bool online;
	int32_t result;
	uint64_t guest_ns;
} seen;

static void on_gpe(void *opaque)
{
	(void)opaque;
	seen.gpe++;
}

static void on_eject(void *opaque, unsigned slot)
{
	(void)opaque;
	(void)slot;
	seen.eject++;
}

static void on_ost(void *opaque, unsigned slot, uint32_t event, uint32_t status)
{
	(void)opaque;
	(void)slot;
	seen.ost++;
	seen.ost_event = event;
	seen.ost_status = status;
}

static void on_notify_pv(void *opaque)
{
	(void)opaque;
	hotplug_pv_notify(&pv);
}

static void on_msi(void *opaque, uint32_t vector, uint32_t dest)
{
	(void)opaque;
	seen.msi++;
	seen.vector = vector;
	seen.dest = dest;
}

static void on_report(void *opaque, unsigned apic_id, bool online, int32_t result,
		      uint64_t guest_ns)
{
	(void)opaque;
	seen.report++;
	seen.apic_id = apic_id;
	seen.online = online;
	seen.result = result;
	seen.guest_ns = guest_ns;
}

static int setup(void **state)
{
	static const struct acpi_cpu_hotplug_ops bops = { NULL, on_gpe, on_eject, on_ost,
							  on_notify_pv };
	static const struct hotplug_pv_ops pops = { .notify = on_msi, .report = on_report };

	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&seen, 0, sizeof(seen));
	cfg.max_cpus = 8;
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	assert_int_equal(mem_init(&vm.mem, 1u << 20), 0);
	assert_int_equal(acpi_cpu_hotplug_init(&block, 8, 2, &bops), 0);
	assert_int_equal(hotplug_pv_init(&pv, &vm, &block, &pops), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	acpi_cpu_hotplug_exit(&block);
	mem_destroy(&vm.mem);
	return 0;
}

/* The guest's command at CMD_GPA, its OUT, and the status plugvm wrote back. */
static uint32_t command(const struct plugvm_hotplug_cmd *c)
{
	struct plugvm_hotplug_cmd *g = mem_gpa_ptr(&vm.mem, CMD_GPA, sizeof(*g));
	uint32_t gpa = CMD_GPA;
	uint8_t data[4];

	*g = *c;
	g->status = 0xdead;
	memcpy(data, &gpa, 4);
	assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_HOTPLUG_PV, data, 4, 1, true));
	return g->status;
}

static uint32_t claim(void)
{
	uint8_t data[4];
	uint32_t n;

	assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_HOTPLUG_PV, data, 4, 1, false));
	memcpy(&n, data, 4);
	return n;
}

static struct plugvm_hotplug_events *area(void)
{
	return mem_gpa_ptr(&vm.mem, AREA_GPA, sizeof(struct plugvm_hotplug_events));
}

static const struct plugvm_hotplug_cmd listen = {
	.cmd = PLUGVM_HOTPLUG_CMD_LISTEN, .area = AREA_GPA, .vector = 0xee, .dest_apic_id = 0
};

static void test_listen_refusals_change_nothing(void **state)
{
	struct plugvm_hotplug_cmd c;

	(void)state;
	c = listen;
	c.vector = 0x1f;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EINVAL);
	c = listen;
	c.vector = 0xff;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EINVAL);
	c = listen;
	c.dest_apic_id = 256;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EINVAL);
	c = listen;
	c.reserved = 1;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EINVAL);
	c = listen;
	c.area = AREA_GPA + 4;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EADDR);
	c = listen;
	c.area = (1u << 20) - 8; /* runs past RAM */
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EADDR);
	c = listen;
	c.cmd = 9;
	assert_int_equal(command(&c), PLUGVM_HOTPLUG_EINVAL);
	/* Nobody listens: a claim reads ones, an event is a GPE. */
	assert_int_equal(claim(), ~0u);
	assert_int_equal(acpi_cpu_hotplug_pv_claim(&block, area()->present, area()->insert,
						   area()->remove, PLUGVM_HOTPLUG_WORDS),
			 0);
	assert_false(block.modern);
	block.modern = true;
	assert_int_equal(acpi_cpu_hotplug_plug(&block, 3), 0);
	assert_int_equal(seen.gpe, 1);
	assert_int_equal(seen.msi, 0);
}

static void test_listen_claim_done(void **state)
{
	struct plugvm_hotplug_cmd done = { .cmd = PLUGVM_HOTPLUG_CMD_DONE,
					   .apic_id = 3,
					   .op = PLUGVM_HOTPLUG_OP_ONLINE,
					   .guest_ns = 1234 };

	(void)state;
	/* A CPU plugged before the guest listened (legacy block: no event) is present. */
	assert_int_equal(acpi_cpu_hotplug_plug(&block, 5), 0);
	assert_int_equal(command(&listen), PLUGVM_HOTPLUG_OK);
	assert_int_equal(claim(), 0);
	assert_int_equal(area()->present[0], 0x23);
	/* From now on: an MSI per event, none through the GPE. */
	assert_int_equal(acpi_cpu_hotplug_plug(&block, 3), 0);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&block, 1), 0);
	assert_int_equal(seen.msi, 2);
	assert_int_equal(seen.vector, 0xee);
	assert_int_equal(seen.dest, 0);
	assert_int_equal(seen.gpe, 1); /* the plug of 5, before LISTEN */
	assert_int_equal(claim(), 2);
	assert_int_equal(area()->insert[0], 1u << 3);
	assert_int_equal(area()->remove[0], 1u << 1);
	assert_int_equal(area()->present[0], 0x2b);
	assert_int_equal(claim(), 0);
	assert_int_equal(area()->insert[0] | area()->remove[0], 0);
	/* The insert done: _OST source 1 and the report, one command. */
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_OK);
	assert_int_equal(seen.ost_event, 1);
	assert_int_equal(seen.ost_status, 0);
	assert_int_equal(seen.report, 1);
	assert_true(seen.online);
	assert_int_equal(seen.guest_ns, 1234);
	/* The removal done: _OST source 3, the eject, the report. */
	done.apic_id = 1;
	done.op = PLUGVM_HOTPLUG_OP_OFFLINE;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_OK);
	assert_int_equal(seen.ost_event, 3);
	assert_int_equal(seen.eject, 1);
	assert_int_equal(seen.report, 2);
	assert_false(seen.online);
	assert_false(acpi_cpu_hotplug_present(&block, 1));
	/* A removal refused: _OST failure, no eject. */
	done.apic_id = 3;
	done.result = -16;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_OK);
	assert_int_equal(seen.ost_status, 1);
	assert_int_equal(seen.eject, 1);
	assert_int_equal(seen.result, -16);
	/* After a reset nobody listens. */
	hotplug_pv_reset(&pv);
	assert_int_equal(claim(), ~0u);
}

static void test_done_refusals(void **state)
{
	struct plugvm_hotplug_cmd done = { .cmd = PLUGVM_HOTPLUG_CMD_DONE,
					   .apic_id = 1,
					   .op = PLUGVM_HOTPLUG_OP_OFFLINE };

	(void)state;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_ESTATE); /* before LISTEN */
	assert_int_equal(command(&listen), PLUGVM_HOTPLUG_OK);
	done.apic_id = 8;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_EINVAL);
	done.apic_id = 1;
	done.op = 3;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_EINVAL);
	done.op = PLUGVM_HOTPLUG_OP_OFFLINE;
	done.reserved = 7;
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_EINVAL);
	done.reserved = 0;
	done.vector = 0xee; /* a LISTEN field in a DONE */
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_EINVAL);
	done.vector = 0;
	done.apic_id = 0; /* the boot CPU is never ejected */
	assert_int_equal(command(&done), PLUGVM_HOTPLUG_ESTATE);
	assert_int_equal(seen.eject, 0);
	assert_int_equal(seen.report, 0);
	assert_true(acpi_cpu_hotplug_present(&block, 0));
	/* Other access shapes: ignored, reads of anything but the claim are ones. */
	{
		uint8_t data[8] = { 0 };

		assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_HOTPLUG_PV, data, 2, 1, false));
		assert_int_equal(data[0], 0xff);
		assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_HOTPLUG_PV + 1, data, 1, 1, true));
	}
	assert_int_equal(seen.report, 0);
}

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_listen_refusals_change_nothing),
	  UNIT_TEST_FIXTURE(test_listen_claim_done), UNIT_TEST_FIXTURE(test_done_refusals))
