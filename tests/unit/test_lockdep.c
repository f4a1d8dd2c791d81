// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/lockdep.c: inversions (direct and through a chain) reported
 * once with both sites, silence on correct nesting and on trylock inversions, held-lock
 * assertions per task, recursion and bad releases, the fixed tables running out, and
 * several host threads (each its own fake task and CPU) sharing the class graph.
 * lockdep_current() and lockdep_cpu_id() are provided here; reports are captured both
 * from a registered console and through lockdep_report_hook.
 */
#include "tests/unit/unit.h"

#include <pthread.h>

#include "arch.h"
#include "kernel/lockdep.h"
#include "kernel/printk.h"
#include "tests/unit/guest_console.h"

/* ---- fake tasks and CPUs ------------------------------------------------------------------ */

static __thread struct lockdep_task *cur_task;
static __thread unsigned cur_cpu;
static __thread uint64_t fake_cpu[1024]; /* zeroed: preemption count 0, any struct cpu layout */

struct lockdep_task *lockdep_current(void)
{
	return cur_task;
}

unsigned lockdep_cpu_id(void)
{
	return cur_cpu;
}

static struct lockdep_task tasks[4];

static void run_as(unsigned i)
{
	cur_task = &tasks[i];
}

/* ---- report capture ------------------------------------------------------------------------ */

static struct unit_console cap = UNIT_CONSOLE_INIT;

static pthread_mutex_t hook_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned nr_hooked[LOCKDEP_REPORT_DEPS_FULL + 1];
static struct lockdep_report last; /* names point at class names or test literals */

static void hook(const struct lockdep_report *r)
{
	pthread_mutex_lock(&hook_mutex);
	nr_hooked[r->type]++;
	last = *r;
	pthread_mutex_unlock(&hook_mutex);
}

static unsigned count(const char *needle)
{
	const char *p = cap.buf;
	unsigned n = 0;

	while ((p = strstr(p, needle))) {
		n++;
		p += strlen(needle);
	}
	return n;
}

static unsigned nr_reports(void)
{
	unsigned i, n = 0;

	for (i = 0; i < ARRAY_SIZE(nr_hooked); i++)
		n += nr_hooked[i];
	return n;
}

static struct lockdep_stats stats(void)
{
	struct lockdep_stats st;

	lockdep_get_stats(&st);
	return st;
}

/* Every printed line carries the stable prefix. */
static void assert_prefixed(void)
{
	const char *p = cap.buf;

	while (*p) {
		if (strncmp(p, "lockdep: ", 9))
			fail_msg("line without the prefix: \"%.60s\"", p);
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
}

static int setup(void **state)
{
	unsigned i;

	(void)state;
	lockdep_reset();
	for (i = 0; i < ARRAY_SIZE(tasks); i++)
		lockdep_task_init(&tasks[i]);
	run_as(0);
	cur_cpu = 0;
	unit_console_clear(&cap);
	memset(nr_hooked, 0, sizeof(nr_hooked));
	memset(&last, 0, sizeof(last));
	lockdep_report_hook = hook;
	return 0;
}

/* ---- order checking ---------------------------------------------------------------------- */

static struct lockdep_map a = LOCKDEP_MAP_INIT("lock_a");
static struct lockdep_map b = LOCKDEP_MAP_INIT("lock_b");
static struct lockdep_map c = LOCKDEP_MAP_INIT("lock_c");
static struct lockdep_map d = LOCKDEP_MAP_INIT("lock_d");

static void test_nested_quiet(void **state)
{
	struct lockdep_stats st;
	int i;

	(void)state;
	for (i = 0; i < 100; i++) {
		lockdep_acquire(&a, 0, 0x1001);
		lockdep_acquire(&b, 0, 0x1002);
		lockdep_acquire(&c, 0, 0x1003);
		assert_int_equal(lockdep_depth(), 3);
		/* Any release order is fine. */
		if (i % 2) {
			lockdep_release(&a, 0x1004);
			lockdep_release(&c, 0x1005);
			lockdep_release(&b, 0x1006);
		} else {
			lockdep_release(&b, 0x1006);
			lockdep_release(&c, 0x1005);
			lockdep_release(&a, 0x1004);
		}
		assert_int_equal(lockdep_depth(), 0);
		/* Taking c after b's release (a -> c, then alone) keeps the same orders. */
		lockdep_acquire(&a, 0, 0x1007);
		lockdep_acquire(&c, 0, 0x1008);
		lockdep_release(&c, 0x1009);
		lockdep_release(&a, 0x100a);
	}
	st = stats();
	assert_string_equal(cap.buf, "");
	assert_int_equal(nr_reports(), 0);
	assert_int_equal(st.acquisitions, 500);
	assert_int_equal(st.releases, 500);
	assert_int_equal(st.classes, 3);
	assert_int_equal(st.dependencies, 3); /* a -> b, a -> c, b -> c */
	assert_int_equal(st.inversions, 0);
	assert_int_equal(st.max_depth, 3);
	assert_true(st.enabled);
}

static void take_two(struct lockdep_map *x, unsigned long ip_x, struct lockdep_map *y,
		     unsigned long ip_y, unsigned flags_y)
{
	lockdep_acquire(x, 0, ip_x);
	lockdep_acquire(y, flags_y, ip_y);
	lockdep_release(y, 0);
	lockdep_release(x, 0);
}

/* A task that provokes a report on purpose: its lines say so, and it is not counted. */
static void test_expected_report(void **state)
{
	(void)state;
	tasks[0].expected = true;
	take_two(&a, 0x1001, &b, 0x1002, 0);
	take_two(&b, 0x2001, &a, 0x2002, 0);
	tasks[0].expected = false;
	assert_contains(cap.buf, "expected lockdep: lock order inversion: lock_b -> lock_a");
	assert_int_equal(stats().inversions, 1);
	assert_int_equal(stats().unexpected, 0);
}

static void test_ab_ba(void **state)
{
	int i;

	(void)state;
	take_two(&a, 0x1001, &b, 0x1002, 0);
	assert_string_equal(cap.buf, "");
	take_two(&b, 0x2001, &a, 0x2002, 0);
	assert_contains(cap.buf,
			"lockdep: lock order inversion: lock_b -> lock_a at 0x2001 / 0x2002, "
			"previously lock_a -> lock_b at 0x1001 / 0x1002 (cpu 0)\n");
	assert_int_equal(nr_hooked[LOCKDEP_REPORT_INVERSION], 1);
	assert_string_equal(last.held, "lock_b");
	assert_string_equal(last.name, "lock_a");
	assert_int_equal(last.held_ip, 0x2001);
	assert_int_equal(last.ip, 0x2002);
	assert_int_equal(last.nr_prev, 1);
	assert_string_equal(last.prev[0].from, "lock_a");
	assert_string_equal(last.prev[0].to, "lock_b");
	assert_int_equal(last.prev[0].from_ip, 0x1001);
	assert_int_equal(last.prev[0].to_ip, 0x1002);
	assert_ptr_equal(last.task, &tasks[0]);

	/* Once per pair: both orders again, from other sites and another task and CPU. */
	for (i = 0; i < 10; i++) {
		take_two(&a, 0x3001, &b, 0x3002, 0);
		take_two(&b, 0x4001, &a, 0x4002, 0);
	}
	run_as(1);
	cur_cpu = 1;
	take_two(&b, 0x5001, &a, 0x5002, 0);
	assert_int_equal(count("lock order inversion"), 1);
	assert_int_equal(nr_reports(), 1);
	assert_int_equal(stats().inversions, 1);
	assert_int_equal(stats().unexpected, 1);
	assert_int_equal(stats().dependencies, 2);
	assert_prefixed();
}

static void test_cycle_of_three(void **state)
{
	(void)state;
	take_two(&a, 0xa1, &b, 0xb1, 0);
	take_two(&b, 0xb2, &c, 0xc2, 0);
	assert_string_equal(cap.buf, "");
	take_two(&c, 0xc3, &a, 0xa3, 0);
	assert_contains(cap.buf, "lockdep: lock order inversion: lock_c -> lock_a at 0xc3 / 0xa3, "
				 "previously lock_a -> lock_b at 0xa1 / 0xb1 (cpu 0)\n"
				 "lockdep:   then lock_b -> lock_c at 0xb2 / 0xc2\n");
	assert_int_equal(last.nr_prev, 2);
	assert_string_equal(last.prev[1].from, "lock_b");
	assert_string_equal(last.prev[1].to, "lock_c");

	/* Reported once; a fourth lock outside the cycle stays quiet. */
	take_two(&c, 0xc4, &a, 0xa4, 0);
	take_two(&a, 0xa5, &d, 0xd5, 0);
	take_two(&c, 0xc6, &d, 0xd6, 0);
	assert_int_equal(count("lock order inversion"), 1);
	assert_int_equal(stats().inversions, 1);

	/* The reverse of an edge inside the cycle is a pair of its own. */
	take_two(&b, 0xb7, &a, 0xa7, 0);
	assert_int_equal(count("lock order inversion"), 2);
	assert_contains(cap.buf,
			"lock_b -> lock_a at 0xb7 / 0xa7, previously lock_a -> lock_b at 0xa1 "
			"/ 0xb1");
	assert_prefixed();
}

static void test_long_chain(void **state)
{
	static struct lockdep_map m[12];
	static char names[12][8];
	unsigned i;

	(void)state;
	for (i = 0; i < 12; i++) {
		snprintf(names[i], sizeof(names[i]), "m%u", i);
		lockdep_init_map(&m[i], names[i]);
	}
	for (i = 0; i + 1 < 12; i++)
		take_two(&m[i], 0x100 + i, &m[i + 1], 0x200 + i, 0);
	take_two(&m[11], 0x300, &m[0], 0x301, 0);
	assert_int_equal(count("lock order inversion"), 1);
	assert_int_equal(last.nr_prev, 11);
	assert_string_equal(last.prev[LOCKDEP_REPORT_MAX_CHAIN - 1].to, "m8");
	assert_contains(cap.buf, "previously m0 -> m1 at 0x100 / 0x200");
	assert_contains(cap.buf, "lockdep:   then m7 -> m8 at 0x107 / 0x207\n");
	assert_contains(cap.buf, "lockdep:   then 3 more dependencies\n");
	assert_prefixed();
}

static void test_trylock(void **state)
{
	(void)state;
	/* a then trylock b, later b then a: a trylock cannot deadlock, so no report. */
	take_two(&a, 0x1001, &b, 0x1002, LOCKDEP_TRYLOCK);
	take_two(&b, 0x2001, &a, 0x2002, 0);
	take_two(&b, 0x2003, &a, 0x2004, LOCKDEP_TRYLOCK);
	assert_string_equal(cap.buf, "");
	assert_int_equal(stats().dependencies, 1); /* only b -> a */

	/* A held trylocked lock still orders what is taken under it: c -> d. */
	take_two(&c, 0x3001, &d, 0x3002, 0);
	lockdep_acquire(&d, LOCKDEP_TRYLOCK, 0x4001);
	lockdep_acquire(&c, 0, 0x4002);
	assert_true(lockdep_is_held(&d));
	lockdep_release(&d, 0);
	lockdep_release(&c, 0);
	assert_contains(cap.buf, "lock order inversion: lock_d -> lock_c at 0x4001 / 0x4002");

	/* A blocking a -> b is still checked against the recorded b -> a. */
	take_two(&a, 0x5001, &b, 0x5002, 0);
	assert_contains(cap.buf,
			"lock order inversion: lock_a -> lock_b at 0x5001 / 0x5002, previously "
			"lock_b -> lock_a at 0x2001 / 0x2002");
	assert_int_equal(stats().inversions, 2);
}

static void test_same_class_and_unnamed(void **state)
{
	struct lockdep_map rq0, rq1, anon1, anon2;

	(void)state;
	/* Two locks of one class nested in both orders: the caller's to order (by CPU). */
	lockdep_init_map(&rq0, "rq.lock");
	lockdep_init_map(&rq1, "rq.lock");
	take_two(&rq0, 0x1, &rq1, 0x2, 0);
	take_two(&rq1, 0x3, &rq0, 0x4, 0);
	/* Unnamed locks are tracked but not ordered. */
	lockdep_init_map(&anon1, NULL);
	lockdep_init_map(&anon2, NULL);
	take_two(&anon1, 0x5, &a, 0x6, 0);
	take_two(&a, 0x7, &anon1, 0x8, 0);
	take_two(&anon1, 0x9, &anon2, 0xa, 0);
	lockdep_acquire(&anon1, 0, 0xb);
	assert_true(lockdep_is_held(&anon1));
	assert_false(lockdep_is_held(&anon2));
	lockdep_release(&anon1, 0xc);
	assert_string_equal(cap.buf, "");
	assert_int_equal(stats().classes, 2);
	assert_int_equal(stats().dependencies, 0);
	lockdep_assert_held(&anon2);
	assert_contains(cap.buf, "lockdep: lock not held: (unnamed), asserted at 0x");
}

static void test_contended(void **state)
{
	(void)state;
	/* Before waiting: an inversion against the recorded order is named before the hang. */
	take_two(&a, 0x1001, &b, 0x1002, 0);
	lockdep_acquire(&b, 0, 0x2001);
	lockdep_contended(&a, 0, 0x2002);
	assert_int_equal(lockdep_depth(), 1);
	assert_contains(cap.buf, "lock order inversion: lock_b -> lock_a at 0x2001 / 0x2002");
	/* ... and the acquisition that follows does not report it again. */
	lockdep_acquire(&a, 0, 0x2002);
	assert_int_equal(count("lock order inversion"), 1);
	/* Waiting for a lock the task holds: self-deadlock. */
	lockdep_contended(&b, 0, 0x2003);
	assert_contains(cap.buf,
			"lockdep: recursive acquire (self-deadlock): lock_b at 0x2003, already "
			"held from 0x2001 (cpu 0)\n");
	lockdep_release(&a, 0);
	lockdep_release(&b, 0);
	assert_int_equal(lockdep_depth(), 0);
	assert_int_equal(stats().acquisitions, 4);
}

/* ---- held-lock checks -------------------------------------------------------------------- */

static __attribute__((noinline)) void assert_at_one_site(const struct lockdep_map *map)
{
	lockdep_assert_held(map);
}

static void test_assert_held(void **state)
{
	int i;

	(void)state;
	assert_false(lockdep_is_held(&a));
	for (i = 0; i < 3; i++)
		assert_at_one_site(&a);
	assert_int_equal(count("lockdep: lock not held: lock_a, asserted at 0x"), 1);
	assert_int_equal(nr_hooked[LOCKDEP_REPORT_NOT_HELD], 1);
	assert_int_not_equal(last.ip, 0);
	assert_null(last.holder);
	/* Another site reports again; another class at the same site too. */
	lockdep_assert_held(&a);
	assert_at_one_site(&b);
	assert_int_equal(count("lockdep: lock not held: lock_a"), 2);
	assert_int_equal(count("lockdep: lock not held: lock_b"), 1);
	assert_int_equal(stats().not_held, 5);

	/* Held: quiet. */
	unit_console_clear(&cap);
	lockdep_acquire(&a, 0, 0x1001);
	assert_true(lockdep_is_held(&a));
	assert_at_one_site(&a);
	lockdep_assert_held(&a);
	lockdep_assert_not_held(&b);
	assert_string_equal(cap.buf, "");

	/* Per task: task 1 does not hold what task 0 holds, and is told who does. */
	run_as(1);
	cur_cpu = 1;
	assert_false(lockdep_is_held(&a));
	lockdep_assert_held(&a);
	assert_contains(cap.buf, "lockdep: lock not held: lock_a, asserted at 0x");
	assert_contains(cap.buf, "(cpu 1), held by task 0x");
	assert_contains(cap.buf, "from 0x1001\n");
	assert_ptr_equal(last.holder, &tasks[0]);
	assert_int_equal(last.holder_ip, 0x1001);
	lockdep_assert_not_held(&a);
	run_as(0);
	cur_cpu = 0;

	/* assert_not_held on a held lock. */
	lockdep_assert_not_held(&a);
	assert_contains(cap.buf, "lockdep: lock held: lock_a, asserted not held at 0x");
	assert_contains(cap.buf, "taken at 0x1001 (cpu 0)\n");
	assert_int_equal(stats().held, 1);
	lockdep_release(&a, 0);
	lockdep_assert_not_held(&a);
	assert_int_equal(stats().held, 1);
	assert_prefixed();
}

static void test_shared(void **state)
{
	(void)state;
	/* Shared acquisitions nest in the same task without a report and set no holder. */
	lockdep_acquire(&a, LOCKDEP_READ, 0x1);
	lockdep_acquire(&a, LOCKDEP_READ, 0x2);
	assert_null(a.holder);
	assert_int_equal(lockdep_depth(), 2);
	lockdep_release(&a, 0x3);
	assert_true(lockdep_is_held(&a));
	lockdep_release(&a, 0x4);
	assert_false(lockdep_is_held(&a));
	assert_string_equal(cap.buf, "");
	/* Exclusive after shared is a recursion. */
	lockdep_acquire(&a, LOCKDEP_READ, 0x5);
	lockdep_acquire(&a, 0, 0x6);
	assert_contains(cap.buf,
			"recursive acquire (self-deadlock): lock_a at 0x6, already held from "
			"0x5");
	lockdep_release(&a, 0);
	lockdep_release(&a, 0);
	assert_int_equal(lockdep_depth(), 0);
}

static void test_recursion(void **state)
{
	int i;

	(void)state;
	lockdep_acquire(&a, 0, 0x1001);
	/* LOCKDEP_THIS_IP names a site in this function. */
	lockdep_acquire(&a, 0, LOCKDEP_THIS_IP);
	assert_true(last.ip > (unsigned long)test_recursion &&
		    last.ip < (unsigned long)test_recursion + 4096);
	lockdep_release(&a, 0x1003);
	for (i = 0; i < 3; i++) {
		lockdep_acquire(&a, 0, 0x1002);
		lockdep_release(&a, 0x1003);
	}
	assert_int_equal(count("lockdep: recursive acquire (self-deadlock): lock_a at 0x1002, "
			       "already held from 0x1001 (cpu 0)\n"),
			 1);
	assert_int_equal(stats().recursion, 4);
	assert_int_equal(nr_hooked[LOCKDEP_REPORT_RECURSION], 2);
	/* Still held once, with its holder. */
	assert_true(lockdep_is_held(&a));
	assert_ptr_equal(a.holder, &tasks[0]);
	lockdep_release(&a, 0x1004);
	assert_null(a.holder);
	assert_int_equal(lockdep_depth(), 0);
	assert_int_equal(count("release of a lock not held"), 0);
}

static void test_bad_release(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < 2; i++)
		lockdep_release(&a, 0x1001);
	assert_int_equal(count("lockdep: release of a lock not held: lock_a at 0x1001 (cpu 0)\n"),
			 1);
	assert_int_equal(stats().bad_release, 2);
	assert_int_equal(stats().releases, 0);

	/* Released by a task other than its holder. */
	lockdep_acquire(&b, 0, 0x2001);
	run_as(1);
	lockdep_release(&b, 0x2002);
	assert_contains(cap.buf,
			"lockdep: release of a lock not held: lock_b at 0x2002 (cpu 0), held by "
			"task 0x");
	assert_ptr_equal(last.holder, &tasks[0]);
	run_as(0);
	lockdep_release(&b, 0x2003);
	assert_int_equal(stats().bad_release, 3);
	assert_int_equal(lockdep_depth(), 0);
	assert_prefixed();
}

struct walk {
	const struct lockdep_map *maps[LOCKDEP_MAX_DEPTH];
	unsigned flags[LOCKDEP_MAX_DEPTH];
	unsigned n;
};

static void walk_one(const struct lockdep_held_lock *hl, void *arg)
{
	struct walk *w = arg;

	/* Locks taken here (printk's, say) are not tracked meanwhile. */
	lockdep_acquire(&d, 0, 0x9999);
	w->maps[w->n] = hl->map;
	w->flags[w->n++] = hl->flags;
}

static void test_held_walk_and_print(void **state)
{
	struct walk w = { .n = 0 };

	(void)state;
	lockdep_acquire(&a, 0, 0xa1);
	lockdep_acquire(&b, LOCKDEP_TRYLOCK, 0xb1);
	lockdep_acquire(&c, LOCKDEP_READ, 0xc1);
	lockdep_for_each_held(walk_one, &w);
	assert_int_equal(w.n, 3);
	assert_ptr_equal(w.maps[0], &a);
	assert_ptr_equal(w.maps[1], &b);
	assert_ptr_equal(w.maps[2], &c);
	assert_int_equal(w.flags[1], LOCKDEP_TRYLOCK);
	assert_int_equal(lockdep_depth(), 3);
	lockdep_print_held_locks();
	assert_contains(cap.buf, "lockdep: 3 locks held by task 0x");
	assert_contains(cap.buf, "lockdep:  #0: lock_a at 0xa1\n"
				 "lockdep:  #1: lock_b at 0xb1 (trylock)\n"
				 "lockdep:  #2: lock_c at 0xc1 (read)\n");
	lockdep_release(&b, 0);
	lockdep_release(&a, 0);
	lockdep_release(&c, 0);
	assert_int_equal(stats().acquisitions, 3);
	assert_prefixed();
}

static void test_no_task(void **state)
{
	(void)state;
	cur_task = NULL;
	lockdep_acquire(&a, 0, 0x1);
	assert_true(lockdep_is_held(&b));
	lockdep_assert_held(&b);
	lockdep_release(&c, 0x2);
	assert_int_equal(lockdep_depth(), 0);
	lockdep_print_held_locks();
	assert_string_equal(cap.buf, "");
	assert_int_equal(stats().acquisitions, 0);
	run_as(0);
	assert_int_equal(lockdep_depth(), 0);
}

static void test_reset_while_held(void **state)
{
	(void)state;
	lockdep_acquire(&a, 0, 0x1);
	lockdep_acquire(&b, 0, 0x2);
	lockdep_reset();
	/* Held across the reset: released cleanly, but no longer ordered. */
	lockdep_acquire(&c, 0, 0x3);
	assert_int_equal(stats().dependencies, 0);
	lockdep_release(&c, 0x4);
	lockdep_release(&a, 0x5);
	lockdep_release(&b, 0x6);
	assert_string_equal(cap.buf, "");
	/* Classes come back on the next acquisition. */
	take_two(&b, 0x7, &a, 0x8, 0);
	assert_int_equal(stats().classes, 3);
	assert_int_equal(stats().dependencies, 1);
	assert_string_equal(cap.buf, "");
}

/* ---- fixed tables running out ------------------------------------------------------------ */

/* After the validator turned itself off: every call is quiet, nothing crashes. */
static void assert_off_and_quiet(void)
{
	size_t len = cap.len;

	assert_false(stats().enabled);
	lockdep_acquire(&a, 0, 0x1);
	lockdep_acquire(&b, 0, 0x2);
	lockdep_acquire(&a, 0, 0x3);
	lockdep_release(&c, 0x4);
	lockdep_assert_held(&d);
	assert_true(lockdep_is_held(&d));
	assert_int_equal(lockdep_depth(), 0);
	lockdep_print_held_locks();
	assert_int_equal(cap.len, len);
}

static void test_depth_overflow(void **state)
{
	static struct lockdep_map m[LOCKDEP_MAX_DEPTH + 2];
	unsigned i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(m); i++)
		lockdep_init_map(&m[i], "deep");
	for (i = 0; i < LOCKDEP_MAX_DEPTH; i++)
		lockdep_acquire(&m[i], 0, 0x100 + i);
	assert_int_equal(lockdep_depth(), LOCKDEP_MAX_DEPTH);
	assert_string_equal(cap.buf, "");
	lockdep_acquire(&m[LOCKDEP_MAX_DEPTH], 0, 0x200);
	lockdep_acquire(&m[LOCKDEP_MAX_DEPTH + 1], 0, 0x201);
	assert_int_equal(count("lockdep: held-lock stack overflow (16 locks) taking deep at 0x200 "
			       "(cpu 0); validator off\n"),
			 1);
	assert_contains(cap.buf, "lockdep: 16 locks held by task 0x");
	assert_contains(cap.buf, "lockdep:  #15: deep at 0x10f\n");
	assert_int_equal(nr_hooked[LOCKDEP_REPORT_OVERFLOW], 1);
	assert_int_equal(stats().max_depth, LOCKDEP_MAX_DEPTH);
	for (i = 0; i < ARRAY_SIZE(m); i++)
		lockdep_release(&m[i], 0x300);
	assert_off_and_quiet();
	assert_int_equal(nr_reports(), 1);
	assert_prefixed();
}

static void test_class_exhaustion(void **state)
{
	static struct lockdep_map m[LOCKDEP_MAX_CLASSES + 2];
	static char names[LOCKDEP_MAX_CLASSES + 2][16];
	unsigned i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(m); i++) {
		snprintf(names[i], sizeof(names[i]), "class%u", i);
		lockdep_init_map(&m[i], names[i]);
	}
	/* Every class taken under class0, which stays held. */
	lockdep_acquire(&m[0], 0, 0x1);
	for (i = 1; i < LOCKDEP_MAX_CLASSES; i++) {
		lockdep_acquire(&m[i], 0, 0x2);
		lockdep_release(&m[i], 0x3);
	}
	assert_string_equal(cap.buf, "");
	assert_true(stats().enabled);
	assert_int_equal(stats().dependencies, LOCKDEP_MAX_CLASSES - 1);
	for (; i < ARRAY_SIZE(m); i++) {
		lockdep_acquire(&m[i], 0, 0x4);
		lockdep_release(&m[i], 0x5);
	}
	lockdep_release(&m[0], 0x6);
	assert_int_equal(count("lockdep: lock class table full (256 classes) registering class256 "
			       "at 0x4 (cpu 0); validator off\n"),
			 1);
	assert_int_equal(nr_reports(), 1);
	assert_int_equal(stats().classes, LOCKDEP_MAX_CLASSES);
	assert_off_and_quiet();
}

static void test_dependency_exhaustion(void **state)
{
	enum { N = 48 }; /* N * (N - 1) / 2 acyclic dependencies > LOCKDEP_MAX_DEPS */
	static struct lockdep_map m[N];
	static char names[N][16];
	unsigned i, j;

	(void)state;
	_Static_assert(N * (N - 1) / 2 > LOCKDEP_MAX_DEPS, "not enough dependencies");
	for (i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "dep%u", i);
		lockdep_init_map(&m[i], names[i]);
	}
	for (i = 0; i < N; i++)
		for (j = i + 1; j < N; j++)
			take_two(&m[i], 0x100 + i, &m[j], 0x200 + j, 0);
	assert_int_equal(count("lockdep: dependency table full (1024 dependencies) at "), 1);
	assert_int_equal(count("validator off"), 1);
	assert_int_equal(count("inversion"), 0);
	assert_int_equal(stats().dependencies, LOCKDEP_MAX_DEPS);
	assert_off_and_quiet();
}

static void test_report_table_full(void **state)
{
	unsigned long ip;

	(void)state;
	/* More distinct (site, class) reports than the table remembers: no crash, one notice. */
	for (ip = 1; ip <= 300; ip++)
		lockdep_release(&a, ip);
	assert_int_equal(count("lockdep: release of a lock not held"), 256);
	assert_int_equal(count("lockdep: report table full"), 1);
	assert_int_equal(stats().bad_release, 300);
	assert_prefixed();
}

/* ---- several CPUs ------------------------------------------------------------------------ */

enum { NR_THREADS = 4, ITERATIONS = 20000 };

struct worker {
	pthread_t thread;
	unsigned id;
	struct lockdep_task task;
	struct lockdep_map outer, mid, inner, own, x, y;
	char own_name[16];
	unsigned long failures;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	int i;

	shim_set_cpu((struct cpu *)fake_cpu);
	cur_task = &w->task;
	cur_cpu = w->id;
	for (i = 0; i < ITERATIONS; i++) {
		lockdep_acquire(&w->outer, 0, 0x10);
		lockdep_acquire(&w->mid, i % 3 ? 0 : LOCKDEP_TRYLOCK, 0x11);
		lockdep_acquire(&w->inner, 0, 0x12);
		lockdep_acquire(&w->own, 0, 0x13);
		lockdep_assert_held(&w->mid);
		if (!lockdep_is_held(&w->inner) || lockdep_depth() != 4)
			w->failures++;
		lockdep_release(&w->mid, 0x14);
		lockdep_release(&w->outer, 0x15);
		lockdep_release(&w->own, 0x16);
		lockdep_release(&w->inner, 0x17);
		/* Threads 0 and 1 take x and y in opposite orders: one report in all. */
		if (w->id < 2) {
			struct lockdep_map *first = w->id ? &w->y : &w->x;
			struct lockdep_map *second = w->id ? &w->x : &w->y;

			lockdep_acquire(first, 0, 0x20 + w->id);
			lockdep_acquire(second, 0, 0x30 + w->id);
			lockdep_release(second, 0x40);
			lockdep_release(first, 0x41);
		}
		if (lockdep_depth() != 0)
			w->failures++;
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	static struct worker workers[NR_THREADS];
	struct lockdep_stats st;
	unsigned i;

	(void)state;
	for (i = 0; i < NR_THREADS; i++) {
		struct worker *w = &workers[i];

		w->id = i;
		w->failures = 0;
		lockdep_task_init(&w->task);
		snprintf(w->own_name, sizeof(w->own_name), "own%u", i);
		lockdep_init_map(&w->outer, "outer");
		lockdep_init_map(&w->mid, "mid");
		lockdep_init_map(&w->inner, "inner");
		lockdep_init_map(&w->own, w->own_name);
		lockdep_init_map(&w->x, "x");
		lockdep_init_map(&w->y, "y");
	}
	for (i = 0; i < NR_THREADS; i++)
		assert_int_equal(pthread_create(&workers[i].thread, NULL, worker_fn, &workers[i]),
				 0);
	for (i = 0; i < NR_THREADS; i++) {
		assert_int_equal(pthread_join(workers[i].thread, NULL), 0);
		assert_int_equal(workers[i].failures, 0);
	}
	st = stats();
	assert_int_equal(st.acquisitions, (uint64_t)ITERATIONS * (NR_THREADS * 4 + 2 * 2));
	assert_int_equal(st.releases, st.acquisitions);
	assert_int_equal(st.classes, 3 + NR_THREADS + 2);
	/* outer -> mid, outer/mid -> inner, outer/mid/inner -> own%u; x -> y, y -> x. */
	assert_int_equal(st.dependencies, 3 + 3 * NR_THREADS + 2);
	assert_int_equal(st.inversions, 1);
	assert_int_equal(st.not_held + st.held + st.bad_release + st.recursion, 0);
	assert_int_equal(st.max_depth, 4);
	assert_true(st.enabled);
	assert_int_equal(count("lockdep: lock order inversion: "), 1);
	assert_int_equal(nr_reports(), 1);
	assert_prefixed();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_nested_quiet, setup),
		cmocka_unit_test_setup(test_ab_ba, setup),
		cmocka_unit_test_setup(test_expected_report, setup),
		cmocka_unit_test_setup(test_cycle_of_three, setup),
		cmocka_unit_test_setup(test_long_chain, setup),
		cmocka_unit_test_setup(test_trylock, setup),
		cmocka_unit_test_setup(test_same_class_and_unnamed, setup),
		cmocka_unit_test_setup(test_contended, setup),
		cmocka_unit_test_setup(test_assert_held, setup),
		cmocka_unit_test_setup(test_shared, setup),
		cmocka_unit_test_setup(test_recursion, setup),
		cmocka_unit_test_setup(test_bad_release, setup),
		cmocka_unit_test_setup(test_held_walk_and_print, setup),
		cmocka_unit_test_setup(test_no_task, setup),
		cmocka_unit_test_setup(test_reset_while_held, setup),
		cmocka_unit_test_setup(test_depth_overflow, setup),
		cmocka_unit_test_setup(test_class_exhaustion, setup),
		cmocka_unit_test_setup(test_dependency_exhaustion, setup),
		cmocka_unit_test_setup(test_report_table_full, setup),
		cmocka_unit_test_setup(test_concurrent, setup),
	};

	shim_set_cpu((struct cpu *)fake_cpu);
	arch_irq_enable();
	console_register(&cap.con);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
