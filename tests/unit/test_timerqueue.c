// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/timerqueue.c: ordering, removal of arbitrary nodes, the
 * first-changed return values, FIFO among equal expiries, and random sequences (fixed seeds)
 * against a sorted-array reference, with the red-black rules checked after every operation.
 */
#include "tests/unit/unit.h"

#include <inttypes.h>
#include <stdlib.h>

#include "kernel/timerqueue.h"
#include "tests/unit/splitmix.h"

/* Black height of the subtree, failing on any broken rule. */
static unsigned check_subtree(const struct tq_node *n, const struct tq_node *parent, size_t *count,
			      uint64_t lo, uint64_t hi)
{
	unsigned bl, br;

	if (!n)
		return 1;
	assert_ptr_equal(n->parent, parent);
	assert_true(n->queued);
	assert_true(n->expires >= lo && n->expires <= hi);
	if (n->red) {
		assert_false(n->left && n->left->red);
		assert_false(n->right && n->right->red);
	}
	(*count)++;
	bl = check_subtree(n->left, n, count, lo, n->expires);
	br = check_subtree(n->right, n, count, n->expires, hi);
	assert_int_equal(bl, br);
	return bl + !n->red;
}

static void check_tree(const struct timerqueue *q)
{
	size_t count = 0;
	const struct tq_node *n, *prev = NULL;
	size_t walked = 0;

	if (q->root) {
		assert_false(q->root->red);
		assert_null(q->root->parent);
	}
	check_subtree(q->root, NULL, &count, 0, UINT64_MAX);
	assert_int_equal(count, tq_count(q));
	if (!q->root) {
		assert_null(tq_first(q));
		return;
	}
	n = q->root;
	while (n->left)
		n = n->left;
	assert_ptr_equal(tq_first(q), n);
	for (n = tq_first(q); n; n = tq_next(n)) {
		if (prev)
			assert_true(prev->expires <= n->expires);
		prev = n;
		walked++;
	}
	assert_int_equal(walked, count);
}

static void test_empty(void **state)
{
	struct timerqueue q;
	struct tq_node n;

	(void)state;
	tq_init(&q);
	tq_node_init(&n);
	assert_null(tq_first(&q));
	assert_int_equal(tq_count(&q), 0);
	assert_false(tq_queued(&n));
	assert_false(tq_del(&q, &n)); /* not queued: nothing happens */
	check_tree(&q);

	n.expires = 5;
	assert_true(tq_add(&q, &n)); /* first node of an empty queue */
	assert_true(tq_queued(&n));
	assert_ptr_equal(tq_first(&q), &n);
	assert_null(tq_next(&n));
	assert_true(tq_del(&q, &n)); /* it was first; the queue is empty again */
	assert_false(tq_queued(&n));
	assert_null(tq_first(&q));
	check_tree(&q);
}

static void test_ordering(void **state)
{
	enum { N = 1000 };
	static struct tq_node n[N];
	struct timerqueue q;
	const struct tq_node *p;
	unsigned i, pass;

	(void)state;
	for (pass = 0; pass < 3; pass++) {
		uint64_t last = 0;

		tq_init(&q);
		for (i = 0; i < N; i++) {
			unsigned k = pass == 0 ? i : pass == 1 ? N - 1 - i : (i * 389) % N;

			tq_node_init(&n[k]);
			n[k].expires = 1000 + 10 * (uint64_t)k;
			/* Ascending: never a new first; descending: always. */
			assert_int_equal(tq_add(&q, &n[k]), pass == 0	? i == 0
							    : pass == 1 ? 1
									: k < last || i == 0);
			if (i == 0 || k < last)
				last = k;
		}
		check_tree(&q);
		for (i = 0, p = tq_first(&q); p; p = tq_next(p), i++)
			assert_ptr_equal(p, &n[i]);
		assert_int_equal(i, N);
		/* Pop in order: every delete of the first changes the first. */
		for (i = 0; i < N; i++) {
			assert_ptr_equal(tq_first(&q), &n[i]);
			assert_true(tq_del(&q, &n[i]));
		}
		assert_null(tq_first(&q));
	}
}

static void test_arbitrary_removal(void **state)
{
	enum { N = 512 };
	static struct tq_node n[N];
	struct timerqueue q;
	unsigned i;

	(void)state;
	tq_init(&q);
	for (i = 0; i < N; i++) {
		tq_node_init(&n[i]);
		n[i].expires = (uint64_t)i * 3;
		tq_add(&q, &n[i]);
	}
	/* Middle nodes, inner nodes with two children, leaves: never the first. */
	for (i = N - 1; i > 0; i -= 3) {
		assert_false(tq_del(&q, &n[i]));
		assert_false(tq_queued(&n[i]));
		check_tree(&q);
		if (i < 3)
			break;
	}
	assert_ptr_equal(tq_first(&q), &n[0]);
	/* Deleting twice is harmless. */
	assert_false(tq_del(&q, &n[N - 1]));
	check_tree(&q);
	/* The first: the next survivor (n[1] went above) takes over. */
	assert_true(tq_del(&q, &n[0]));
	assert_ptr_equal(tq_first(&q), &n[2]);
	check_tree(&q);
	/* The root, repeatedly. */
	while (q.root) {
		struct tq_node *r = q.root;
		bool first = tq_first(&q) == r;

		assert_int_equal(tq_del(&q, r), first);
		check_tree(&q);
	}
	assert_int_equal(tq_count(&q), 0);
}

static void test_duplicates(void **state)
{
	enum { N = 200 };
	static struct tq_node n[N];
	struct timerqueue q;
	const struct tq_node *p;
	unsigned i;

	(void)state;
	tq_init(&q);
	/* Four expiries, fifty nodes each, interleaved. */
	for (i = 0; i < N; i++) {
		tq_node_init(&n[i]);
		n[i].expires = 100 * (3 - i % 4);
		/* Equal to the current first is not a new first. */
		assert_int_equal(tq_add(&q, &n[i]), i < 4);
	}
	check_tree(&q);
	/* In expiry order, and FIFO (insertion order) among equals. */
	i = 0;
	for (p = tq_first(&q); p; p = tq_next(p)) {
		const struct tq_node *nx = tq_next(p);

		if (nx && nx->expires == p->expires)
			assert_true(nx > p);
		i++;
	}
	assert_int_equal(i, N);
	assert_ptr_equal(tq_first(&q), &n[3]);
	/* Removing the first of equals: the next equal one, in FIFO order, is first. */
	assert_true(tq_del(&q, &n[3]));
	assert_ptr_equal(tq_first(&q), &n[7]);
	/* Removing a non-first equal: first unchanged. */
	assert_false(tq_del(&q, &n[11]));
	assert_ptr_equal(tq_first(&q), &n[7]);
	check_tree(&q);
}

/* Reference: array sorted by (expires, insertion sequence), kept by insertion. */
struct ref {
	struct tq_node *node;
	uint64_t expires;
	uint64_t seq;
};

static void random_run(uint64_t seed, unsigned nodes, unsigned steps, uint64_t key_range)
{
	struct tq_node *n = calloc(nodes, sizeof(*n));
	struct ref *ref = calloc(nodes, sizeof(*ref));
	uint64_t *seq = calloc(nodes, sizeof(*seq)), next_seq = 0;
	struct timerqueue q;
	size_t nref = 0;
	unsigned step, i;

	assert_non_null(n);
	assert_non_null(ref);
	assert_non_null(seq);
	rng_state = seed;
	tq_init(&q);
	for (i = 0; i < nodes; i++)
		tq_node_init(&n[i]);

	for (step = 0; step < steps; step++) {
		struct tq_node *x = &n[rnd() % nodes];
		struct tq_node *old_first = tq_first(&q);
		size_t k;

		if (!tq_queued(x) && rnd() % 100 < 55) {
			x->expires = rnd() % key_range;
			seq[x - n] = next_seq++;
			/* After every equal key: the newest sequence number. */
			for (k = nref; k > 0 && ref[k - 1].expires > x->expires; k--)
				;
			memmove(&ref[k + 1], &ref[k], (nref - k) * sizeof(*ref));
			ref[k] = (struct ref){ x, x->expires, seq[x - n] };
			nref++;
			assert_int_equal(tq_add(&q, x), ref[0].node == x);
		} else if (tq_queued(x)) {
			for (k = 0; k < nref && ref[k].node != x; k++)
				;
			assert_true(k < nref);
			memmove(&ref[k], &ref[k + 1], (nref - k - 1) * sizeof(*ref));
			nref--;
			assert_int_equal(tq_del(&q, x), old_first == x);
			assert_false(tq_queued(x));
		} else {
			assert_false(tq_del(&q, x));
		}
		assert_int_equal(tq_count(&q), nref);
		assert_ptr_equal(tq_first(&q), nref ? ref[0].node : NULL);
		if (step % 16 == 0 || nref < 20) {
			const struct tq_node *p = tq_first(&q);

			check_tree(&q);
			for (k = 0; k < nref; k++, p = tq_next(p))
				assert_ptr_equal(p, ref[k].node);
			assert_null(p);
		}
	}
	free(n);
	free(ref);
	free(seq);
}

static void test_random_vs_sorted_array(void **state)
{
	(void)state;
	random_run(1, 64, 20000, 1000000);
	random_run(2, 500, 30000, 1000000000000ull);
	random_run(3, 300, 30000, 8); /* many duplicates */
	random_run(0xfeedull, 2000, 40000, UINT64_MAX);
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_empty), cmocka_unit_test(test_ordering),
	  cmocka_unit_test(test_arbitrary_removal), cmocka_unit_test(test_duplicates),
	  cmocka_unit_test(test_random_vs_sorted_array))
