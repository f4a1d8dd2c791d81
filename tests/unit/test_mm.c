// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/mm.c over an aligned host buffer: the first-fit page
 * allocator (runs, exhaustion, zeroing, bad frees) and kmalloc (alignment, size classes,
 * large objects, statistics), each also driven by a seeded random sequence checked against
 * a reference model. Paths that panic (the real guest panic(), through the shim's
 * arch_poweroff()) run in a forked child: exit status 100 + GUEST_EXIT_PANIC.
 */
#include "tests/unit/unit.h"

#include <stdio.h>
#include <stdlib.h>

#include "arch.h"
#include "kernel/mm.h"
#include "kernel/panic.h"
#include "kernel/printk.h"

#define PANIC_EXIT (100 + GUEST_EXIT_PANIC)

/* ---- what mm.c links against ----------------------------------------------------------- */

/* panic() reports through printk: a console on stderr, which unit_run_child() captures. */
static void stderr_write(struct console *con, const char *str, size_t n)
{
	(void)con;
	if (write(2, str, n) < 0)
		abort();
}

static struct console stderr_console = { .name = "stderr", .write = stderr_write };

/* ---- arena and helpers ----------------------------------------------------------------- */

static uint8_t *arena;
static size_t arena_pages;

static void arena_init(size_t pages)
{
	free(arena);
	arena = aligned_alloc(PAGE_SIZE, pages * PAGE_SIZE);
	assert_non_null(arena);
	arena_pages = pages;
	memset(arena, 0xdb, pages * PAGE_SIZE);
	mm_init((uintptr_t)arena, (uintptr_t)arena + pages * PAGE_SIZE);
}

static struct mm_stats stats(void)
{
	struct mm_stats st;

	mm_get_stats(&st);
	return st;
}

static size_t page_index(const void *p)
{
	uintptr_t a = (uintptr_t)p;

	assert_true(a >= (uintptr_t)arena && a < (uintptr_t)arena + arena_pages * PAGE_SIZE);
	assert_int_equal((a - (uintptr_t)arena) % PAGE_SIZE, 0);
	return (a - (uintptr_t)arena) / PAGE_SIZE;
}

/* A small deterministic PRNG (xorshift64*), so a failing sequence can be replayed. */
static uint64_t rng_state;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static size_t rng_below(size_t n)
{
	return (size_t)(rng() % n);
}

/* ---- page allocator ------------------------------------------------------------------- */

static int page_setup(void **state)
{
	(void)state;
	arena_init(256);
	return 0;
}

static void test_page_init(void **state)
{
	struct mm_stats st = stats();

	(void)state;
	/* 256 pages: one bitmap page, 255 free. */
	assert_int_equal(st.total_pages, 256);
	assert_int_equal(st.free_pages, 255);
	assert_int_equal(st.kmalloc_bytes, 0);

	/* Unaligned bounds shrink inward to whole pages. */
	mm_init((uintptr_t)arena + 1, (uintptr_t)arena + 256 * PAGE_SIZE - 1);
	st = stats();
	assert_int_equal(st.total_pages, 254);
	assert_int_equal(st.free_pages, 253);
	assert_ptr_equal(page_alloc(1), arena + 2 * PAGE_SIZE);

	/* A bitmap bigger than one page: 40000 pages need 5000 bytes of bitmap. */
	free(arena);
	arena = aligned_alloc(PAGE_SIZE, 40000 * PAGE_SIZE);
	assert_non_null(arena);
	arena_pages = 40000;
	mm_init((uintptr_t)arena, (uintptr_t)arena + 40000 * PAGE_SIZE);
	st = stats();
	assert_int_equal(st.total_pages, 40000);
	assert_int_equal(st.free_pages, 40000 - 2);
	assert_ptr_equal(page_alloc(1), arena + 2 * PAGE_SIZE);
	/* The last page is reachable, and nothing past it. */
	assert_ptr_equal(page_alloc(40000 - 3), arena + 3 * PAGE_SIZE);
	assert_null(page_alloc(1));
	arena_init(256);
}

static void test_page_first_fit(void **state)
{
	uint8_t *a, *b, *c, *d, *e, *f;

	(void)state;
	a = page_alloc(1);
	b = page_alloc(2);
	c = page_alloc(1);
	assert_ptr_equal(a, arena + 1 * PAGE_SIZE);
	assert_ptr_equal(b, arena + 2 * PAGE_SIZE);
	assert_ptr_equal(c, arena + 4 * PAGE_SIZE);
	assert_int_equal(stats().free_pages, 255 - 4);

	/* A two-page hole: a one-page request takes its start, a two-page one goes past. */
	page_free(b, 2);
	assert_int_equal(stats().free_pages, 255 - 2);
	d = page_alloc(1);
	assert_ptr_equal(d, b);
	e = page_alloc(2);
	assert_ptr_equal(e, arena + 5 * PAGE_SIZE);
	f = page_alloc(1);
	assert_ptr_equal(f, b + PAGE_SIZE);

	/* Freeing the lowest page makes it the next one handed out. */
	page_free(a, 1);
	assert_ptr_equal(page_alloc(1), a);

	/* Runs longer than a bitmap word, starting mid-word. */
	a = page_alloc(100);
	assert_ptr_equal(a, arena + 7 * PAGE_SIZE);
	b = page_alloc(64);
	assert_ptr_equal(b, arena + 107 * PAGE_SIZE);
	page_free(a, 100);
	c = page_alloc(99);
	assert_ptr_equal(c, a);
	d = page_alloc(2); /* one page left in the hole: goes after b */
	assert_ptr_equal(d, arena + 171 * PAGE_SIZE);
	d = page_alloc(1);
	assert_ptr_equal(d, arena + 106 * PAGE_SIZE);
}

static void test_page_exhaustion(void **state)
{
	size_t free_pages = stats().free_pages, i;
	uint8_t **pages = calloc(free_pages, sizeof(*pages));

	(void)state;
	assert_non_null(pages);
	assert_null(page_alloc(0));
	assert_null(page_alloc(free_pages + 1));
	assert_null(page_alloc(SIZE_MAX / PAGE_SIZE));
	assert_int_equal(stats().free_pages, free_pages);
	for (i = 0; i < free_pages; i++) {
		pages[i] = page_alloc(1);
		assert_non_null(pages[i]);
		page_index(pages[i]);
	}
	assert_int_equal(stats().free_pages, 0);
	assert_null(page_alloc(1));
	assert_null(page_alloc(2));
	for (i = 0; i < free_pages; i += 2)
		page_free(pages[i], 1);
	/* Plenty of free pages, but no two adjacent. */
	assert_null(page_alloc(2));
	for (i = 1; i < free_pages; i += 2)
		page_free(pages[i], 1);
	assert_int_equal(stats().free_pages, free_pages);
	/* Back in one piece. */
	pages[0] = page_alloc(free_pages);
	assert_ptr_equal(pages[0], arena + PAGE_SIZE);
	page_free(pages[0], free_pages);
	page_free(NULL, 3); /* ignored */
	assert_int_equal(stats().free_pages, free_pages);
	free(pages);
}

static void test_page_zalloc(void **state)
{
	uint8_t *p;
	size_t i;

	(void)state;
	p = page_alloc(3);
	memset(p, 0xaa, 3 * PAGE_SIZE);
	page_free(p, 3);
	assert_ptr_equal(page_zalloc(3), p);
	for (i = 0; i < 3 * PAGE_SIZE; i++)
		if (p[i])
			fail_msg("byte %zu not zeroed", i);
	page_free(p, 3);
}

/*
 * Random page allocations and frees against a model (one owner per page): every run
 * must be free in the model (no overlap) and be the first fit; at the end everything is
 * back and the allocator is in one piece again.
 */
static void test_page_random(void **state)
{
	enum { MAX_LIVE = 64, STEPS = 20000 };
	struct {
		uint8_t *p;
		size_t n;
	} live[MAX_LIVE];
	int owner[256];
	size_t nr_live = 0, step, i, j, initial = stats().free_pages, model_free = initial;

	(void)state;
	rng_state = 0x5eed1234abcdull;
	for (i = 0; i < 256; i++)
		owner[i] = i == 0 ? -2 : -1;
	for (step = 0; step < STEPS; step++) {
		if (nr_live < MAX_LIVE && (nr_live == 0 || rng_below(100) < 55)) {
			size_t n = 1 + (rng_below(4) ? rng_below(8) : rng_below(90)), first = 0,
			       run = 0, want = SIZE_MAX;
			uint8_t *p;

			for (i = 0; i < 256 && want == SIZE_MAX; i++) {
				if (owner[i] != -1) {
					run = 0;
					continue;
				}
				if (!run++)
					first = i;
				if (run == n)
					want = first;
			}
			p = page_alloc(n);
			if (want == SIZE_MAX) {
				if (p)
					fail_msg(
					    "step %zu: got %zu pages the model has no room for",
					    step, n);
				continue;
			}
			if (!p)
				fail_msg("step %zu: no %zu pages, model has them at %zu", step, n,
					 want);
			if (page_index(p) != want)
				fail_msg("step %zu: %zu pages at %zu, first fit is %zu", step, n,
					 page_index(p), want);
			for (j = want; j < want + n; j++)
				owner[j] = (int)nr_live;
			memset(p, (int)(step & 0xff), n * PAGE_SIZE);
			live[nr_live].p = p;
			live[nr_live].n = n;
			nr_live++;
			model_free -= n;
		} else {
			size_t k = rng_below(nr_live), first = page_index(live[k].p);

			/* The run still holds what was written: nobody else got it. */
			for (j = 1; j < live[k].n * PAGE_SIZE; j++)
				assert_int_equal(live[k].p[j], live[k].p[0]);
			page_free(live[k].p, live[k].n);
			for (j = first; j < first + live[k].n; j++)
				owner[j] = -1;
			model_free += live[k].n;
			live[k] = live[--nr_live];
			for (j = 0; j < 256; j++)
				if (owner[j] == (int)nr_live)
					owner[j] = (int)k;
		}
		assert_int_equal(stats().free_pages, model_free);
	}
	while (nr_live) {
		nr_live--;
		page_free(live[nr_live].p, live[nr_live].n);
	}
	assert_int_equal(stats().free_pages, initial);
	assert_ptr_equal(page_alloc(initial), arena + PAGE_SIZE);
}

/* ---- bad frees (forked children) ------------------------------------------------------ */

static void do_page_double_free(void *arg)
{
	void *p = page_alloc(2);

	(void)arg;
	page_free(p, 2);
	page_free(p, 2);
}

static void do_page_partial_double_free(void *arg)
{
	uint8_t *p = page_alloc(3);

	(void)arg;
	page_free(p + PAGE_SIZE, 1);
	page_free(p, 3);
}

static void do_page_free_outside(void *arg)
{
	(void)arg;
	page_free(arena + arena_pages * PAGE_SIZE, 1);
}

static void do_page_free_below(void *arg)
{
	static uint8_t not_ours[PAGE_SIZE] __attribute__((aligned(4096)));

	(void)arg;
	page_free(not_ours, 1);
}

static void do_page_free_unaligned(void *arg)
{
	uint8_t *p = page_alloc(1);

	(void)arg;
	page_free(p + 8, 1);
}

static void do_page_free_past_end(void *arg)
{
	uint8_t *p = page_alloc(1);

	(void)arg;
	page_free(p, arena_pages);
}

static void do_page_free_huge_count(void *arg)
{
	uint8_t *p = page_alloc(1);

	(void)arg;
	/* A count so large that index + count wraps around. */
	page_free(p, SIZE_MAX);
	fprintf(stderr, "accepted; free pages now %zu\n", stats().free_pages);
}

static void do_page_free_bitmap(void *arg)
{
	(void)arg;
	/* The allocator's own bitmap page is not something page_alloc() handed out. */
	page_free(arena, 1);
	/* Were it accepted, the next allocation would be the bitmap itself. */
	fprintf(stderr, "accepted; next page %p, arena %p\n", page_alloc(1), (void *)arena);
}

static void expect_panic(void (*fn)(void *), const char *needle)
{
	char out[1024];
	int st = unit_run_child(fn, NULL, out, sizeof(out));

	if (st != PANIC_EXIT)
		fail_msg("exit status %d, expected %d (panic); output: %s", st, PANIC_EXIT, out);
	assert_contains(out, "PANIC: cpu 0: ");
	assert_contains(out, needle);
}

static void test_page_bad_frees(void **state)
{
	(void)state;
	expect_panic(do_page_double_free, "freed twice");
	expect_panic(do_page_partial_double_free, "freed twice");
	expect_panic(do_page_free_outside, "is not allocator memory");
	expect_panic(do_page_free_below, "is not allocator memory");
	expect_panic(do_page_free_unaligned, "is not allocator memory");
	expect_panic(do_page_free_past_end, "is not allocator memory");
	expect_panic(do_page_free_huge_count, "is not allocator memory");
	expect_panic(do_page_free_bitmap, "is not allocator memory");
}

/* ---- kmalloc -------------------------------------------------------------------------- */

/* Bytes kmalloc accounts for a request of `size`. */
static size_t charged(size_t size)
{
	size_t total = size + 16, c = 32;

	if (total > 2048)
		return (total + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE;
	while (c < total)
		c *= 2;
	return c;
}

static int kmalloc_setup(void **state)
{
	(void)state;
	/* One arena for all kmalloc tests: mm_init() does not reset kmalloc's free lists. */
	arena_init(4096);
	return 0;
}

static void test_kmalloc_classes(void **state)
{
	static const size_t sizes[] = { 0,    1,    15,	  16,	17,   48,   49,	  100,
					112,  113,  240,  241,	496,  497,  1000, 1008,
					1009, 2000, 2032, 2033, 4080, 4081, 5000, 65536 };
	size_t i, before = stats().kmalloc_bytes;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t b = stats().kmalloc_bytes, pages = stats().free_pages;
		uint8_t *p = kmalloc(sizes[i]);

		assert_non_null(p);
		if ((uintptr_t)p % 16)
			fail_msg("kmalloc(%zu) = %p is not 16-byte aligned", sizes[i], (void *)p);
		assert_int_equal(stats().kmalloc_bytes - b, charged(sizes[i]));
		memset(p, 0xee, sizes[i]);
		if (sizes[i] + 16 > 2048) {
			/* Large: whole pages, the header at the start of the first. */
			assert_int_equal(((uintptr_t)p - 16) % PAGE_SIZE, 0);
			assert_int_equal(pages - stats().free_pages, charged(sizes[i]) / PAGE_SIZE);
		}
		kfree(p);
		assert_int_equal(stats().kmalloc_bytes, b);
		if (sizes[i] + 16 > 2048)
			assert_int_equal(stats().free_pages, pages);
	}
	assert_int_equal(stats().kmalloc_bytes, before);
	assert_null(kmalloc((1ul << 30) + 1));
	assert_null(kmalloc(SIZE_MAX));
	assert_null(kmalloc(SIZE_MAX - 8));
	assert_null(kmalloc(64ul << 20)); /* more than the arena */
	assert_int_equal(stats().kmalloc_bytes, before);
	kfree(NULL);
	assert_int_equal(stats().kmalloc_bytes, before);
}

static void test_kmalloc_reuse_and_zero(void **state)
{
	uint8_t *p, *q;
	size_t i;

	(void)state;
	p = kmalloc(200);
	memset(p, 0x77, 200);
	kfree(p);
	/* The free list is LIFO: the same object comes back, zeroed by kzalloc. */
	q = kzalloc(200);
	assert_ptr_equal(q, p);
	for (i = 0; i < 200; i++)
		assert_int_equal(q[i], 0);
	kfree(q);
	p = kmalloc(3000);
	memset(p, 0x77, 3000);
	kfree(p);
	q = kzalloc(3000);
	for (i = 0; i < 3000; i++)
		assert_int_equal(q[i], 0);
	kfree(q);
}

static void test_kmalloc_neighbours(void **state)
{
	enum { N = 300 };
	uint8_t *p[N];
	size_t size[N], i, j, before = stats().kmalloc_bytes;

	(void)state;
	/* Objects of one class side by side: filling each completely harms no other. */
	for (i = 0; i < N; i++) {
		size[i] = 1 + (i * 37) % 500;
		p[i] = kmalloc(size[i]);
		assert_non_null(p[i]);
		memset(p[i], (int)i, size[i]);
	}
	for (i = 0; i < N; i++)
		for (j = 0; j < size[i]; j++)
			if (p[i][j] != (uint8_t)i)
				fail_msg("object %zu byte %zu overwritten", i, j);
	for (i = 0; i < N; i++)
		kfree(p[i]);
	assert_int_equal(stats().kmalloc_bytes, before);
}

struct live_obj {
	uint8_t *p;
	size_t size;
	uint8_t fill;
};

static int cmp_obj(const void *a, const void *b)
{
	const struct live_obj *x = a, *y = b;

	return x->p < y->p ? -1 : x->p > y->p;
}

/* One seeded random kmalloc/kfree sequence; returns with everything freed. */
static void kmalloc_random_run(uint64_t seed)
{
	enum { MAX_LIVE = 400, STEPS = 30000 };
	static struct live_obj live[MAX_LIVE], sorted[MAX_LIVE];
	size_t nr_live = 0, step, i, model_bytes = stats().kmalloc_bytes;
	const size_t start_bytes = model_bytes;

	rng_state = seed;
	for (step = 0; step < STEPS; step++) {
		if (nr_live < MAX_LIVE && (nr_live == 0 || rng_below(100) < 52)) {
			size_t r = rng_below(100), size;
			uint8_t *p;

			size = r < 70	? rng_below(128)
			       : r < 95 ? rng_below(2100)
					: rng_below(20000);
			p = kmalloc(size);
			if (!p)
				fail_msg("step %zu: kmalloc(%zu) failed", step, size);
			if ((uintptr_t)p % 16)
				fail_msg("step %zu: %p misaligned", step, (void *)p);
			live[nr_live] = (struct live_obj){ p, size, (uint8_t)rng() };
			memset(p, live[nr_live].fill, size);
			nr_live++;
			model_bytes += charged(size);
		} else {
			size_t k = rng_below(nr_live);

			for (i = 0; i < live[k].size; i++)
				if (live[k].p[i] != live[k].fill)
					fail_msg("step %zu: object %p (%zu bytes) byte %zu changed",
						 step, (void *)live[k].p, live[k].size, i);
			kfree(live[k].p);
			model_bytes -= charged(live[k].size);
			live[k] = live[--nr_live];
		}
		assert_int_equal(stats().kmalloc_bytes, model_bytes);
		if (step % 1000 == 999) {
			/* No two live objects overlap (header included). */
			memcpy(sorted, live, nr_live * sizeof(live[0]));
			qsort(sorted, nr_live, sizeof(sorted[0]), cmp_obj);
			for (i = 1; i < nr_live; i++)
				if (sorted[i - 1].p + sorted[i - 1].size + 16 > sorted[i].p)
					fail_msg("step %zu: %p+%zu overlaps %p", step,
						 (void *)sorted[i - 1].p, sorted[i - 1].size,
						 (void *)sorted[i].p);
		}
	}
	while (nr_live) {
		nr_live--;
		kfree(live[nr_live].p);
	}
	assert_int_equal(stats().kmalloc_bytes, start_bytes);
}

static void test_kmalloc_random(void **state)
{
	size_t pages_after_first;

	(void)state;
	kmalloc_random_run(0xc0ffee);
	pages_after_first = stats().free_pages;
	/*
	 * The same sequence again reuses the slab pages the first one carved: kfree keeps
	 * small objects for reuse, and large ones went back to the page allocator.
	 */
	kmalloc_random_run(0xc0ffee);
	assert_int_equal(stats().free_pages, pages_after_first);
}

/* In a child: kmalloc until memory runs out, free everything, check the books. */
static void do_kmalloc_exhaustion(void *arg)
{
	static void *objs[200000];
	size_t n = 0, i, bytes = stats().kmalloc_bytes;

	(void)arg;
	while (n < 200000 && (objs[n] = kmalloc(1000)) != NULL)
		n++;
	if (n == 200000 || stats().free_pages != 0)
		_exit(10);
	if (kmalloc(5000) || kmalloc(1000))
		_exit(11);
	for (i = 0; i < n; i++)
		kfree(objs[i]);
	if (stats().kmalloc_bytes != bytes)
		_exit(12);
	/* All of them again: the freed objects are enough. */
	for (i = 0; i < n; i++)
		if (!kmalloc(1000))
			_exit(13);
	_exit(0);
}

static void test_kmalloc_exhaustion(void **state)
{
	char out[256];

	(void)state;
	assert_int_equal(unit_run_child(do_kmalloc_exhaustion, NULL, out, sizeof(out)), 0);
}

static void do_kfree_twice(void *arg)
{
	void *p = kmalloc(64);

	(void)arg;
	kfree(p);
	kfree(p);
}

static void do_kfree_large_twice(void *arg)
{
	void *p = kmalloc(10000);

	(void)arg;
	kfree(p);
	kfree(p);
}

static void do_kfree_stack(void *arg)
{
	uint8_t buf[64] = { 0 };

	(void)arg;
	kfree(buf + 16);
}

static void do_kfree_interior(void *arg)
{
	uint8_t *p = kzalloc(100);

	(void)arg;
	kfree(p + 32);
}

static void do_kfree_page(void *arg)
{
	uint8_t *p = page_zalloc(1);

	(void)arg;
	kfree(p + 16);
}

static void do_kfree_bad_class(void *arg)
{
	uint8_t *p = kmalloc(64);

	(void)arg;
	p[-16 + 4] = 42; /* the header's class */
	kfree(p);
}

static void test_kfree_bad(void **state)
{
	static const char msg[] = "is not a live kmalloc object";

	(void)state;
	expect_panic(do_kfree_twice, msg);
	expect_panic(do_kfree_large_twice, msg);
	expect_panic(do_kfree_stack, msg);
	expect_panic(do_kfree_interior, msg);
	expect_panic(do_kfree_page, msg);
	expect_panic(do_kfree_bad_class, msg);
}

static int global_setup(void **state)
{
	static uint64_t fake_cpu[1024]; /* zeroed: preempt count 0, CPU id 0, any layout */

	(void)state;
	shim_set_cpu((struct cpu *)fake_cpu);
	console_register(&stderr_console);
	return 0;
}

int main(void)
{
	const struct CMUnitTest page_tests[] = {
		cmocka_unit_test_setup(test_page_init, page_setup),
		cmocka_unit_test_setup(test_page_first_fit, page_setup),
		cmocka_unit_test_setup(test_page_exhaustion, page_setup),
		cmocka_unit_test_setup(test_page_zalloc, page_setup),
		cmocka_unit_test_setup(test_page_random, page_setup),
		cmocka_unit_test_setup(test_page_bad_frees, page_setup),
	};
	const struct CMUnitTest kmalloc_tests[] = {
		cmocka_unit_test(test_kmalloc_classes),
		cmocka_unit_test(test_kmalloc_reuse_and_zero),
		cmocka_unit_test(test_kmalloc_neighbours),
		cmocka_unit_test(test_kmalloc_random),
		cmocka_unit_test(test_kmalloc_exhaustion),
		cmocka_unit_test(test_kfree_bad),
	};
	int fails;

	global_setup(NULL);
	fails = cmocka_run_group_tests_name("pages", page_tests, NULL, NULL);
	/* Page tests never kmalloc, so kmalloc's free lists are still empty here. */
	fails += cmocka_run_group_tests_name("kmalloc", kmalloc_tests, kmalloc_setup, NULL);
	free(arena);
	return fails;
}
