// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/acpi_cpu_hotplug.c against QEMU 7.2's documented behaviour:
 * the legacy bitmap and the guest's switch recipe, hot-add in both modes (no insert event
 * for a CPU added before the switch), the next-event search with wrap-around, clearing
 * events, eject (never the boot CPU or an absent one), _OST reporting, arch IDs, unplug
 * requests and their refusals, hostile accesses (bad sizes, reserved values,
 * out-of-range selectors), the block on the port bus at each machine's base, and the
 * paravirt front end over the same slots (listen, claim, done).
 */
#include "tests/unit/unit.h"

#include <errno.h>

#include "common/plugvm_abi.h"
#include "vmm/bus.h"
#include "vmm/devices/acpi_cpu_hotplug.h"

struct calls {
	unsigned gpe, eject, ost, pv;
	unsigned last_slot;
	uint32_t ost_event, ost_status;
};

static void on_gpe(void *opaque)
{
	((struct calls *)opaque)->gpe++;
}

static void on_eject(void *opaque, unsigned slot)
{
	struct calls *c = opaque;

	c->eject++;
	c->last_slot = slot;
}

static void on_ost(void *opaque, unsigned slot, uint32_t event, uint32_t status)
{
	struct calls *c = opaque;

	c->ost++;
	c->last_slot = slot;
	c->ost_event = event;
	c->ost_status = status;
}

static void on_pv(void *opaque)
{
	((struct calls *)opaque)->pv++;
}

static struct calls calls;

static void init(struct acpi_cpu_hotplug *d, unsigned slots, unsigned present)
{
	const struct acpi_cpu_hotplug_ops ops = { &calls, on_gpe, on_eject, on_ost, on_pv };

	memset(&calls, 0, sizeof(calls));
	assert_int_equal(acpi_cpu_hotplug_init(d, slots, present, &ops), 0);
}

/* The guest's register accesses, by name: the selector, a command, the status, data. */
static void select_slot(struct acpi_cpu_hotplug *d, uint32_t slot)
{
	acpi_cpu_hotplug_write(d, 0, 4, slot);
}

static void command(struct acpi_cpu_hotplug *d, uint8_t cmd)
{
	acpi_cpu_hotplug_write(d, 5, 1, cmd);
}

static void control(struct acpi_cpu_hotplug *d, uint8_t ctl)
{
	acpi_cpu_hotplug_write(d, 4, 1, ctl);
}

static uint32_t status(struct acpi_cpu_hotplug *d)
{
	return acpi_cpu_hotplug_read(d, 4, 1);
}

static uint32_t data(struct acpi_cpu_hotplug *d)
{
	return acpi_cpu_hotplug_read(d, 8, 4);
}

/* _OST for the selected slot: the event, then the status (what reports it). */
static void ost(struct acpi_cpu_hotplug *d, uint32_t event, uint32_t st)
{
	command(d, ACPI_CPU_HOTPLUG_CMD_OST_EVENT);
	acpi_cpu_hotplug_write(d, 8, 4, event);
	command(d, ACPI_CPU_HOTPLUG_CMD_OST_STATUS);
	acpi_cpu_hotplug_write(d, 8, 4, st);
}

/* The guest's recipe: selector 0 twice, command 0, then data 2 reads 0 in modern mode. */
static void switch_to_modern(struct acpi_cpu_hotplug *d)
{
	acpi_cpu_hotplug_write(d, 0, 4, 0);
	acpi_cpu_hotplug_write(d, 0, 4, 0);
	command(d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(acpi_cpu_hotplug_read(d, 0, 4), 0);
	assert_true(d->modern);
}

static void test_legacy_bitmap_and_switch(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 12, 3);
	assert_false(d.modern);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 0, 1), 0x07);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 0, 4), 0x07);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 1, 1), 0);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 31, 1), 0);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 40, 4), 0); /* past the bitmap */
	/* Writes other than 0 at offset 0 do nothing in legacy mode. */
	acpi_cpu_hotplug_write(&d, 0, 1, 5);
	acpi_cpu_hotplug_write(&d, 4, 1, 0);
	assert_false(d.modern);
	switch_to_modern(&d);
	/* Modern now: offset 4 is the status of the selected CPU (0, present, no events). */
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	/* One-way: another 0 at offset 0 just selects CPU 0. */
	acpi_cpu_hotplug_write(&d, 0, 4, 0);
	assert_true(d.modern);
	acpi_cpu_hotplug_exit(&d);
}

static void test_many_slots_start_modern(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 300, 1);
	assert_true(d.modern);
	acpi_cpu_hotplug_exit(&d);
	assert_int_equal(acpi_cpu_hotplug_init(&d, 0, 0, &(struct acpi_cpu_hotplug_ops){ 0 }),
			 -EINVAL);
	assert_int_equal(acpi_cpu_hotplug_init(&d, 2, 3, &(struct acpi_cpu_hotplug_ops){ 0 }),
			 -EINVAL);
}

static void test_plug_in_legacy_mode(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 8, 1);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 5), 0);
	assert_int_equal(calls.gpe, 1);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 0, 1), 0x21);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 5), -EEXIST);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 8), -EINVAL);
	/* No unplug before the guest switched. */
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 5), -EOPNOTSUPP);
	switch_to_modern(&d);
	/* Present, but no insert event (QEMU's gotcha): nothing to find. */
	select_slot(&d, 0);
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(data(&d), 0);
	select_slot(&d, 5);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	acpi_cpu_hotplug_exit(&d);
}

static void test_hot_add_flow(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 8, 2);
	switch_to_modern(&d);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 6), 0);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 3), 0);
	assert_int_equal(calls.gpe, 2);
	/* The search starts at the selector and wraps: from 4 it finds 6, then 3. */
	select_slot(&d, 4);
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(data(&d), 6);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED | ACPI_CPU_HOTPLUG_STS_INSERT);
	/* Its APIC ID, then acknowledge. */
	command(&d, ACPI_CPU_HOTPLUG_CMD_ARCH_ID);
	assert_int_equal(data(&d), 6);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 0, 4), 0);
	control(&d, ACPI_CPU_HOTPLUG_CTL_CLEAR_INSERT);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	/* _OST: event 1 (insert), status 0 (success), reported for the selected slot. */
	ost(&d, 1, 0);
	assert_int_equal(calls.ost, 1);
	assert_int_equal(calls.last_slot, 6);
	assert_int_equal(calls.ost_event, 1);
	assert_int_equal(calls.ost_status, 0);
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(data(&d), 3);
	control(&d, ACPI_CPU_HOTPLUG_CTL_CLEAR_INSERT);
	/* Nothing left: the selector stays. */
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(data(&d), 3);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	acpi_cpu_hotplug_exit(&d);
}

static void test_hot_remove_flow(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 4, 3);
	switch_to_modern(&d);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 0), -EPERM);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 3), -ENODEV);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 4), -EINVAL);
	assert_int_equal(calls.gpe, 0);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 2), 0);
	assert_int_equal(calls.gpe, 1);
	select_slot(&d, 0);
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(data(&d), 2);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED | ACPI_CPU_HOTPLUG_STS_REMOVE);
	/* One action per write: clear-remove wins over eject. */
	acpi_cpu_hotplug_write(&d, 4, 1,
			       ACPI_CPU_HOTPLUG_CTL_CLEAR_REMOVE | ACPI_CPU_HOTPLUG_CTL_EJECT);
	assert_int_equal(calls.eject, 0);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	control(&d, ACPI_CPU_HOTPLUG_CTL_EJECT);
	assert_int_equal(calls.eject, 1);
	assert_int_equal(calls.last_slot, 2);
	assert_int_equal(status(&d), 0);
	/* Ejecting again, an absent CPU, or the boot CPU: ignored. */
	control(&d, ACPI_CPU_HOTPLUG_CTL_EJECT);
	select_slot(&d, 0);
	control(&d, ACPI_CPU_HOTPLUG_CTL_EJECT);
	assert_int_equal(calls.eject, 1);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	/* The slot can come back. */
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 2), 0);
	acpi_cpu_hotplug_exit(&d);
}

static void test_hostile_accesses(void **state)
{
	struct acpi_cpu_hotplug d;
	uint64_t bad;

	(void)state;
	init(&d, 4, 2);
	switch_to_modern(&d);
	bad = d.bad_writes;
	/* Out-of-range selector: reads are 0, writes other than the selector do nothing. */
	select_slot(&d, 0xffffffff);
	assert_int_equal(status(&d), 0);
	assert_int_equal(data(&d), 0);
	control(&d, ACPI_CPU_HOTPLUG_CTL_EJECT);
	command(&d, ACPI_CPU_HOTPLUG_CMD_OST_STATUS);
	acpi_cpu_hotplug_write(&d, 8, 4, 0);
	assert_int_equal(calls.eject + calls.ost, 0);
	assert_true(d.bad_writes > bad);
	/* Reserved command values leave the command unchanged. */
	select_slot(&d, 1);
	command(&d, ACPI_CPU_HOTPLUG_CMD_ARCH_ID);
	acpi_cpu_hotplug_write(&d, 5, 1, 4);
	acpi_cpu_hotplug_write(&d, 5, 1, 0xff);
	assert_int_equal(d.command, ACPI_CPU_HOTPLUG_CMD_ARCH_ID);
	/* Odd sizes and reserved offsets. */
	assert_int_equal(acpi_cpu_hotplug_read(&d, 4, 3), 0);
	acpi_cpu_hotplug_write(&d, 4, 8, ACPI_CPU_HOTPLUG_CTL_EJECT);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 6, 1), 0);
	acpi_cpu_hotplug_write(&d, 7, 1, 0xff);
	acpi_cpu_hotplug_write(&d, 11, 1, 0xff);
	assert_int_equal(calls.eject, 0);
	/* A byte read of the selector's data truncates, as the port width says. */
	select_slot(&d, 1);
	command(&d, ACPI_CPU_HOTPLUG_CMD_NEXT_EVENT);
	assert_int_equal(acpi_cpu_hotplug_read(&d, 8, 1), 1);
	/* Reserved control bits: ignored, counted. */
	bad = d.bad_writes;
	acpi_cpu_hotplug_write(&d, 4, 1, 0xe1);
	assert_int_equal(d.bad_writes, bad + 1);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	acpi_cpu_hotplug_exit(&d);
}

static bool pio(struct bus *b, uint16_t port, uint8_t *v, unsigned size, bool is_write)
{
	return bus_dispatch(b, 0, port, v, size, 1, is_write);
}

/*
 * On the bus at `base` (pc 0xaf00, q35 0x0cd8), the block takes its 32 legacy bytes and no
 * more: the byte before and after are unclaimed (on q35 0x0cf8 is PCI's address port, not
 * ours), and the guest's switch and a modern status read work through the ports.
 */
static void check_attach(uint16_t base, uint16_t other)
{
	struct acpi_cpu_hotplug d;
	struct bus b = { .name = "pio" };
	uint8_t v[4] = { 0 };

	init(&d, 4, 2);
	assert_int_equal(acpi_cpu_hotplug_attach(&d, &b, base), 0);
	assert_true(pio(&b, base, v, 1, false));
	assert_int_equal(v[0], 0x03); /* legacy bitmap: APIC IDs 0 and 1 */
	assert_true(pio(&b, (uint16_t)(base + ACPI_CPU_HOTPLUG_LEGACY_LEN - 1), v, 1, false));
	assert_false(pio(&b, (uint16_t)(base + ACPI_CPU_HOTPLUG_LEGACY_LEN), v, 1, false));
	assert_false(pio(&b, (uint16_t)(base - 1), v, 1, false));
	assert_false(pio(&b, other, v, 1, false));
	memset(v, 0, sizeof(v));
	assert_true(pio(&b, base, v, 4, true)); /* the switch to modern, then selector 0 */
	assert_true(pio(&b, base, v, 4, true));
	assert_true(pio(&b, (uint16_t)(base + 4), v, 1, false));
	assert_int_equal(v[0], ACPI_CPU_HOTPLUG_STS_ENABLED);
	/* The same range twice is refused. */
	assert_int_equal(acpi_cpu_hotplug_attach(&d, &b, base), -EEXIST);
	acpi_cpu_hotplug_exit(&d);
}

static void test_attach_at_each_machines_base(void **state)
{
	(void)state;
	check_attach(PLUGVM_PORT_CPUHP, PLUGVM_PORT_ICH9_CPUHP);
	check_attach(PLUGVM_PORT_ICH9_CPUHP, PLUGVM_PORT_CPUHP);
	assert_int_equal(PLUGVM_PORT_ICH9_CPUHP + ACPI_CPU_HOTPLUG_LEGACY_LEN, 0x0cf8);
}

/*
 * Listening switches a legacy block to modern (so a plug is an insert event) and moves
 * every later notification from the GPE to notify_pv.
 */
static void test_pv_listen_turns_modern_and_notifies_pv(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 8, 1);
	assert_false(d.modern);
	acpi_cpu_hotplug_pv_listen(&d);
	assert_true(d.modern);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 3), 0);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 3), 0);
	assert_int_equal(calls.pv, 2);
	assert_int_equal(calls.gpe, 0);
	/* A reset forgets the listener: the GPE again, legacy again. */
	acpi_cpu_hotplug_reset(&d, 1);
	assert_false(d.modern);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 2), 0);
	assert_int_equal(calls.gpe, 1);
	assert_int_equal(calls.pv, 2);
	acpi_cpu_hotplug_exit(&d);
}

/* One claim: every present slot and every pending event, which it clears. */
static void test_pv_claim_takes_every_event_once(void **state)
{
	uint64_t present[2], insert[2], remove[2];
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 70, 2);
	acpi_cpu_hotplug_pv_listen(&d);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 5), 0);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 69), 0);
	assert_int_equal(acpi_cpu_hotplug_unplug_request(&d, 1), 0);
	memset(insert, 0xaa, sizeof(insert));
	assert_int_equal(acpi_cpu_hotplug_pv_claim(&d, present, insert, remove, 2), 3);
	assert_int_equal(present[0], (1ull << 0) | (1ull << 1) | (1ull << 5));
	assert_int_equal(present[1], 1ull << 5);
	assert_int_equal(insert[0], 1ull << 5);
	assert_int_equal(insert[1], 1ull << 5);
	assert_int_equal(remove[0], 1ull << 1);
	assert_int_equal(remove[1], 0);
	/* Claimed: neither the next claim nor the ACPI walk sees them again. */
	assert_int_equal(acpi_cpu_hotplug_pv_claim(&d, present, insert, remove, 2), 0);
	assert_int_equal(insert[0] | insert[1] | remove[0] | remove[1], 0);
	select_slot(&d, 5);
	assert_int_equal(status(&d), ACPI_CPU_HOTPLUG_STS_ENABLED);
	/* Fewer words than slots: the rest is not looked at. */
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 68), 0);
	assert_int_equal(acpi_cpu_hotplug_pv_claim(&d, present, insert, remove, 1), 0);
	assert_int_equal(acpi_cpu_hotplug_pv_claim(&d, present, insert, remove, 2), 1);
	acpi_cpu_hotplug_exit(&d);
}

/* Done: _OST as the block reports it, and the eject of a removal that succeeded. */
static void test_pv_done_reports_ost_and_ejects(void **state)
{
	struct acpi_cpu_hotplug d;

	(void)state;
	init(&d, 8, 1);
	acpi_cpu_hotplug_pv_listen(&d);
	assert_int_equal(acpi_cpu_hotplug_plug(&d, 2), 0);
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 2, true, 0), 0);
	assert_int_equal(calls.ost, 1);
	assert_int_equal(calls.ost_event, 1);
	assert_int_equal(calls.ost_status, 0);
	/* A refused removal: _OST failure, still present. */
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 2, false, -16), 0);
	assert_int_equal(calls.ost_event, 3);
	assert_int_equal(calls.ost_status, 1);
	assert_int_equal(calls.eject, 0);
	assert_true(acpi_cpu_hotplug_present(&d, 2));
	/* A removal done: _OST success, then the eject. */
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 2, false, 0), 0);
	assert_int_equal(calls.ost_status, 0);
	assert_int_equal(calls.eject, 1);
	assert_int_equal(calls.last_slot, 2);
	assert_false(acpi_cpu_hotplug_present(&d, 2));
	/* Never the boot CPU, never an absent slot, never past the slots. */
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 0, false, 0), -EPERM);
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 2, false, 0), -EPERM);
	assert_int_equal(acpi_cpu_hotplug_pv_done(&d, 8, true, 0), -EINVAL);
	assert_int_equal(calls.eject, 1);
	assert_true(acpi_cpu_hotplug_present(&d, 0));
	acpi_cpu_hotplug_exit(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy_bitmap_and_switch),
		cmocka_unit_test(test_many_slots_start_modern),
		cmocka_unit_test(test_plug_in_legacy_mode),
		cmocka_unit_test(test_hot_add_flow),
		cmocka_unit_test(test_hot_remove_flow),
		cmocka_unit_test(test_hostile_accesses),
		cmocka_unit_test(test_attach_at_each_machines_base),
		cmocka_unit_test(test_pv_listen_turns_modern_and_notifies_pv),
		cmocka_unit_test(test_pv_claim_takes_every_event_once),
		cmocka_unit_test(test_pv_done_reports_ost_and_ejects),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
