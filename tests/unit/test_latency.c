// SPDX-License-Identifier: MIT
/*
 * The latency statistics port as a hostile guest sees it: registrations that must be
 * refused (with a warning, nothing registered), an area that stops being RAM, a header with
 * bad sizes, records caught mid-write, values that contradict, state names with control
 * bytes, outliers naming CPUs or states that do not exist.
 */
#include "tests/unit/unit.h"

#include <errno.h>
#include <stdlib.h>

#include "vmm/devices/latency.h"
#include "vmm/vm.h"
#include "plugvm_latency.h"

#define REG_GPA	 0x1000 /* the registration */
#define AREA_GPA 0x100000 /* the area */

static struct vm vm;
static struct vm_config cfg;
static struct latency_snapshot snap;

static int setup(void **state)
{
	(void)state;
	memset(&vm, 0, sizeof(vm));
	vm.cfg = &cfg;
	vm.pio.name = "pio";
	assert_int_equal(mem_init(&vm.mem, 4u << 20), 0);
	assert_int_equal(latency_init(&vm), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	latency_exit(&vm);
	mem_destroy(&vm.mem);
	return 0;
}

static struct plugvm_latency_area *area(void)
{
	return mem_gpa_ptr(&vm.mem, AREA_GPA, sizeof(struct plugvm_latency_area));
}

/* The guest's OUT of `gpa` to the port; what plugvm said on stderr into `err`. */
static void out_reg(uint32_t gpa, char *err, size_t len)
{
	struct unit_capture c;
	uint8_t data[4];

	memcpy(data, &gpa, 4);
	unit_capture_begin(&c);
	assert_true(bus_dispatch(&vm.pio, 0, PLUGVM_PORT_LATENCY, data, 4, 1, true));
	unit_capture_end(&c, err, len);
}

static void write_reg(const struct plugvm_latency_register *r)
{
	memcpy(mem_gpa_ptr(&vm.mem, REG_GPA, sizeof(*r)), r, sizeof(*r));
}

/* A valid area: interval 1000 us, histogram 100 us, CPU 1 measured with 3 samples. */
static void good_area(void)
{
	struct plugvm_latency_area *a = area();
	struct plugvm_latency_cpu *c = &a->cpus[1].copy[0];

	memset(a, 0, sizeof(*a));
	a->magic = PLUGVM_LATENCY_MAGIC;
	a->version = PLUGVM_LATENCY_VERSION;
	a->interval_us = 1000;
	a->hist_us = 100;
	a->nr_states = 2;
	strcpy(a->states[0].name, "sched:prepare");
	strcpy(a->states[1].name, "sched:active");
	c->flags = PLUGVM_LATENCY_CPU_USED;
	c->prio = 99;
	c->count = 3;
	c->min_ns = 5000;
	c->max_ns = 150000;
	c->sum_ns = 5000 + 7000 + 150000;
	c->hist[5] = 1;
	c->hist[7] = 1;
	c->overflows = 1;
	c->hist[500] = 77; /* beyond hist_us: not to be believed */
	a->cpus[1].copy[1] = *c;
}

/* One more sample of 10 us in a copy of CPU 1's record, as the guest's writer adds it. */
static void bump(struct plugvm_latency_cpu *c)
{
	c->count = 4;
	c->sum_ns = 5000 + 7000 + 150000 + 10000;
	c->hist[10]++;
}

static void register_good(void)
{
	char err[512];

	good_area();
	write_reg(
	    &(struct plugvm_latency_register){ .magic = PLUGVM_LATENCY_MAGIC,
					       .version = PLUGVM_LATENCY_VERSION,
					       .area_gpa = AREA_GPA,
					       .area_bytes = sizeof(struct plugvm_latency_area) });
	out_reg(REG_GPA, err, sizeof(err));
	assert_string_equal(err, "");
}

static void test_nothing_registered(void **state)
{
	(void)state;
	assert_int_equal(latency_read(&vm, &snap), -ENODATA);
}

static void test_bad_registrations_are_refused(void **state)
{
	const struct plugvm_latency_register good = {
		.magic = PLUGVM_LATENCY_MAGIC,
		.version = PLUGVM_LATENCY_VERSION,
		.area_gpa = AREA_GPA,
		.area_bytes = sizeof(struct plugvm_latency_area),
	};
	struct plugvm_latency_register bad[6];
	char err[512];
	unsigned i;

	(void)state;
	for (i = 0; i < 6; i++)
		bad[i] = good;
	bad[0].magic ^= 1;
	bad[1].version = PLUGVM_LATENCY_VERSION + 1;
	bad[2].area_bytes = 4096;
	bad[3].area_gpa = (4u << 20) - 4096; /* runs past the end of RAM */
	bad[4].area_gpa = AREA_GPA + 4; /* misaligned */
	bad[5].reserved = 1;
	for (i = 0; i < 6; i++) {
		write_reg(&bad[i]);
		out_reg(REG_GPA, err, sizeof(err));
		assert_contains(err, "latency: bad registration");
		assert_int_equal(latency_read(&vm, &snap), -ENODATA);
	}
	out_reg(0xfffffff0, err, sizeof(err)); /* the registration itself outside RAM */
	assert_contains(err, "is not in guest RAM");
	out_reg(REG_GPA + 2, err, sizeof(err));
	assert_contains(err, "is not 8-byte aligned");
	assert_int_equal(latency_read(&vm, &snap), -ENODATA);
}

static void test_snapshot_is_checked(void **state)
{
	struct plugvm_latency_area *a;
	char err[512];
	struct unit_capture c;

	(void)state;
	register_good();
	a = area();
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.cpus[1].count, 3);
	assert_int_equal(snap.cpus[1].hist[500], 0); /* beyond the limit: cleared */
	assert_int_equal(snap.cpus[0].flags, 0); /* not measured */
	assert_int_equal(snap.torn, 0);

	/*
	 * The writer stopped half-way through an update (its vCPU descheduled): the other copy,
	 * whole. It then finishes and starts the next: the update before, not an earlier
	 * read's copy (before the latch, this read returned the count of 3 from the read above,
	 * which is how plugvm-latency's final report once lost five parks of its CPU).
	 */
	a->cpus[1].seq = 1;
	a->cpus[1].copy[0].count = 999; /* half-written */
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.cpus[1].count, 3);
	assert_false(snap.stale[1]);
	bump(&a->cpus[1].copy[0]);
	a->cpus[1].seq = 2;
	bump(&a->cpus[1].copy[1]);
	a->cpus[1].seq = 3;
	a->cpus[1].copy[0].count = 999;
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.cpus[1].count, 4);
	assert_int_equal(snap.cpus[1].hist[10], 1);
	assert_false(snap.stale[1]);
	assert_int_equal(snap.torn, 0);

	/* A writer that never lets a copy through: the last good one, marked stale, held to
	 * this registration's histogram limit. */
	latency_copy_tries = 0;
	a->hist_us = 8;
	assert_int_equal(latency_read(&vm, &snap), 0);
	latency_copy_tries = LATENCY_COPY_TRIES;
	assert_int_equal(snap.cpus[1].count, 4);
	assert_true(snap.stale[1]);
	assert_false(snap.stale[0]); /* not measured */
	assert_int_equal(snap.torn, PLUGVM_LATENCY_MAX_CPUS); /* every record, none copied */
	assert_int_equal(snap.cpus[1].hist[10], 0);
	assert_int_equal(snap.cpus[1].hist[5], 1);
	a->hist_us = 100;
	a->cpus[1].seq = 4;
	a->cpus[1].copy[0] = a->cpus[1].copy[1];

	/* Figures that contradict (min above max): the record is dropped, with a warning. */
	a->cpus[1].copy[0].min_ns = 200000;
	unit_capture_begin(&c);
	assert_int_equal(latency_read(&vm, &snap), 0);
	unit_capture_end(&c, err, sizeof(err));
	assert_contains(err, "inconsistent record");
	assert_int_equal(snap.cpus[1].count, 0);

	/* A header with sizes out of range: nothing is believed. */
	a->hist_us = PLUGVM_LATENCY_HIST_MAX + 1;
	unit_capture_begin(&c);
	assert_int_equal(latency_read(&vm, &snap), -EFAULT);
	unit_capture_end(&c, err, sizeof(err));
	assert_contains(err, "bad header");
	a->hist_us = 100;
	a->nr_states = PLUGVM_LATENCY_MAX_STATES + 1;
	assert_int_equal(latency_read(&vm, &snap), -EFAULT);
}

static void test_names_and_outliers_are_sanitised(void **state)
{
	struct plugvm_latency_area *a;
	struct plugvm_latency_outlier *o;

	(void)state;
	register_good();
	a = area();
	memset(a->states[0].name, 'x', PLUGVM_LATENCY_STATE_NAME); /* no NUL */
	a->states[1].name[0] = '\033';
	o = &a->outliers[0];
	o->seq = PLUGVM_LATENCY_OUTLIER_SEQ(0);
	o->cpu = 1;
	o->latency_ns = 150000;
	o->hp[0] = 2 | PLUGVM_LATENCY_HP_DOWN; /* sched:active, down */
	o->hp[1] = 40; /* no such state */
	a->outliers[1].seq = PLUGVM_LATENCY_OUTLIER_SEQ(1);
	a->outliers[1].cpu = PLUGVM_LATENCY_MAX_CPUS; /* no such CPU */
	a->outlier_seq = 2;
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(strlen(snap.states[0].name), PLUGVM_LATENCY_STATE_NAME - 1);
	assert_int_equal(snap.states[1].name[0], '?');
	assert_int_equal(snap.nr_outliers, 1);
	assert_int_equal(snap.outliers[0].hp[0], 2 | PLUGVM_LATENCY_HP_DOWN);
	assert_int_equal(snap.outliers[0].hp[1], 0);
	assert_int_equal(snap.torn, 1);
	/* A huge count: only the last ring's worth is read. */
	a->outlier_seq = UINT64_MAX;
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_true(snap.nr_outliers <= PLUGVM_LATENCY_OUTLIERS);
}

/*
 * An index the guest claimed (outlier_seq passed it) but has not written yet, its vCPU
 * descheduled in between, is not read: its slot still holds zeros or an older lap's outlier.
 * Neither is a later lap's slot read as an earlier index. Each counts as torn.
 */
static void test_outlier_not_yet_written(void **state)
{
	struct plugvm_latency_area *a;
	unsigned i;

	(void)state;
	register_good();
	a = area();
	for (i = 0; i < 2; i++) {
		a->outliers[i].seq = PLUGVM_LATENCY_OUTLIER_SEQ(i);
		a->outliers[i].cpu = 1;
		a->outliers[i].latency_ns = 5000;
	}
	a->outlier_seq = 3; /* index 2 claimed, slot 2 still zero */
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.nr_outliers, 2);
	assert_int_equal(snap.torn, 1);
	for (i = 0; i < snap.nr_outliers; i++)
		assert_true(snap.outliers[i].cpu == 1 && snap.outliers[i].latency_ns == 5000);
	/* A lap later: index 256 claimed in slot 0, which still holds index 0. */
	for (i = 2; i < PLUGVM_LATENCY_OUTLIERS; i++)
		a->outliers[i].seq = PLUGVM_LATENCY_OUTLIER_SEQ(i);
	a->outlier_seq = PLUGVM_LATENCY_OUTLIERS + 1;
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.nr_outliers, PLUGVM_LATENCY_OUTLIERS - 1);
	assert_int_equal(snap.torn, 1);
	/* Index 1's slot rewritten by index 257 (a later lap): not index 1 any more. */
	a->outliers[1].seq = PLUGVM_LATENCY_OUTLIER_SEQ(PLUGVM_LATENCY_OUTLIERS + 1);
	assert_int_equal(latency_read(&vm, &snap), 0);
	assert_int_equal(snap.nr_outliers, PLUGVM_LATENCY_OUTLIERS - 2);
	assert_int_equal(snap.torn, 2);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test_setup_teardown(test_nothing_registered, setup, teardown),
	  cmocka_unit_test_setup_teardown(test_bad_registrations_are_refused, setup, teardown),
	  cmocka_unit_test_setup_teardown(test_snapshot_is_checked, setup, teardown),
	  cmocka_unit_test_setup_teardown(test_names_and_outliers_are_sanitised, setup, teardown),
	  cmocka_unit_test_setup_teardown(test_outlier_not_yet_written, setup, teardown))
