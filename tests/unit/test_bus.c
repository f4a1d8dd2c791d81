// SPDX-License-Identifier: MIT
/*
 * Unit tests for vmm/bus.c: registration keeps ranges sorted and refuses overlaps (-EEXIST)
 * and a full table (-ENOSPC) with a log line; dispatch reaches the right device with the
 * right offset, size and count; unclaimed reads read as 0xff bytes.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "vmm/bus.h"
#include "vmm/log.h"

struct dev {
	const char *name;
	unsigned calls;
	void *opaque;
	int vcpu_id;
	uint64_t offset;
	unsigned size, count;
	bool is_write;
	uint8_t data[64];
};

static void handler(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		    unsigned count, bool is_write)
{
	struct dev *d = opaque;
	size_t n = (size_t)size * count;

	d->calls++;
	d->opaque = opaque;
	d->vcpu_id = vcpu_id;
	d->offset = offset;
	d->size = size;
	d->count = count;
	d->is_write = is_write;
	assert_true(n <= sizeof(d->data));
	if (is_write) {
		memcpy(d->data, data, n);
	} else {
		/* Reads return the device's first letter then the offset's low byte. */
		memset(data, d->name[0], n);
		data[0] = (uint8_t)offset;
	}
}

static void check_sorted(const struct bus *bus)
{
	int i;

	for (i = 1; i < bus->nr; i++) {
		const struct bus_range *a = &bus->ranges[i - 1], *b = &bus->ranges[i];

		if (a->base >= b->base || b->base - a->base < a->len)
			fail_msg("ranges %d (%s) and %d (%s) out of order or overlapping", i - 1,
				 a->name, i, b->name);
	}
}

static void test_sorted(void **state)
{
	static const uint64_t bases[] = { 0x3f8, 0x600, 0x20, 0xafe0, 0xf4, 0xaf00, 0x0, 0x70 };
	struct bus bus = { .name = "pio" };
	struct dev d = { .name = "d" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		assert_int_equal(bus_register(&bus, bases[i], 4, handler, &d, "dev"), 0);
		check_sorted(&bus);
	}
	assert_int_equal(bus.nr, sizeof(bases) / sizeof(bases[0]));
	assert_int_equal(bus.ranges[0].base, 0);
	assert_int_equal(bus.ranges[bus.nr - 1].base, 0xafe0);
	assert_ptr_equal(bus.ranges[0].handler, handler);
	assert_ptr_equal(bus.ranges[0].opaque, &d);
	assert_string_equal(bus.ranges[0].name, "dev");
}

static void test_overlap(void **state)
{
	static const struct {
		uint64_t base, len;
	} bad[] = {
		{ 0x100, 0x10 }, /* identical */
		{ 0xf0, 0x11 }, /* covers the first byte */
		{ 0x10f, 1 }, /* the last byte */
		{ 0x108, 0x100 }, /* the tail and beyond */
		{ 0x104, 4 }, /* inside */
		{ 0x0, 0x1000 }, /* around */
		{ 0x1f0, 0x20 }, /* the second range */
	};
	struct bus bus = { .name = "pio" };
	struct dev d = { .name = "d" };
	struct unit_capture cap;
	char log[512];
	size_t i;

	(void)state;
	assert_int_equal(bus_register(&bus, 0x100, 0x10, handler, &d, "uart"), 0);
	assert_int_equal(bus_register(&bus, 0x200, 0x10, handler, &d, "pm"), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		unit_capture_begin(&cap);
		assert_int_equal(bus_register(&bus, bad[i].base, bad[i].len, handler, &d, "new"),
				 -EEXIST);
		unit_capture_end(&cap, log, sizeof(log));
		assert_contains(log, "plugvm: pio bus: new [");
		assert_contains(log, ") overlaps ");
		assert_int_equal(bus.nr, 2);
	}
	unit_capture_begin(&cap);
	bus_register(&bus, 0x108, 4, handler, &d, "new");
	unit_capture_end(&cap, log, sizeof(log));
	assert_string_equal(log, "plugvm: pio bus: new [0x108+0x4) overlaps uart\n");

	/* Touching is not overlapping. */
	assert_int_equal(bus_register(&bus, 0xf0, 0x10, handler, &d, "below"), 0);
	assert_int_equal(bus_register(&bus, 0x110, 0xf0, handler, &d, "between"), 0);
	assert_int_equal(bus_register(&bus, 0x210, 1, handler, &d, "above"), 0);
	assert_int_equal(bus.nr, 5);
	check_sorted(&bus);
}

static void test_top_of_space(void **state)
{
	struct bus bus = { .name = "mmio" };
	struct dev d = { .name = "t" };
	uint8_t buf[4];

	(void)state;
	/* A range ending exactly at 2^64: base + len wraps to 0 and must not hide overlaps. */
	assert_int_equal(bus_register(&bus, UINT64_MAX - 0xfff, 0x1000, handler, &d, "top"), 0);
	assert_int_equal(bus_register(&bus, UINT64_MAX - 0x7ff, 0x10, handler, &d, "in"), -EEXIST);
	assert_int_equal(bus_register(&bus, UINT64_MAX, 1, handler, &d, "last"), -EEXIST);
	assert_int_equal(bus_register(&bus, UINT64_MAX - 0x1fff, 0x2000, handler, &d, "over"),
			 -EEXIST);
	assert_int_equal(bus_register(&bus, 0xfee00000, 0x1000, handler, &d, "lapic"), 0);
	assert_int_equal(bus.nr, 2);
	check_sorted(&bus);
	assert_true(bus_dispatch(&bus, 0, UINT64_MAX, buf, 1, 1, false));
	assert_int_equal(d.offset, 0xfff);
	assert_false(bus_dispatch(&bus, 0, UINT64_MAX - 0x1000, buf, 1, 1, false));
}

static void test_full(void **state)
{
	struct bus bus = { .name = "mmio" };
	struct dev d = { .name = "d" };
	struct unit_capture cap;
	char log[512];
	int i;

	(void)state;
	/* Registered from the top down, so every insertion shifts the table. */
	for (i = BUS_MAX_RANGES - 1; i >= 0; i--)
		assert_int_equal(bus_register(&bus, 0x1000 * (uint64_t)i, 0x100, handler, &d, "d"),
				 0);
	assert_int_equal(bus.nr, BUS_MAX_RANGES);
	check_sorted(&bus);
	unit_capture_begin(&cap);
	assert_int_equal(bus_register(&bus, 0x100000, 1, handler, &d, "extra"), -ENOSPC);
	unit_capture_end(&cap, log, sizeof(log));
	assert_string_equal(log, "plugvm: mmio bus: no room for extra\n");
	assert_int_equal(bus.nr, BUS_MAX_RANGES);
}

static void test_dispatch(void **state)
{
	struct dev uart = { .name = "uart" }, pm = { .name = "pm" }, gpe = { .name = "gpe" };
	struct bus bus = { .name = "pio" };
	uint8_t data[16];

	(void)state;
	assert_int_equal(bus_register(&bus, 0x600, 12, handler, &pm, "pm"), 0);
	assert_int_equal(bus_register(&bus, 0x3f8, 8, handler, &uart, "uart"), 0);
	assert_int_equal(bus_register(&bus, 0xafe0, 4, handler, &gpe, "gpe"), 0);

	/* A 1-byte read at the base. */
	memset(data, 0, sizeof(data));
	assert_true(bus_dispatch(&bus, 3, 0x3f8, data, 1, 1, false));
	assert_int_equal(uart.calls, 1);
	assert_ptr_equal(uart.opaque, &uart);
	assert_int_equal(uart.vcpu_id, 3);
	assert_int_equal(uart.offset, 0);
	assert_int_equal(uart.size, 1);
	assert_int_equal(uart.count, 1);
	assert_false(uart.is_write);
	assert_int_equal(data[0], 0);

	/* A 2-byte write at the last word of pm. */
	data[0] = 0x34;
	data[1] = 0x12;
	assert_true(bus_dispatch(&bus, 0, 0x60a, data, 2, 1, true));
	assert_int_equal(pm.calls, 1);
	assert_int_equal(pm.offset, 10);
	assert_int_equal(pm.size, 2);
	assert_true(pm.is_write);
	assert_int_equal(pm.data[0], 0x34);
	assert_int_equal(pm.data[1], 0x12);

	/* String I/O: count repetitions, data holds count * size bytes. */
	memset(data, 0, sizeof(data));
	assert_true(bus_dispatch(&bus, 1, 0xafe3, data, 4, 3, false));
	assert_int_equal(gpe.calls, 1);
	assert_int_equal(gpe.offset, 3);
	assert_int_equal(gpe.size, 4);
	assert_int_equal(gpe.count, 3);
	assert_int_equal(data[0], 3);
	assert_int_equal(data[11], 'g');
	assert_int_equal(data[12], 0);

	/* The last byte belongs to the device, the next one to nobody. */
	assert_true(bus_dispatch(&bus, 0, 0x3ff, data, 1, 1, false));
	assert_int_equal(uart.offset, 7);
	assert_int_equal(uart.calls, 2);
	assert_false(bus_dispatch(&bus, 0, 0x400, data, 1, 1, false));
	assert_false(bus_dispatch(&bus, 0, 0x3f7, data, 1, 1, false));
	assert_false(bus_dispatch(&bus, 0, 0x60c, data, 1, 1, false));
	assert_false(bus_dispatch(&bus, 0, 0, data, 1, 1, false));
	assert_false(bus_dispatch(&bus, 0, UINT64_MAX, data, 1, 1, false));
	assert_int_equal(uart.calls + pm.calls + gpe.calls, 4);
	/* An access straddling the end goes to the device, which checks the size itself. */
	assert_true(bus_dispatch(&bus, 0, 0x3ff, data, 4, 1, false));
	assert_int_equal(uart.offset, 7);
	assert_int_equal(uart.size, 4);
}

static void test_unclaimed(void **state)
{
	struct bus bus = { .name = "pio" };
	struct dev d = { .name = "d" };
	uint8_t data[40];
	size_t i;

	(void)state;
	/* An empty bus. */
	memset(data, 0, sizeof(data));
	assert_false(bus_dispatch(&bus, 0, 0x80, data, 4, 1, false));
	for (i = 0; i < 4; i++)
		assert_int_equal(data[i], 0xff);
	assert_int_equal(data[4], 0);

	/* Reads fill size * count bytes, writes leave the data alone. */
	assert_int_equal(bus_register(&bus, 0x100, 0x10, handler, &d, "d"), 0);
	memset(data, 0, sizeof(data));
	assert_false(bus_dispatch(&bus, 0, 0x80, data, 2, 5, false));
	for (i = 0; i < 10; i++)
		assert_int_equal(data[i], 0xff);
	assert_int_equal(data[10], 0);
	memset(data, 0x11, sizeof(data));
	assert_false(bus_dispatch(&bus, 0, 0x80, data, 8, 4, true));
	for (i = 0; i < sizeof(data); i++)
		assert_int_equal(data[i], 0x11);
	assert_int_equal(d.calls, 0);
}

static void test_many(void **state)
{
	struct dev devs[BUS_MAX_RANGES];
	struct bus bus = { .name = "mmio" };
	uint64_t base[BUS_MAX_RANGES], len[BUS_MAX_RANGES], a;
	uint8_t data[8];
	int i, order[BUS_MAX_RANGES];

	(void)state;
	/* Ranges of varied sizes with gaps, registered in a scrambled order. */
	for (i = 0; i < BUS_MAX_RANGES; i++) {
		base[i] = 0x1000 + (uint64_t)i * 0x40;
		len[i] = 1 + (uint64_t)(i % 7) * 5;
		devs[i] = (struct dev){ .name = "d" };
		order[i] = (i * 13) % BUS_MAX_RANGES;
	}
	for (i = 0; i < BUS_MAX_RANGES; i++)
		assert_int_equal(bus_register(&bus, base[order[i]], len[order[i]], handler,
					      &devs[order[i]], "d"),
				 0);
	check_sorted(&bus);
	/* Every address from below the first range to above the last. */
	for (a = 0xfc0; a < 0x1000 + BUS_MAX_RANGES * 0x40 + 0x40; a++) {
		int owner = -1;

		for (i = 0; i < BUS_MAX_RANGES; i++)
			if (a >= base[i] && a < base[i] + len[i])
				owner = i;
		for (i = 0; i < BUS_MAX_RANGES; i++)
			devs[i].calls = 0;
		if (bus_dispatch(&bus, 0, a, data, 1, 1, false) != (owner >= 0))
			fail_msg("address %#llx: claimed by the wrong side", (unsigned long long)a);
		if (owner >= 0) {
			assert_int_equal(devs[owner].calls, 1);
			assert_int_equal(devs[owner].offset, a - base[owner]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sorted),	     cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_top_of_space), cmocka_unit_test(test_full),
		cmocka_unit_test(test_dispatch),     cmocka_unit_test(test_unclaimed),
		cmocka_unit_test(test_many),
	};

	log_set_level(LOG_WARN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
