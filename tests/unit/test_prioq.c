// SPDX-License-Identifier: MIT
/*
 * guest/kernel/prioq.c: the fixed-priority queue of each run queue. Pick order (priority, then FIFO,
 * head insertion for preempted threads), and random operation sequences over two queues
 * ("CPUs") with migration between them, checked against a reference model: nothing is
 * lost or duplicated and every pick is the reference's best.
 */
#include "unit.h"

#include <stdlib.h>

#include "kernel/prioq.h"

struct ent {
	struct prioq_node e;
	int id;
	int where; /* -1: not queued; else queue index */
	int64_t seq; /* reference order within a priority: smaller runs first */
};

static struct ent *of(struct prioq_node *e)
{
	return e ? container_of(e, struct ent, e) : NULL;
}

static void test_empty(void **state)
{
	struct prioq q;

	(void)state;
	prioq_init(&q);
	assert_null(prioq_peek(&q));
	assert_int_equal(prioq_top_prio(&q), -1);
	assert_int_equal(q.nr, 0);
}

static void test_priority_then_fifo(void **state)
{
	struct prioq q;
	struct ent e[6];
	static const int prio[6] = { 10, 50, 10, 99, 0, 50 };
	static const int order[6] = { 3, 1, 5, 0, 2, 4 };
	int i;

	(void)state;
	prioq_init(&q);
	for (i = 0; i < 6; i++) {
		prioq_node_init(&e[i].e, prio[i]);
		e[i].id = i;
		prioq_add(&q, &e[i].e, false);
	}
	assert_int_equal(q.nr, 6);
	for (i = 0; i < 6; i++) {
		struct ent *p = of(prioq_peek(&q));

		assert_non_null(p);
		assert_int_equal(p->id, order[i]);
		assert_int_equal(prioq_top_prio(&q), prio[order[i]]);
		prioq_del(&q, &p->e);
		assert_false(p->e.queued);
	}
	assert_null(prioq_peek(&q));
}

static void test_head_insertion(void **state)
{
	struct prioq q;
	struct ent a, b, c;

	(void)state;
	prioq_init(&q);
	prioq_node_init(&a.e, 20);
	prioq_node_init(&b.e, 20);
	prioq_node_init(&c.e, 20);
	a.id = 0;
	b.id = 1;
	c.id = 2;
	prioq_add(&q, &a.e, false);
	prioq_add(&q, &b.e, false);
	prioq_add(&q, &c.e, true); /* a preempted thread resumes first */
	assert_int_equal(of(prioq_peek(&q))->id, 2);
	prioq_del(&q, &c.e);
	assert_int_equal(of(prioq_peek(&q))->id, 0);
}

static void test_bitmap_words(void **state)
{
	struct prioq q;
	struct ent e[PRIOQ_NR_PRIO];
	int p;

	(void)state;
	prioq_init(&q);
	for (p = 0; p < PRIOQ_NR_PRIO; p++) {
		prioq_node_init(&e[p].e, p);
		prioq_add(&q, &e[p].e, false);
		assert_int_equal(prioq_top_prio(&q), p);
	}
	for (p = PRIOQ_NR_PRIO - 1; p >= 0; p--) {
		assert_int_equal(prioq_top_prio(&q), p);
		prioq_del(&q, &e[p].e);
	}
	assert_int_equal(prioq_top_prio(&q), -1);
}

/* Reference: the best queued entity of queue `w` (highest prio, lowest seq). */
static struct ent *ref_best(struct ent *e, int n, int w)
{
	struct ent *best = NULL;
	int i;

	for (i = 0; i < n; i++) {
		if (e[i].where != w)
			continue;
		if (!best || e[i].e.prio > best->e.prio ||
		    (e[i].e.prio == best->e.prio && e[i].seq < best->seq))
			best = &e[i];
	}
	return best;
}

static void random_run(unsigned seed, int n, int steps)
{
	struct prioq q[2];
	struct ent *e = calloc((size_t)n, sizeof(*e));
	int64_t seq = 1, head_seq = 0;
	unsigned counted[2] = { 0, 0 };
	int i, step;

	srand(seed);
	prioq_init(&q[0]);
	prioq_init(&q[1]);
	for (i = 0; i < n; i++) {
		prioq_node_init(&e[i].e, rand() % PRIOQ_NR_PRIO);
		e[i].id = i;
		e[i].where = -1;
	}
	for (step = 0; step < steps; step++) {
		struct ent *x = &e[rand() % n];
		int w = rand() % 2, op = rand() % 5;

		if (op == 0 && x->where < 0) {
			/* enqueue, sometimes at the head, sometimes after a priority change */
			bool head = rand() % 4 == 0;

			if (rand() % 3 == 0)
				x->e.prio = rand() % PRIOQ_NR_PRIO;
			prioq_add(&q[w], &x->e, head);
			x->where = w;
			/* A head insertion goes before everything of its priority, earlier
			 * head insertions included. */
			x->seq = head ? --head_seq : seq++;
		} else if (op == 1 && x->where >= 0) {
			prioq_del(&q[x->where], &x->e);
			x->where = -1;
		} else if (op == 2 && x->where >= 0) {
			/* migrate to the other queue (tail) */
			int to = 1 - x->where;

			prioq_del(&q[x->where], &x->e);
			prioq_add(&q[to], &x->e, false);
			x->where = to;
			x->seq = seq++;
		} else if (op >= 3) {
			/* pick on queue w, compare with the reference, dequeue it */
			struct ent *got = of(prioq_peek(&q[w])), *want = ref_best(e, n, w);

			if (want) {
				assert_non_null(got);
				assert_int_equal(got->e.prio, want->e.prio);
				assert_ptr_equal(got, want);
				prioq_del(&q[w], &got->e);
				got->where = -1;
			} else {
				assert_null(got);
			}
		}
		counted[0] = counted[1] = 0;
		for (i = 0; i < n; i++) {
			assert_int_equal(e[i].e.queued, e[i].where >= 0);
			if (e[i].where >= 0)
				counted[e[i].where]++;
		}
		assert_int_equal(q[0].nr, counted[0]);
		assert_int_equal(q[1].nr, counted[1]);
	}
	free(e);
}

static void test_random_sequences(void **state)
{
	static const unsigned seeds[] = { 1, 42, 1234, 99991, 7 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		random_run(seeds[i], 64, 20000);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_empty), cmocka_unit_test(test_priority_then_fifo),
	  cmocka_unit_test(test_head_insertion), cmocka_unit_test(test_bitmap_words),
	  cmocka_unit_test(test_random_sequences))
