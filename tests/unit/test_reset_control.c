// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/devices/reset_control.c through the port bus, as the guest reaches it:
 * a write with RST_CPU asks for one reset, SYS_RST reads back, other widths and bytes are
 * harmless.
 */
#include "tests/unit/unit.h"

#include "vmm/devices/reset_control.h"
#include "vmm/vm.h"

static struct vm vm;
static unsigned resets;

void vm_guest_reset(struct vm *v)
{
	assert_ptr_equal(v, &vm);
	resets++;
}

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	vm.pio.name = "pio";
	resets = 0;
	return reset_control_init(&vm);
}

static int teardown(void **state)
{
	(void)state;
	return 0;
}

static void io(uint16_t port, uint8_t *b, unsigned size, unsigned count, bool is_write)
{
	assert_true(bus_dispatch(&vm.pio, 0, port, b, size, count, is_write));
}

static uint8_t rd(void)
{
	uint8_t b = 0x5a;

	io(RESET_CONTROL_PORT, &b, 1, 1, false);
	return b;
}

static void wr(uint8_t v)
{
	io(RESET_CONTROL_PORT, &v, 1, 1, true);
}

/* QEMU's PIIX3/ICH9 register: bit 2 resets (bit 1 picks hard or soft; both are one here). */
static void test_rst_cpu_asks_for_one_reset(void **state)
{
	(void)state;
	assert_int_equal(rd(), 0);
	wr(0x02);
	assert_int_equal(resets, 0);
	assert_int_equal(rd(), 0x02); /* SYS_RST kept */
	wr(0xf9);
	assert_int_equal(rd(), 0);
	assert_int_equal(resets, 0);
	wr(0x06);
	assert_int_equal(resets, 1);
	wr(0x04);
	assert_int_equal(resets, 2);
	reset_control_reset();
	wr(0x02);
	reset_control_reset();
	assert_int_equal(rd(), 0);
}

/*
 * What a hostile guest can do: a 4-byte access (its first byte is the register, the rest
 * reads 0xff), and a `rep outsb` of many bytes, which asks for one reset at its first
 * RST_CPU byte and stops there.
 */
static void test_wide_and_repeated_accesses(void **state)
{
	uint8_t b[4] = { 0x02, 0x04, 0x04, 0x04 }, many[64];

	(void)state;
	io(RESET_CONTROL_PORT, b, 4, 1, true);
	assert_int_equal(resets, 0); /* bytes 1..3 are not the register */
	memset(b, 0, sizeof(b));
	io(RESET_CONTROL_PORT, b, 4, 1, false);
	assert_int_equal(b[0], 0x02);
	assert_int_equal(b[1], 0xff);
	assert_int_equal(b[3], 0xff);
	memset(many, 0x06, sizeof(many));
	io(RESET_CONTROL_PORT, many, 1, sizeof(many), true);
	assert_int_equal(resets, 1);
	memset(many, 0, sizeof(many));
	io(RESET_CONTROL_PORT, many, 1, sizeof(many), false);
	assert_int_equal(many[0], 0x02);
	assert_int_equal(many[63], 0x02); /* each access of a string read reads the register */
}

UNIT_MAIN(NULL, NULL, UNIT_TEST_FIXTURE(test_rst_cpu_asks_for_one_reset),
	  UNIT_TEST_FIXTURE(test_wide_and_repeated_accesses))
