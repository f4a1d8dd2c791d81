// SPDX-License-Identifier: MIT
/*
 * guest/kernel/sched_load.c: busy time is everything but idle, wait time is busy time with
 * nr_running >= 2 (as the previous update saw it), offline time is neither, a clock going
 * backwards accounts nothing, and the latch's count is even with both copies equal after
 * every publish (odd in between, copy[0] first).
 */
#include "unit.h"

#include "kernel/sched_load.h"

#define MS 1000000ull

static void test_busy_and_idle_across_idle_entries(void **state)
{
	struct sched_load l = { 0 };

	(void)state;
	sched_load_start(&l, 10 * MS);
	assert_true(l.online);
	/* Busy alone for 5 ms (ticks), then idle for 20 ms, then busy again. */
	assert_false(sched_load_account(&l, 11 * MS, false, 1));
	assert_false(sched_load_account(&l, 15 * MS, false, 1));
	assert_true(sched_load_account(&l, 15 * MS, true, 0)); /* idle entry */
	assert_true(sched_load_account(&l, 35 * MS, false, 1)); /* idle exit */
	assert_int_equal(l.busy_ns, 5 * MS);
	assert_int_equal(l.wait_ns, 0);
	assert_false(sched_load_account(&l, 36 * MS, false, 1)); /* a tick */
	assert_int_equal(l.busy_ns, 6 * MS);
	assert_int_equal(l.last_ns, 36 * MS);
}

static void test_wait_needs_two_runnable(void **state)
{
	struct sched_load l = { 0 };

	(void)state;
	sched_load_start(&l, 0);
	sched_load_account(&l, 1 * MS, false, 3); /* from here two wait */
	sched_load_account(&l, 2 * MS, false, 2);
	sched_load_account(&l, 3 * MS, false, 1);
	sched_load_account(&l, 4 * MS, false, 1);
	assert_int_equal(l.busy_ns, 4 * MS);
	assert_int_equal(l.wait_ns, 2 * MS); /* [1, 3) ms */
	/* Idle never waits, whatever nr_running said. */
	sched_load_account(&l, 4 * MS, true, 5);
	sched_load_account(&l, 9 * MS, false, 1);
	assert_int_equal(l.busy_ns, 4 * MS);
	assert_int_equal(l.wait_ns, 2 * MS);
	assert_true(l.wait_ns <= l.busy_ns);
}

static void test_offline_time_is_neither(void **state)
{
	struct sched_load l = { 0 };

	(void)state;
	sched_load_start(&l, 0);
	sched_load_account(&l, 1 * MS, false, 2);
	sched_load_stop(&l, 3 * MS);
	assert_false(l.online);
	assert_int_equal(l.busy_ns, 3 * MS);
	assert_int_equal(l.wait_ns, 2 * MS);
	sched_load_start(&l, 100 * MS); /* the next life: totals carry on */
	sched_load_account(&l, 101 * MS, true, 0);
	assert_int_equal(l.busy_ns, 4 * MS);
	assert_int_equal(l.wait_ns, 2 * MS);
}

static void test_clock_backwards_accounts_nothing(void **state)
{
	struct sched_load l = { 0 };

	(void)state;
	sched_load_start(&l, 50 * MS);
	sched_load_account(&l, 40 * MS, false, 2);
	assert_int_equal(l.busy_ns, 0);
	assert_int_equal(l.last_ns, 50 * MS);
	sched_load_account(&l, 51 * MS, false, 1);
	assert_int_equal(l.busy_ns, 1 * MS);
	assert_int_equal(l.wait_ns, 1 * MS);
}

static void test_publish_keeps_both_copies_equal_and_seq_even(void **state)
{
	struct plugvm_load_latch latch;
	struct sched_load l = { 0 };

	(void)state;
	memset(&latch, 0, sizeof(latch));
	sched_load_start(&l, 0);
	sched_load_account(&l, 7 * MS, false, 2);
	sched_load_publish(&latch, &l, PLUGVM_LOAD_HELD | 0xf0);
	assert_int_equal(latch.seq, 2);
	assert_memory_equal(&latch.copy[0], &latch.copy[1], sizeof(latch.copy[0]));
	assert_int_equal(latch.copy[0].flags, PLUGVM_LOAD_ONLINE | PLUGVM_LOAD_HELD);
	assert_int_equal(latch.copy[0].nr_running, 2);
	assert_int_equal(latch.copy[0].now_ns, 7 * MS);
	assert_int_equal(latch.copy[0].busy_ns, 7 * MS);
	assert_int_equal(latch.copy[0].wait_ns, 0);
	/* Idle: nr_running 0 whatever was passed; offline: ONLINE clear. */
	sched_load_account(&l, 9 * MS, true, 4);
	sched_load_publish(&latch, &l, 0);
	assert_int_equal(latch.seq, 4);
	assert_int_equal(latch.copy[1].nr_running, 0);
	assert_int_equal(latch.copy[1].wait_ns, 2 * MS);
	sched_load_stop(&l, 12 * MS);
	sched_load_publish(&latch, &l, 0);
	assert_int_equal(latch.copy[0].flags, 0);
	assert_int_equal(latch.copy[1].busy_ns, 9 * MS);
	/* A count someone left odd is made even again: the next one is even too. */
	latch.seq = 7;
	sched_load_publish(&latch, &l, 0);
	assert_int_equal(latch.seq, 10);
	assert_int_equal(latch.seq & 1, 0);
	assert_memory_equal(&latch.copy[0], &latch.copy[1], sizeof(latch.copy[0]));
}

/* Busy ticks publish every SCHED_LOAD_TICK_PUBLISH_NS, not at each tick. */
static void test_busy_ticks_publish_every_10_ms(void **state)
{
	struct sched_load l = { 0 };
	unsigned ms, due = 0;

	(void)state;
	sched_load_start(&l, 0);
	sched_load_published(&l);
	for (ms = 1; ms <= 30; ms++) { /* 30 ticks of HZ 1000 */
		sched_load_account(&l, ms * MS, false, 1);
		if (sched_load_tick_due(&l)) {
			due++;
			assert_int_equal(ms % 10, 0);
			sched_load_published(&l);
		}
	}
	assert_int_equal(due, 3);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_busy_ticks_publish_every_10_ms),
	  cmocka_unit_test(test_busy_and_idle_across_idle_entries),
	  cmocka_unit_test(test_wait_needs_two_runnable),
	  cmocka_unit_test(test_offline_time_is_neither),
	  cmocka_unit_test(test_clock_backwards_accounts_nothing),
	  cmocka_unit_test(test_publish_keeps_both_copies_equal_and_seq_even))
