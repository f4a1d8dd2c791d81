// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/acpi_pm.c through the port bus, as the guest reaches it: the
 * PM timer read whole and by parts, the PM1 status write-one-to-clear, S5 (the guest's
 * power-off, handed to the VM's action), and the GPE0 block and SCI at each machine's ports
 * (pc: 0xafe0, 4 bytes; q35: 0x620, 16 bytes).
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <time.h>

#include "common/plugvm_abi.h"
#include "vmm/devices/acpi_pm.h"
#include "vmm/vm.h"
#include "vmm/x86/acpi_layout.h"

static struct vm vm;
static struct vm_config cfg;
static int stop_status = -1;
static unsigned poweroffs;
static int sci_level = -1; /* the SCI line as the device last set it */

int kvm_irq_line(struct kvm *k, uint32_t gsi, int level)
{
	(void)k;
	assert_int_equal(gsi, PLUGVM_SCI_IRQ);
	sci_level = level;
	return 0;
}

void vm_request_stop(struct vm *v, int status)
{
	(void)v;
	stop_status = status;
}

void vm_guest_poweroff(struct vm *v)
{
	(void)v;
	poweroffs++;
}

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	memset(&cfg, 0, sizeof(cfg)); /* machine: MACHINE_PC */
	vm.cfg = &cfg;
	stop_status = -1;
	poweroffs = 0;
	sci_level = -1;
	return acpi_pm_init(&vm);
}

static int teardown(void **state)
{
	(void)state;
	acpi_pm_exit(&vm);
	return 0;
}

/* A read of an unclaimed port: the bus fills 0xff and says no device took it. */
static bool claimed(uint16_t port)
{
	uint8_t b = 0;

	return bus_dispatch(&vm.pio, 0, port, &b, 1, 1, false);
}

static uint32_t in(uint16_t port, unsigned size)
{
	uint8_t b[4] = { 0 };

	assert_true(bus_dispatch(&vm.pio, 0, port, b, size, 1, false));
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void out(uint16_t port, unsigned size, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };

	assert_true(bus_dispatch(&vm.pio, 0, port, b, size, 1, true));
}

/*
 * Every 4-byte read is one instant: the counter never steps back (modulo its 24 bits). A
 * read that took the clock once per byte would let a carry between two of them make it jump
 * ahead by up to 255 (or 65535) ticks and the next one step back.
 */
static void test_timer_reads_are_never_torn(void **state)
{
	uint32_t prev = in(PLUGVM_PORT_PM_TMR, 4), v;
	unsigned i, back = 0;

	(void)state;
	for (i = 0; i < 1000000; i++) {
		v = in(PLUGVM_PORT_PM_TMR, 4);
		assert_int_equal(v >> 24, 0);
		if (((v - prev) & 0xffffff) >= 0x800000)
			back++;
		prev = v;
	}
	assert_int_equal(back, 0);
}

static void test_timer_runs_at_3_58_mhz(void **state)
{
	struct timespec t0, t1, d = { 0, 20 * 1000 * 1000 };
	uint32_t a, b;
	double hz;

	(void)state;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	a = in(PLUGVM_PORT_PM_TMR, 4);
	nanosleep(&d, NULL);
	b = in(PLUGVM_PORT_PM_TMR, 4);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	hz = ((b - a) & 0xffffff) /
	     ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	/* Both reads lie inside [t0, t1], so the rate can only come out low, and not by much. */
	assert_true(hz <= PLUGVM_PM_TMR_HZ * 1.0001);
	assert_true(hz > PLUGVM_PM_TMR_HZ * 0.5);
}

static void test_timer_by_parts_and_read_only(void **state)
{
	uint32_t lo, hi;

	(void)state;
	lo = in(PLUGVM_PORT_PM_TMR, 2);
	hi = in(PLUGVM_PORT_PM_TMR + 2, 2);
	assert_true(hi <= 0xff);
	(void)lo;
	out(PLUGVM_PORT_PM_TMR, 4, 0); /* ignored */
	assert_int_equal(in(PLUGVM_PORT_PM_TMR, 4) >> 24, 0);
}

static void test_power_button_status_and_s5(void **state)
{
	(void)state;
	acpi_pm_power_button(&vm);
	assert_int_not_equal(in(PLUGVM_PORT_PM1A_EVT, 2) & (1u << 8), 0);
	out(PLUGVM_PORT_PM1A_EVT, 2, 1u << 8); /* write one to clear */
	assert_int_equal(in(PLUGVM_PORT_PM1A_EVT, 2) & (1u << 8), 0);
	assert_int_equal(poweroffs, 0);
	out(PLUGVM_PORT_PM1A_CNT, 2, PLUGVM_S5_SLP_TYP << 10 | PLUGVM_PM1_CNT_SLP_EN);
	/* S5 is the guest's power-off: what follows is the VM's action (vm_guest_poweroff()). */
	assert_int_equal(poweroffs, 1);
	assert_int_equal(stop_status, -1);
}

/*
 * GPE0 where the machine's layout puts it, and nowhere else: status bytes in the first
 * half (write one to clear), enable bytes in the second, the SCI up exactly while an
 * enabled status bit is set; the CPU hotplug bit (2) and the last bit of the block latch,
 * a bit past it does not; the other machine's GPE0 ports stay unclaimed.
 */
static void check_gpe0(enum config_machine m, uint16_t base, unsigned len, uint16_t other)
{
	const struct acpi_layout *l = acpi_layout_of(m);
	unsigned half = len / 2, i;

	assert_non_null(l);
	assert_int_equal(l->gpe0_base, base);
	assert_int_equal(l->gpe0_len, len);
	acpi_pm_exit(&vm);
	memset(&vm, 0, sizeof(vm));
	cfg.machine = m;
	vm.cfg = &cfg;
	assert_int_equal(acpi_pm_init(&vm), 0);

	assert_true(claimed(base));
	assert_true(claimed((uint16_t)(base + len - 1)));
	assert_false(claimed((uint16_t)(base - 1)));
	assert_false(claimed((uint16_t)(base + len)));
	assert_false(claimed(other));
	for (i = 0; i < len; i++)
		assert_int_equal(in((uint16_t)(base + i), 1), 0);

	acpi_pm_raise_gpe(&vm, l->cpuhp_gpe_bit);
	assert_int_equal(in(base, 1), 1u << l->cpuhp_gpe_bit);
	assert_int_not_equal(sci_level, 1); /* not enabled yet */
	out((uint16_t)(base + half), 1, 1u << l->cpuhp_gpe_bit);
	assert_int_equal(in((uint16_t)(base + half), 1), 1u << l->cpuhp_gpe_bit);
	assert_int_equal(sci_level, 1);
	out(base, 1, 1u << l->cpuhp_gpe_bit); /* write one to clear */
	assert_int_equal(in(base, 1), 0);
	assert_int_equal(sci_level, 0);

	/* The last status bit of the block latches and raises the SCI through its enable. */
	acpi_pm_raise_gpe(&vm, 8 * half - 1);
	assert_int_equal(in((uint16_t)(base + half - 1), 1), 0x80);
	assert_int_equal(sci_level, 0);
	out((uint16_t)(base + len - 1), 1, 0x80);
	assert_int_equal(sci_level, 1);
	out((uint16_t)(base + half - 1), 1, 0x80);
	assert_int_equal(sci_level, 0);
	/* Past the block: ignored, nothing latched anywhere. */
	acpi_pm_raise_gpe(&vm, 8 * half);
	for (i = 0; i < half; i++)
		assert_int_equal(in((uint16_t)(base + i), 1), 0);
	/* A 4-byte read at the last byte: the bytes past the block read 0xff. */
	assert_int_equal(in((uint16_t)(base + len - 1), 4), 0xffffff80u);

	/* The PM block does not move with the machine. */
	assert_true(claimed(PLUGVM_PORT_PM1A_EVT));
	assert_true(claimed(PLUGVM_PORT_PM_TMR + 3));
	assert_false(claimed(PLUGVM_PORT_PM_BASE + PLUGVM_PORT_PM_LEN));
}

static void test_gpe0_at_each_machines_ports(void **state)
{
	(void)state;
	check_gpe0(MACHINE_PC, 0xafe0, 4, 0x620);
	check_gpe0(MACHINE_Q35, 0x620, 16, 0xafe0);
}

static void test_no_layout_no_device(void **state)
{
	(void)state;
	acpi_pm_exit(&vm);
	memset(&vm, 0, sizeof(vm));
	cfg.machine = (enum config_machine)2;
	vm.cfg = &cfg;
	assert_null(acpi_layout_of(cfg.machine));
	assert_int_equal(acpi_pm_init(&vm), -EINVAL);
	assert_null(vm.pm);
	assert_int_equal(vm.pio.nr, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gpe0_at_each_machines_ports, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_layout_no_device, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_reads_are_never_torn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_runs_at_3_58_mhz, setup, teardown),
		cmocka_unit_test_setup_teardown(test_timer_by_parts_and_read_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_power_button_status_and_s5, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
