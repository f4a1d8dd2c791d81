// SPDX-License-Identifier: MIT
/*
 * Unit tests for guest/kernel/timer_wheel.c. The reference model below places timers with its
 * own, independently written rounding (ref_bucket) and checks the wheel against it: never early,
 * lateness within the level's granularity, every timer fired exactly once unless cancelled,
 * next-expiry exact, statistics exact. Seeds are fixed; a failure names the seed and step.
 */
#include "tests/unit/unit.h"

#include <inttypes.h>
#include <stdlib.h>

#include "kernel/compiler.h"
#include "kernel/timer_wheel.h"
#include "tests/unit/splitmix.h"

#ifndef TW_SRCDIR
#define TW_SRCDIR "."
#endif

/* The numbers of the design, written out rather than derived from the macros. */
static const uint64_t ref_start[10] = { 0,	63,	 504,	   4032,      32256,
					258048, 2064384, 16515072, 132120576, 1056964608 };
#define REF_CUTOFF	1056964608ull
#define REF_TIMEOUT_MAX 1040187392ull

/* Log-uniform timeout in [0, 2^maxbits). */
static uint64_t rnd_timeout(unsigned maxbits)
{
	unsigned bits = (unsigned)rnd_below(maxbits + 1);

	return bits ? rnd_below(1ull << bits) : 0;
}

static uint64_t ref_gran(unsigned lvl)
{
	uint64_t g = 1;

	while (lvl--)
		g *= 8;
	return g;
}

/* Where the design says a timer goes: level and the tick that processes its bucket. */
static uint64_t ref_bucket(uint64_t clk, uint64_t expires, unsigned *lvl_out)
{
	uint64_t delta, g;
	unsigned lvl = 0;

	if (expires < clk) {
		*lvl_out = 0;
		return clk;
	}
	delta = expires - clk;
	while (lvl < 8 && delta >= ref_start[lvl + 1])
		lvl++;
	g = ref_gran(lvl);
	*lvl_out = lvl;
	return (expires / g + 1) * g;
}

static unsigned ref_idx(uint64_t bucket_tick, unsigned lvl)
{
	return lvl * 64 + (unsigned)((bucket_tick / ref_gran(lvl)) % 64);
}

static uint64_t ref_clamp(uint64_t clk, uint64_t expires)
{
	if (expires > clk && expires - clk >= REF_CUTOFF)
		return clk + REF_TIMEOUT_MAX;
	return expires;
}

/* Earliest non-empty bucket by scanning bucket heads slot by slot, no bitmaps, no early exit. */
static uint64_t brute_next(const struct timer_wheel *w)
{
	uint64_t best = WHEEL_NO_TIMER;
	unsigned lvl, k;

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		uint64_t g = ref_gran(lvl), lclk = (w->clk + g - 1) / g;

		for (k = 0; k < 64; k++) {
			if (w->buckets[lvl * 64 + (unsigned)((lclk + k) % 64)]) {
				if ((lclk + k) * g < best)
					best = (lclk + k) * g;
				break;
			}
		}
	}
	return best;
}

/* Structural invariants: bitmaps vs buckets, linkage, states, count, next_expiry. */
static void check_wheel(const struct timer_wheel *w)
{
	unsigned idx, n = 0;
	uint64_t truth = brute_next(w);

	for (idx = 0; idx < WHEEL_SIZE; idx++) {
		struct wheel_node *const *pp = &w->buckets[idx];
		bool bit = (w->pending[idx / 64] >> (idx % 64)) & 1;
		struct wheel_node *p;

		if (bit != (w->buckets[idx] != NULL))
			fail_msg("bucket %u: pending bit %d, list %s", idx, bit,
				 w->buckets[idx] ? "non-empty" : "empty");
		for (p = w->buckets[idx]; p; p = p->next) {
			const struct wheel_timer *t = container_of(p, struct wheel_timer, node);

			assert_ptr_equal(p->pprev, pp);
			assert_int_equal(t->state, WHEEL_TIMER_QUEUED);
			assert_int_equal(t->idx, idx);
			pp = &p->next;
			n++;
		}
	}
	assert_int_equal(n, w->nr_queued);
	if (w->next_expiry_recalc)
		assert_true(w->next_expiry <= truth);
	else
		assert_true(w->next_expiry == truth);
}

static struct timer_wheel *new_wheel(uint64_t now)
{
	struct timer_wheel *w = malloc(sizeof(*w));

	assert_non_null(w);
	wheel_init(w, now);
	return w;
}

/* ---- the design table ------------------------------------------------------------------- */

static void fmt_ms(char *buf, size_t len, uint64_t ms)
{
	double s = (double)ms / 1000;

	if (s < 1)
		snprintf(buf, len, "%" PRIu64 " ms", ms);
	else if (s < 60)
		snprintf(buf, len, "%.1f s", s);
	else if (s < 3600)
		snprintf(buf, len, "%.1f min", s / 60);
	else if (s < 86400)
		snprintf(buf, len, "%.1f h", s / 3600);
	else
		snprintf(buf, len, "%.1f d", s / 86400);
}

static void test_constants(void **state)
{
	unsigned lvl;

	(void)state;
	assert_int_equal(WHEEL_LVL_SIZE, 64);
	assert_int_equal(WHEEL_LVL_DEPTH, 9);
	assert_int_equal(WHEEL_SIZE, 576);
	assert_int_equal(WHEEL_LVL_CLK_DIV, 8);
	assert_true(WHEEL_CUTOFF == REF_CUTOFF);
	assert_true(WHEEL_TIMEOUT_MAX == REF_TIMEOUT_MAX);
	for (lvl = 0; lvl <= WHEEL_LVL_DEPTH; lvl++)
		assert_true(wheel_level_start(lvl) == ref_start[lvl]);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++)
		assert_true(wheel_level_gran(lvl) == ref_gran(lvl));
	/* 2^32 and 2^63 jiffies stay representable in every computation used. */
	assert_true(sizeof(((struct wheel_timer *)0)->expires) == 8);
}

/* Parse the table in timer_wheel.h's design comment and check every row against the code. */
static void test_header_table(void **state)
{
	FILE *f = fopen(TW_SRCDIR "/guest/kernel/timer_wheel.h", "r");
	char line[256];
	unsigned rows = 0;

	(void)state;
	if (!f)
		fail_msg("cannot open %s/guest/kernel/timer_wheel.h", TW_SRCDIR);
	while (fgets(line, sizeof(line), f)) {
		unsigned lvl, offs;
		uint64_t gran, from, to, bexp;
		char human[64], want[64], g[16], a[16], b[16];
		size_t hl;

		if (sscanf(line,
			   " * | %u | %u | %" SCNu64 " | %" SCNu64 " | %" SCNu64 " | %63[^|]|",
			   &lvl, &offs, &gran, &from, &to, human) != 6)
			continue;
		assert_int_equal(lvl, rows);
		assert_int_equal(offs, WHEEL_LVL_OFFS(lvl));
		assert_true(gran == wheel_level_gran(lvl));
		assert_true(from == wheel_level_start(lvl));
		assert_true(to == wheel_level_start(lvl + 1) - 1);
		/* The code puts both ends of the row's range on that level... */
		assert_int_equal(wheel_calc_index(1000, 1000 + from, &bexp) / 64, lvl);
		assert_int_equal(wheel_calc_index(1000, 1000 + to, &bexp) / 64, lvl);
		/* ...and the next delta on the next level. */
		if (lvl + 1 < WHEEL_LVL_DEPTH)
			assert_int_equal(wheel_calc_index(1000, 1000 + to + 1, &bexp) / 64,
					 lvl + 1);
		/* The HZ=1000 column says the same in ms. */
		fmt_ms(g, sizeof(g), gran);
		fmt_ms(a, sizeof(a), from);
		fmt_ms(b, sizeof(b), to);
		snprintf(want, sizeof(want), "%s, %s .. %s", g, a, b);
		hl = strlen(human);
		while (hl && human[hl - 1] == ' ')
			human[--hl] = '\0';
		assert_string_equal(human, want);
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, WHEEL_LVL_DEPTH);
}

/* The worked examples of the design notes (HZ=1000, clk=1000). */
static void test_worked_examples(void **state)
{
	uint64_t bexp;

	(void)state;
	assert_int_equal(wheel_calc_index(1000, 1010, &bexp), 51);
	assert_true(bexp == 1011);
	assert_int_equal(wheel_calc_index(1000, 1100, &bexp), 74);
	assert_true(bexp == 1104);
	assert_int_equal(wheel_calc_index(1000, 5000, &bexp), 143);
	assert_true(bexp == 5056);
	assert_int_equal(wheel_calc_index(1000, 5090, &bexp) / 64, 3);
	assert_true(bexp == 5120);
	/* Already due: the bucket processed next. */
	assert_int_equal(wheel_calc_index(1000, 990, &bexp), 1000 % 64);
	assert_true(bexp == 1000);
}

/* ---- never early, lateness bound ------------------------------------------------------ */

static const uint64_t bases[] = {
	0,
	1000,
	(1ull << 32) - 70,
	(1ull << 32) - 1,
	1ull << 32,
	(1ull << 32) + 12345,
	(1ull << 40) + 7,
	(1ull << 62) + 3,
	(1ull << 63) - (1ull << 33) - 5,
};

/* One timer at clk + delta on a fresh wheel: fires exactly at ref_bucket, within bounds. */
static void one_timer(uint64_t clk, int64_t delta)
{
	static struct timer_wheel w;
	struct wheel_timer t;
	struct wheel_list l;
	struct wheel_stats st;
	uint64_t expires = clk + (uint64_t)delta, want, late;
	unsigned lvl;

	wheel_init(&w, clk);
	wheel_timer_init(&t);
	wheel_list_init(&l);
	wheel_add(&w, &t, expires);
	want = ref_bucket(clk, expires, &lvl);
	assert_true(t.expires == expires);
	assert_int_equal(t.idx, ref_idx(want, lvl));
	if (wheel_next_expiry(&w) != want)
		fail_msg("clk %" PRIu64 " delta %" PRId64 ": next %" PRIu64 ", want %" PRIu64, clk,
			 delta, wheel_next_expiry(&w), want);
	assert_int_equal(wheel_collect(&w, want - 1, &l), 0);
	assert_true(wheel_list_empty(&l));
	assert_int_equal(wheel_collect(&w, want, &l), 1);
	assert_ptr_equal(wheel_list_pop(&l), &t);
	assert_true(wheel_next_expiry(&w) == WHEEL_NO_TIMER);
	assert_true(w.clk == want + 1);

	late = want - expires;
	wheel_read_stats(&w, &st);
	assert_true(st.lvl[lvl].expired == 1 && st.lvl[lvl].lateness_count == 1);
	assert_true(st.lvl[lvl].lateness_max == late && st.lvl[lvl].lateness_sum == late);
	if (delta >= -1) {
		/* Never early, and late by at most one granule of the level. */
		if (late < 1 || late > ref_gran(lvl))
			fail_msg("clk %" PRIu64 " delta %" PRId64 ": lateness %" PRIu64
				 " on level %u",
				 clk, delta, late, lvl);
		/* Relative to the timeout seen from jiffies = clk - 1: at most 8/63. */
		if (lvl > 0)
			assert_true(late * 63 <= 8 * (uint64_t)(delta + 1));
	} else {
		assert_true(late == (uint64_t)-delta);
	}
}

static void test_never_early_every_delta(void **state)
{
	unsigned b, lvl, i;
	int64_t d;

	(void)state;
	rng_state = 1;
	for (b = 0; b < ARRAY_SIZE(bases); b++) {
		uint64_t clk = bases[b];

		for (d = (clk ? -3 : 0); d < 700; d++)
			one_timer(clk, d);
		for (lvl = 1; lvl < WHEEL_LVL_DEPTH; lvl++)
			for (d = -3; d <= 3; d++)
				one_timer(clk, (int64_t)ref_start[lvl] + d);
		for (d = -3; d < 0; d++)
			one_timer(clk, (int64_t)REF_CUTOFF + d);
		for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++)
			for (i = 0; i < 200; i++)
				one_timer(
				    clk, (int64_t)(ref_start[lvl] +
						   rnd_below(ref_start[lvl + 1] - ref_start[lvl])));
		one_timer(clk, (int64_t)REF_TIMEOUT_MAX);
		one_timer(clk, (int64_t)REF_CUTOFF - 1);
	}
}

/* Tick by tick: a timer is collected exactly by the collect() of its bucket's tick. */
static void test_collect_step_by_step(void **state)
{
	struct timer_wheel *w = new_wheel((1ull << 32) - 300);
	static struct wheel_timer t[800];
	uint64_t want[800], now, clk0 = w->clk;
	unsigned i, lvl, fired = 0;
	struct wheel_list l;

	(void)state;
	wheel_list_init(&l);
	for (i = 0; i < 800; i++) {
		wheel_timer_init(&t[i]);
		wheel_add(w, &t[i], clk0 + i * 7 % 5000);
		want[i] = ref_bucket(clk0, clk0 + i * 7 % 5000, &lvl);
	}
	for (now = clk0; now < clk0 + 6000; now++) {
		struct wheel_timer *x;
		unsigned n = wheel_collect(w, now, &l);

		while ((x = wheel_list_pop(&l))) {
			if (want[x - t] != now)
				fail_msg("timer %td fired at %" PRIu64 ", want %" PRIu64, x - t,
					 now, want[x - t]);
			n--;
			fired++;
		}
		assert_int_equal(n, 0);
		assert_true(w->clk == now + 1);
		if (now % 97 == 0)
			check_wheel(w);
	}
	assert_int_equal(fired, 800);
	free(w);
}

/* ---- add / cancel / re-arm at every level -------------------------------------------- */

static void test_add_cancel_every_level(void **state)
{
	struct timer_wheel *w = new_wheel(5000);
	struct wheel_timer t[WHEEL_LVL_DEPTH][3];
	struct wheel_stats st;
	unsigned lvl, k;

	(void)state;
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		for (k = 0; k < 3; k++) {
			/* k = 0 and 1 share a bucket, k = 2 is one granule later. */
			uint64_t e = 5000 + ref_start[lvl] + (k == 2 ? ref_gran(lvl) : 0);

			wheel_timer_init(&t[lvl][k]);
			t[lvl][k].flags = 0xabcdef;
			wheel_add(w, &t[lvl][k], e);
			assert_true(wheel_timer_pending(&t[lvl][k]));
			assert_int_equal(wheel_timer_level(&t[lvl][k]), lvl);
			assert_true(w->pending[lvl] & (1ull << (t[lvl][k].idx % 64)));
		}
		assert_int_equal(t[lvl][0].idx, t[lvl][1].idx);
		assert_int_not_equal(t[lvl][0].idx, t[lvl][2].idx);
	}
	assert_int_equal(w->nr_queued, 3 * WHEEL_LVL_DEPTH);
	check_wheel(w);
	assert_true(wheel_next_expiry(w) == 5000 + 1);

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		unsigned idx = t[lvl][0].idx;

		assert_true(wheel_del(w, &t[lvl][0]));
		assert_false(wheel_timer_pending(&t[lvl][0]));
		assert_false(wheel_del(w, &t[lvl][0]));
		/* The shared bucket still holds k = 1. */
		assert_true(w->pending[lvl] & (1ull << (idx % 64)));
		assert_true(wheel_del(w, &t[lvl][1]));
		assert_false(w->pending[lvl] & (1ull << (idx % 64)));
		assert_true(wheel_del(w, &t[lvl][2]));
		assert_int_equal(w->pending[lvl], 0);
		check_wheel(w);
		for (k = 0; k < 3; k++)
			assert_int_equal(t[lvl][k].flags, 0xabcdef);
	}
	assert_true(wheel_next_expiry(w) == WHEEL_NO_TIMER);
	assert_int_equal(w->nr_queued, 0);
	wheel_read_stats(w, &st);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		assert_true(st.lvl[lvl].added == 3 && st.lvl[lvl].cancelled == 3);
		assert_true(st.lvl[lvl].expired == 0 && st.lvl[lvl].rearmed == 0);
	}
	/* A cancelled timer can be added again, and fires. */
	wheel_add(w, &t[2][0], 6000);
	check_wheel(w);
	free(w);
}

static void test_rearm_fast_path(void **state)
{
	struct timer_wheel *w = new_wheel(100000);
	struct wheel_timer t;
	struct wheel_stats st;
	struct wheel_list l;
	unsigned lvl;

	(void)state;
	wheel_list_init(&l);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		uint64_t g = ref_gran(lvl), e = w->clk + ref_start[lvl] + g;
		uint16_t idx;
		unsigned newlvl;

		e -= e % g; /* first jiffy of a granule: e + 1 .. e + g - 1 share its bucket */
		wheel_timer_init(&t);
		assert_false(wheel_mod(w, &t, e)); /* idle: an add */
		assert_int_equal(wheel_timer_level(&t), lvl);
		idx = t.idx;

		/* Same expiry: in place. */
		assert_true(wheel_mod(w, &t, e));
		assert_int_equal(t.idx, idx);
		if (g > 1) {
			/* Later in the same granule: same bucket, only expires changes. */
			assert_true(wheel_mod(w, &t, e + g - 1));
			assert_int_equal(t.idx, idx);
			assert_true(t.expires == e + g - 1);
			assert_true(wheel_next_expiry(w) == e + g);
		}
		wheel_read_stats(w, &st);
		assert_true(st.lvl[lvl].rearmed == (g > 1 ? 2u : 1u));
		assert_true(st.lvl[lvl].cancelled == 0 && st.lvl[lvl].added == 1);

		/* Next granule: the timer moves, counted cancelled + added. */
		assert_true(wheel_mod(w, &t, e + g));
		ref_bucket(w->clk, e + g, &newlvl);
		assert_int_not_equal(t.idx, idx);
		wheel_read_stats(w, &st);
		assert_true(st.lvl[lvl].cancelled == 1);
		assert_true(st.lvl[newlvl].added == (newlvl == lvl ? 2u : 1u));
		check_wheel(w);

		/* Whatever path it took, it fires after its current expiry. */
		assert_true(wheel_next_expiry(w) > t.expires);
		assert_int_equal(wheel_collect(w, wheel_next_expiry(w), &l), 1);
		assert_ptr_equal(wheel_list_pop(&l), &t);
		wheel_init(w, 100000);
	}
	free(w);
}

/*
 * A fast-path re-arm long after the add, with clk moved on: the bucket is still the one
 * the new expiry would get, so it is still never early.
 */
static void test_rearm_after_clock_moved(void **state)
{
	struct timer_wheel *w = new_wheel(0);
	struct wheel_timer t;
	struct wheel_list l;
	uint64_t e = 40000, bexp;
	unsigned rearmed = 0, moved = 0;

	(void)state;
	rng_state = 3;
	wheel_list_init(&l);
	wheel_timer_init(&t);
	wheel_add(w, &t, e);
	assert_int_equal(wheel_timer_level(&t), 4);
	while (w->clk < 39000) {
		uint16_t old = t.idx;
		uint64_t ne = e + rnd_below(20) - 10;

		assert_int_equal(wheel_collect(w, w->clk + 100, &l), 0);
		assert_true(wheel_mod(w, &t, ne));
		if (t.idx == old)
			rearmed++;
		else
			moved++;
		e = ne;
		check_wheel(w);
		assert_true(wheel_next_expiry(w) > e);
	}
	assert_true(rearmed > 0 && moved > 0);
	bexp = wheel_next_expiry(w);
	assert_true(bexp - e <= ref_gran(wheel_timer_level(&t)));
	assert_int_equal(wheel_collect(w, bexp, &l), 1);
	free(w);
}

/* ---- clamp ---------------------------------------------------------------------------------- */

static void test_clamp(void **state)
{
	struct timer_wheel *w = new_wheel(12345);
	struct wheel_timer t, u;
	struct wheel_stats st;
	struct wheel_list l;
	uint64_t next;

	(void)state;
	wheel_list_init(&l);
	wheel_timer_init(&t);
	wheel_timer_init(&u);
	t.flags = 0x123456;

	/* Just inside the wheel: not clamped, last level. */
	wheel_add(w, &u, 12345 + REF_CUTOFF - 1);
	assert_true(u.expires == 12345 + REF_CUTOFF - 1);
	assert_false(u.flags & WHEEL_TIMER_CLAMPED);
	assert_int_equal(wheel_timer_level(&u), 8);
	assert_true(wheel_del(w, &u));

	/* At the cut-off and far beyond: shortened to clk + WHEEL_TIMEOUT_MAX, flagged. */
	wheel_add(w, &t, 12345 + REF_CUTOFF);
	assert_true(t.expires == 12345 + REF_TIMEOUT_MAX);
	assert_true(t.flags & WHEEL_TIMER_CLAMPED);
	assert_int_equal(t.flags & WHEEL_TIMER_GLUE_MASK, 0x123456);
	assert_int_equal(wheel_timer_level(&t), 8);
	assert_true(wheel_mod(w, &t, UINT64_MAX / 2));
	assert_true(t.expires == 12345 + REF_TIMEOUT_MAX);
	wheel_read_stats(w, &st);
	assert_true(st.clamped == 2);

	/* It does not fire right away (the pre-2020 Linux bug), and fires after t.expires. */
	next = wheel_next_expiry(w);
	assert_true(next > t.expires && next - t.expires <= ref_gran(8));
	assert_int_equal(wheel_collect(w, 12345 + 1000000, &l), 0);
	assert_int_equal(wheel_collect(w, next - 1, &l), 0);
	assert_int_equal(wheel_collect(w, next, &l), 1);
	assert_ptr_equal(wheel_list_pop(&l), &t);

	/* Re-armed within range: the flag goes, the glue's bits stay. */
	wheel_mod(w, &t, w->clk + 10);
	assert_false(t.flags & WHEEL_TIMER_CLAMPED);
	assert_int_equal(t.flags, 0x123456);
	free(w);
}

/* ---- next expiry vs brute force --------------------------------------------------------- */

static void test_next_expiry_random(void **state)
{
	static struct wheel_timer t[64];
	struct timer_wheel *w = new_wheel(0);
	struct wheel_list l;
	unsigned round;

	(void)state;
	rng_state = 7;
	for (round = 0; round < 3000; round++) {
		uint64_t clk, want = WHEEL_NO_TIMER;
		unsigned n = 1 + (unsigned)rnd_below(40), i, lvl;

		switch (round % 4) {
		case 0:
			clk = rnd_below(100000);
			break;
		case 1:
			clk = (1ull << 32) - 5000 + rnd_below(10000);
			break;
		case 2:
			clk = rnd_below(1ull << 62);
			break;
		default:
			clk = rnd_timeout(40);
			break;
		}
		wheel_init(w, clk);
		for (i = 0; i < n; i++) {
			uint64_t e = clk + rnd_timeout(31);

			if (rnd_below(10) == 0 && clk > 3)
				e = clk - rnd_below(3);
			wheel_timer_init(&t[i]);
			wheel_add(w, &t[i], e);
		}
		/* Delete some (exercises next_expiry_recalc), move clk a little. */
		for (i = 0; i < n; i++)
			if (rnd_below(3) == 0)
				wheel_del(w, &t[i]);
		if (round % 3 == 0)
			wheel_forward(w, clk + rnd_timeout(20));
		check_wheel(w);
		/* Each queued timer's bucket as placed at `clk`, independent of the bitmaps. */
		for (i = 0; i < n; i++)
			if (t[i].state == WHEEL_TIMER_QUEUED)
				want = MIN(want, ref_bucket(clk, t[i].expires, &lvl));
		if (wheel_next_expiry(w) != want)
			fail_msg("round %u: next %" PRIu64 " want %" PRIu64, round,
				 wheel_next_expiry(w), want);
		assert_true(brute_next(w) == want);
		/* And the first collect that returns anything is the one at `want`. */
		if (want != WHEEL_NO_TIMER) {
			wheel_list_init(&l);
			assert_int_equal(wheel_collect(w, want - 1, &l), 0);
			assert_true(wheel_collect(w, want, &l) > 0);
		}
	}
	free(w);
}

/* ---- forwarding, idle gaps, wrap ---------------------------------------------------------- */

static void test_forward(void **state)
{
	struct timer_wheel *w = new_wheel(100);
	struct wheel_timer t, u;

	(void)state;
	wheel_forward(w, 50); /* never backwards */
	assert_true(w->clk == 100);
	wheel_forward(w, 1000000); /* empty: all the way */
	assert_true(w->clk == 1000000);

	wheel_timer_init(&t);
	wheel_add(w, &t, 1005000); /* level 3: bucket at 1005056 */
	assert_true(wheel_next_expiry(w) == 1005056);
	wheel_forward(w, 1003000);
	assert_true(w->clk == 1003000);
	wheel_forward(w, 2000000); /* stops at the next expiry */
	assert_true(w->clk == 1005056);
	check_wheel(w);

	/* After forwarding, a new timer is placed relative to the new clk: level 0. */
	wheel_timer_init(&u);
	wheel_add(w, &u, 1005056 + 10);
	assert_int_equal(wheel_timer_level(&u), 0);
	free(w);
}

/*
 * Long idle gaps: one collect() over a huge range returns the same timers, in bucket order,
 * with the same lateness statistics, as many small steps on an identical wheel.
 */
static void test_collect_gap_vs_steps(void **state)
{
	enum { N = 3000 };
	static struct wheel_timer a[N], b[N];
	static uint64_t want[N];
	struct timer_wheel *wa = new_wheel((1ull << 32) - 1000), *wb = new_wheel(wa->clk);
	struct wheel_stats sa, sb;
	struct wheel_list la, lb;
	struct wheel_timer *x;
	uint64_t end, prev = 0, clk0 = wa->clk;
	unsigned i, lvl, got = 0;

	(void)state;
	rng_state = 11;
	for (i = 0; i < N; i++) {
		uint64_t e = clk0 + rnd_timeout(30);

		wheel_timer_init(&a[i]);
		wheel_timer_init(&b[i]);
		wheel_add(wa, &a[i], e);
		wheel_add(wb, &b[i], e);
		/* From t->expires: clamped past the cut-off. */
		want[i] = ref_bucket(clk0, a[i].expires, &lvl);
	}
	end = clk0 + (1ull << 31);

	/* a: one call. The list is in bucket-tick order. */
	wheel_list_init(&la);
	assert_int_equal(wheel_collect(wa, end, &la), N);
	assert_true(wa->clk == end + 1);
	while ((x = wheel_list_pop(&la))) {
		if (want[x - a] < prev)
			fail_msg("got %" PRIu64 " after %" PRIu64 " (n %u, exp %" PRIu64
				 " clk0 %" PRIu64 ")",
				 want[x - a], prev, got, x->expires, clk0);
		prev = want[x - a];
		got++;
	}
	assert_int_equal(got, N);

	/* b: random steps from 1 to 2^24 jiffies, checking each timer's window. */
	wheel_list_init(&lb);
	got = 0;
	while (wb->clk <= end) {
		uint64_t from = wb->clk, to = MIN(end, from + rnd_timeout(24));

		wheel_collect(wb, to, &lb);
		while ((x = wheel_list_pop(&lb))) {
			assert_true(want[x - b] >= from && want[x - b] <= to);
			got++;
		}
	}
	assert_int_equal(got, N);

	wheel_read_stats(wa, &sa);
	wheel_read_stats(wb, &sb);
	assert_memory_equal(&sa, &sb, sizeof(sa));
	free(wa);
	free(wb);
}

/* Timers whose slots wrap past the end of a level (slot 63 -> 0), on every level. */
static void test_level_wrap(void **state)
{
	struct timer_wheel *w = new_wheel(0);
	static struct wheel_timer t[40];
	unsigned lvl, i, lv;

	(void)state;
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		uint64_t g = ref_gran(lvl), clk, want[40];
		struct wheel_list l;
		unsigned fired = 0;

		/* Level clock at slot 61 of the wrap just below 2^32 (or its level's equivalent). */
		clk = ((((1ull << 33) >> (3 * lvl)) & ~63ull) - 3) * g + (g > 1 ? 1 : 0);
		wheel_init(w, clk);
		for (i = 0; i < 40; i++) {
			uint64_t e = clk + ref_start[lvl] + i * g + (lvl ? g / 2 : 0);

			if (e - clk >= ref_start[lvl + 1])
				e = clk + ref_start[lvl + 1] - 1;
			wheel_timer_init(&t[i]);
			wheel_add(w, &t[i], e);
			want[i] = ref_bucket(clk, e, &lv);
			assert_int_equal(lv, lvl);
		}
		check_wheel(w);
		wheel_list_init(&l);
		while (wheel_next_expiry(w) != WHEEL_NO_TIMER) {
			uint64_t next = wheel_next_expiry(w);
			struct wheel_timer *x;

			assert_true(wheel_collect(w, next, &l) > 0);
			while ((x = wheel_list_pop(&l))) {
				assert_true(want[x - t] == next);
				fired++;
			}
		}
		assert_int_equal(fired, 40);
	}
	free(w);
}

/* Within one tick, higher levels come first. */
static void test_collect_order_in_tick(void **state)
{
	struct timer_wheel *w = new_wheel(0);
	struct wheel_timer t2, t1, t0;
	struct wheel_list l;

	(void)state;
	wheel_list_init(&l);
	wheel_timer_init(&t2);
	wheel_timer_init(&t1);
	wheel_timer_init(&t0);
	wheel_add(w, &t2, 4000); /* level 2, bucket at 4032 */
	assert_int_equal(wheel_collect(w, 3600, &l), 0);
	wheel_add(w, &t1, 4030); /* level 1, bucket at 4032 */
	assert_int_equal(wheel_collect(w, 4000, &l), 0);
	wheel_add(w, &t0, 4031); /* level 0, bucket at 4032 */
	assert_int_equal(wheel_timer_level(&t2), 2);
	assert_int_equal(wheel_timer_level(&t1), 1);
	assert_int_equal(wheel_timer_level(&t0), 0);
	assert_true(wheel_next_expiry(w) == 4032);
	assert_int_equal(wheel_collect(w, 4032, &l), 3);
	assert_ptr_equal(wheel_list_pop(&l), &t2);
	assert_ptr_equal(wheel_list_pop(&l), &t1);
	assert_ptr_equal(wheel_list_pop(&l), &t0);
	assert_null(wheel_list_pop(&l));
	free(w);
}

/* Collected timers stay pending until popped; delete and re-arm take them off the list. */
static void test_expired_list(void **state)
{
	struct timer_wheel *w = new_wheel(0);
	struct wheel_timer t[5];
	struct wheel_list l;
	struct wheel_stats st;
	unsigned i;

	(void)state;
	wheel_list_init(&l);
	for (i = 0; i < 5; i++) {
		wheel_timer_init(&t[i]);
		wheel_add(w, &t[i], 10 + i);
	}
	assert_int_equal(wheel_collect(w, 13, &l), 3); /* t0, t1, t2 */
	for (i = 0; i < 3; i++) {
		assert_true(wheel_timer_pending(&t[i]));
		assert_int_equal(t[i].state, WHEEL_TIMER_EXPIRED);
	}
	assert_int_equal(wheel_collect(w, 20, &l), 2); /* appended after them */
	assert_true(wheel_del(w, &t[1])); /* cancelled before it ran */
	assert_false(wheel_timer_pending(&t[1]));
	assert_false(wheel_del(w, &t[1]));
	assert_true(wheel_del(w, &t[4])); /* the last one */
	assert_true(wheel_mod(w, &t[2], w->clk + 5)); /* re-armed before it ran */
	assert_int_equal(t[2].state, WHEEL_TIMER_QUEUED);

	assert_ptr_equal(wheel_list_pop(&l), &t[0]);
	assert_ptr_equal(wheel_list_pop(&l), &t[3]);
	assert_null(wheel_list_pop(&l));
	assert_true(wheel_list_empty(&l));
	for (i = 0; i < 5; i++)
		if (i != 2)
			assert_false(wheel_timer_pending(&t[i]));
	check_wheel(w);

	/* Counted once as expired; the re-arm counts as a new add. */
	wheel_read_stats(w, &st);
	assert_true(st.lvl[0].expired == 5 && st.lvl[0].added == 6 && st.lvl[0].cancelled == 0);
	assert_int_equal(wheel_collect(w, w->clk + 10, &l), 1);
	assert_ptr_equal(wheel_list_pop(&l), &t[2]);
	free(w);
}

/* ---- migration ------------------------------------------------------------------------------ */

static void migrate_case(uint64_t src_clk, uint64_t dst_clk, unsigned seed)
{
	enum { NS = 700, ND = 150 };
	static struct wheel_timer t[NS + ND];
	static uint64_t expires[NS + ND];
	static unsigned fired[NS + ND];
	struct timer_wheel *src = new_wheel(src_clk), *dst = new_wheel(dst_clk);
	struct wheel_stats ss, ds;
	struct wheel_list l;
	struct wheel_timer *x;
	unsigned i, lvl, n;
	uint64_t migrated = 0, dst_added = 0, total_fired = 0;

	rng_state = seed;
	wheel_list_init(&l);
	for (i = 0; i < NS + ND; i++) {
		struct timer_wheel *w = i < NS ? src : dst;

		wheel_timer_init(&t[i]);
		wheel_add(w, &t[i], w->clk + rnd_timeout(28));
		expires[i] = t[i].expires;
		fired[i] = 0;
	}
	/* Some of src cancelled first, so buckets and bitmaps are not trivially full. */
	for (i = 0; i < NS; i += 7)
		wheel_del(src, &t[i]);
	n = src->nr_queued;
	assert_int_equal(wheel_migrate(dst, src), n);
	assert_int_equal(src->nr_queued, 0);
	assert_true(wheel_next_expiry(src) == WHEEL_NO_TIMER);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++)
		assert_int_equal(src->pending[lvl], 0);
	assert_int_equal(dst->nr_queued, n + ND);
	check_wheel(src);
	check_wheel(dst);

	wheel_read_stats(src, &ss);
	wheel_read_stats(dst, &ds);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		migrated += ss.lvl[lvl].migrated;
		dst_added += ds.lvl[lvl].added;
	}
	assert_true(migrated == n && dst_added == n + ND);

	/* Drain dst: every timer once, never before its (unchanged) expiry. */
	while (wheel_next_expiry(dst) != WHEEL_NO_TIMER) {
		uint64_t tick = wheel_next_expiry(dst);

		wheel_collect(dst, tick, &l);
		while ((x = wheel_list_pop(&l))) {
			i = (unsigned)(x - t);
			assert_true(x->expires == expires[i]);
			assert_true(tick > x->expires);
			if (x->expires >= dst_clk - 1)
				assert_true(tick - x->expires <= ref_gran(wheel_timer_level(x)));
			else
				assert_true(tick == dst_clk); /* was overdue on dst: next tick */
			fired[i]++;
			total_fired++;
		}
	}
	for (i = 0; i < NS + ND; i++)
		assert_int_equal(fired[i], (i < NS && i % 7 == 0) ? 0 : 1);
	assert_true(total_fired == n + ND);
	free(src);
	free(dst);
}

static void test_migrate(void **state)
{
	(void)state;
	migrate_case(100000, 100000, 1);
	migrate_case(100000, 99000, 2); /* dst behind */
	migrate_case(100000, 100000 + 3000, 3); /* dst ahead: src's early timers overdue */
	migrate_case((1ull << 32) - 10, (1ull << 32) + 10, 4);
	migrate_case(1ull << 62, (1ull << 62) + 1, 5);
}

/* ---- randomized operation sequences against a model ------------------------------------- */

enum { M_IDLE, M_QUEUED, M_EXPIRED };

struct model_timer {
	int state;
	int wheel; /* while queued or expired */
	uint64_t expires;
	uint64_t bucket; /* tick its bucket is processed at */
	unsigned lvl;
	unsigned idx;
	bool bounded; /* armed with expires >= clk - 1: lateness within the level */
	unsigned fired;
	unsigned lifetimes;
	unsigned cancelled;
};

struct model {
	struct timer_wheel *w[2];
	struct wheel_list list[2];
	struct wheel_stats want[2];
	struct wheel_timer *t;
	struct model_timer *m;
	unsigned n;
	uint64_t now; /* jiffies */
};

static void model_place(struct model *md, unsigned i, int wi, uint64_t expires)
{
	struct model_timer *m = &md->m[i];
	uint64_t clk = md->w[wi]->clk;

	m->wheel = wi;
	m->expires = ref_clamp(clk, expires);
	if (m->expires != expires)
		md->want[wi].clamped++;
	m->bucket = ref_bucket(clk, m->expires, &m->lvl);
	m->idx = ref_idx(m->bucket, m->lvl);
	m->bounded = m->expires + 1 >= clk;
	m->state = M_QUEUED;
	md->want[wi].lvl[m->lvl].added++;
}

static void model_check_timer(struct model *md, unsigned i)
{
	struct model_timer *m = &md->m[i];
	struct wheel_timer *t = &md->t[i];

	assert_int_equal(t->state, m->state == M_IDLE	  ? WHEEL_TIMER_IDLE
				   : m->state == M_QUEUED ? WHEEL_TIMER_QUEUED
							  : WHEEL_TIMER_EXPIRED);
	if (m->state != M_IDLE)
		assert_true(t->expires == m->expires);
	if (m->state == M_QUEUED)
		assert_int_equal(t->idx, m->idx);
}

static void model_collect(struct model *md, int wi, uint64_t now, unsigned seed, unsigned step)
{
	struct timer_wheel *w = md->w[wi];
	unsigned i, want = 0, got;

	if (now < w->clk) {
		assert_int_equal(wheel_collect(w, now, &md->list[wi]), 0);
		return;
	}
	for (i = 0; i < md->n; i++) {
		struct model_timer *m = &md->m[i];
		struct wheel_level_stats *s;
		uint64_t late;

		if (m->state != M_QUEUED || m->wheel != wi || m->bucket > now)
			continue;
		late = m->bucket - m->expires;
		if (m->bucket <= m->expires)
			fail_msg("seed %u step %u: timer %u early: bucket %" PRIu64
				 " expires %" PRIu64,
				 seed, step, i, m->bucket, m->expires);
		if (m->bounded && late > ref_gran(m->lvl))
			fail_msg("seed %u step %u: timer %u late by %" PRIu64 " on level %u", seed,
				 step, i, late, m->lvl);
		s = &md->want[wi].lvl[m->lvl];
		s->expired++;
		s->lateness_sum += late;
		s->lateness_count++;
		s->lateness_max = MAX(s->lateness_max, late);
		m->state = M_EXPIRED;
		want++;
	}
	got = wheel_collect(w, now, &md->list[wi]);
	if (got != want)
		fail_msg("seed %u step %u: collect(%" PRIu64 ") got %u want %u", seed, step, now,
			 got, want);
	assert_true(w->clk == now + 1);
	assert_false(w->next_expiry_recalc);
	assert_true(w->next_expiry == brute_next(w));
}

/* Run (pop) everything collected on wheel wi: each must be a timer the model expired. */
static void model_run(struct model *md, int wi, unsigned seed)
{
	struct wheel_timer *x;

	while ((x = wheel_list_pop(&md->list[wi]))) {
		unsigned i = (unsigned)(x - md->t);
		struct model_timer *m = &md->m[i];

		if (m->state != M_EXPIRED || m->wheel != wi)
			fail_msg("seed %u: timer %u popped in model state %d", seed, i, m->state);
		m->state = M_IDLE;
		m->fired++;
	}
}

static void model_check_wheels(struct model *md)
{
	unsigned i, wi, lvl;

	for (wi = 0; wi < 2; wi++) {
		struct wheel_stats st;
		unsigned queued[WHEEL_LVL_DEPTH] = { 0 };

		check_wheel(md->w[wi]);
		wheel_read_stats(md->w[wi], &st);
		assert_memory_equal(&st, &md->want[wi], sizeof(st));
		for (i = 0; i < md->n; i++)
			if (md->m[i].state == M_QUEUED && md->m[i].wheel == (int)wi)
				queued[md->m[i].lvl]++;
		for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
			const struct wheel_level_stats *s = &st.lvl[lvl];

			assert_true(s->added - s->cancelled - s->expired - s->migrated ==
				    queued[lvl]);
		}
	}
	for (i = 0; i < md->n; i++)
		model_check_timer(md, i);
}

static uint64_t model_expiry(struct model *md, int wi)
{
	uint64_t clk = md->w[wi]->clk;

	switch (rnd_below(20)) {
	case 0:
		return clk > 50 ? clk - rnd_below(50) : clk; /* overdue */
	case 1:
		return clk + REF_CUTOFF + rnd_timeout(40); /* clamped */
	case 2:
		return clk - 1; /* = jiffies */
	default:
		return clk + rnd_timeout(rnd_below(3) ? 12 : 30);
	}
}

static void model_run_seed(unsigned seed, uint64_t start, unsigned steps)
{
	enum { N = 300 };
	struct model md = { 0 };
	unsigned step, i, wi;
	uint64_t end;

	rng_state = seed;
	md.n = N;
	md.t = calloc(N, sizeof(*md.t));
	md.m = calloc(N, sizeof(*md.m));
	assert_non_null(md.t);
	assert_non_null(md.m);
	md.now = start;
	for (wi = 0; wi < 2; wi++) {
		md.w[wi] = new_wheel(start + 1);
		wheel_list_init(&md.list[wi]);
	}
	for (i = 0; i < N; i++)
		wheel_timer_init(&md.t[i]);

	for (step = 0; step < steps; step++) {
		unsigned op = (unsigned)rnd_below(100);
		int w = (int)rnd_below(2);
		struct model_timer *m;

		i = (unsigned)rnd_below(N);
		m = &md.m[i];
		if (op < 30) { /* add (or re-arm when pending, as the glue's mod_timer) */
			uint64_t e = model_expiry(&md, m->state == M_IDLE ? w : m->wheel);

			if (m->state == M_IDLE) {
				wheel_add(md.w[w], &md.t[i], e);
				model_place(&md, i, w, e);
				m->lifetimes++;
				continue;
			}
			op = 45; /* fall into re-arm */
		}
		if (op < 45) { /* delete */
			bool was = m->state != M_IDLE;

			assert_int_equal(
			    wheel_del(md.w[m->state == M_IDLE ? w : m->wheel], &md.t[i]), was);
			if (m->state == M_QUEUED)
				md.want[m->wheel].lvl[m->lvl].cancelled++;
			if (was)
				m->cancelled++;
			m->state = M_IDLE;
		} else if (op < 65) { /* re-arm */
			int wj = m->state == M_IDLE ? w : m->wheel;
			uint64_t e = model_expiry(&md, wj), clk = md.w[wj]->clk;
			bool was = m->state != M_IDLE;

			assert_int_equal(wheel_mod(md.w[wj], &md.t[i], e), was);
			if (!was)
				m->lifetimes++;
			if (m->state == M_QUEUED) {
				uint64_t ce = ref_clamp(clk, e), b;
				unsigned lvl;

				b = ref_bucket(clk, ce, &lvl);
				if (ref_idx(b, lvl) == m->idx) {
					md.want[wj].lvl[m->lvl].rearmed++;
					if (ce != e)
						md.want[wj].clamped++;
					/* Same bucket: still processed at m->bucket == b. */
					assert_true(b == m->bucket);
					m->bounded = ce + 1 >= clk;
					m->expires = ce;
					continue;
				}
				md.want[wj].lvl[m->lvl].cancelled++;
			}
			model_place(&md, i, wj, e);
		} else if (op < 90) { /* tick: jiffies advance, both wheels collect */
			uint64_t r = rnd_below(100);

			md.now += r < 70 ? 1 : r < 97 ? rnd_below(5000) : rnd_timeout(27);
			for (wi = 0; wi < 2; wi++)
				model_collect(&md, (int)wi, md.now, seed, step);
			if (rnd_below(4))
				for (wi = 0; wi < 2; wi++)
					model_run(&md, (int)wi, seed);
		} else if (op < 95) { /* idle: jiffies advance, the wheel is only forwarded */
			uint64_t clk = md.w[w]->clk, next = wheel_next_expiry(md.w[w]);

			md.now += rnd_below(3000);
			if (md.now >= clk) {
				wheel_forward(md.w[w], md.now);
				assert_true(md.w[w]->clk == MAX(clk, MIN(md.now, next)));
			}
		} else if (op < 96) { /* migrate one wheel into the other */
			struct wheel_stats *ws = &md.want[w], *wd = &md.want[!w];
			unsigned n = 0;

			for (i = 0; i < N; i++) {
				struct model_timer *x = &md.m[i];

				if (x->state != M_QUEUED || x->wheel != w)
					continue;
				ws->lvl[x->lvl].migrated++;
				n++;
				/* dst placement of the unchanged expiry (no clamp: clocks close). */
				x->wheel = !w;
				x->bucket = ref_bucket(md.w[!w]->clk, x->expires, &x->lvl);
				x->idx = ref_idx(x->bucket, x->lvl);
				x->bounded = x->expires + 1 >= md.w[!w]->clk;
				wd->lvl[x->lvl].added++;
			}
			assert_int_equal(wheel_migrate(md.w[!w], md.w[w]), n);
		} else { /* run what has been collected */
			model_run(&md, w, seed);
		}
		if (step % 64 == 0 || op >= 95)
			model_check_wheels(&md);
	}

	/* Drain: everything still queued fires exactly once. */
	end = MAX(md.w[0]->clk, md.w[1]->clk) + REF_CUTOFF + 16777216ull;
	for (wi = 0; wi < 2; wi++) {
		model_collect(&md, (int)wi, end, seed, steps);
		model_run(&md, (int)wi, seed);
		assert_true(wheel_next_expiry(md.w[wi]) == WHEEL_NO_TIMER);
	}
	model_check_wheels(&md);
	for (i = 0; i < N; i++) {
		struct model_timer *m = &md.m[i];

		assert_int_equal(m->state, M_IDLE);
		if (m->fired + m->cancelled != m->lifetimes)
			fail_msg("seed %u: timer %u: %u lifetimes, %u fired, %u cancelled", seed, i,
				 m->lifetimes, m->fired, m->cancelled);
	}
	for (wi = 0; wi < 2; wi++)
		free(md.w[wi]);
	free(md.t);
	free(md.m);
}

static void test_random_vs_model(void **state)
{
	(void)state;
	model_run_seed(1, 0, 60000);
	model_run_seed(2, 1000, 60000);
	model_run_seed(42, (1ull << 32) - 20000, 60000);
	model_run_seed(0xdeadbeef, (1ull << 32) + 5, 60000);
	model_run_seed(7, 1ull << 62, 60000);
}

/* ---- statistics ---------------------------------------------------------------------------- */

static void test_stats_accumulate(void **state)
{
	struct wheel_stats a, b;
	unsigned lvl;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		a.lvl[lvl] = (struct wheel_level_stats){ 1, 2, 3, 4, 5, 6, 7, 8 };
		b.lvl[lvl] = (struct wheel_level_stats){ 10, 20, 30, 40, 50, 60, lvl, 80 };
	}
	a.clamped = 1;
	b.clamped = 2;
	wheel_stats_accumulate(&a, &b);
	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		const struct wheel_level_stats *s = &a.lvl[lvl];

		assert_true(s->added == 11 && s->cancelled == 22 && s->expired == 33);
		assert_true(s->rearmed == 44 && s->migrated == 55 && s->lateness_sum == 66);
		assert_true(s->lateness_max == MAX(7u, lvl) && s->lateness_count == 88);
	}
	assert_true(a.clamped == 3);
}

/* A timer moved from an expired list to a wheel stays pending all the way (timers_dead_cpu). */
static void test_list_take_keeps_it_pending(void **state)
{
	struct timer_wheel a, b;
	struct wheel_timer t, u;
	struct wheel_list l;

	(void)state;
	wheel_init(&a, 100);
	wheel_init(&b, 100);
	wheel_timer_init(&t);
	wheel_timer_init(&u);
	wheel_list_init(&l);
	wheel_add(&a, &t, 105);
	wheel_add(&a, &u, 105);
	assert_int_equal(wheel_collect(&a, 200, &l), 2);
	assert_true(wheel_timer_pending(&t) && wheel_timer_pending(&u));
	assert_ptr_equal(wheel_list_take(&l), &u);
	assert_true(wheel_timer_pending(&u)); /* taken: still pending, unlike a pop */
	wheel_add(&b, &u, u.expires);
	assert_int_equal(u.state, WHEEL_TIMER_QUEUED);
	assert_ptr_equal(wheel_list_take(&l), &t);
	assert_true(wheel_timer_pending(&t));
	wheel_add(&b, &t, t.expires);
	assert_null(wheel_list_take(&l));
	assert_true(wheel_list_empty(&l));
	/* Queued on b by their expiry: b's collect returns them there. */
	assert_int_equal(wheel_collect(&b, 200, &l), 2);
	assert_true(wheel_del(&b, &t) && wheel_del(&b, &u));
	assert_false(wheel_timer_pending(&t) || wheel_timer_pending(&u));
}

UNIT_MAIN(NULL, NULL, cmocka_unit_test(test_constants),
	  cmocka_unit_test(test_list_take_keeps_it_pending), cmocka_unit_test(test_header_table),
	  cmocka_unit_test(test_worked_examples), cmocka_unit_test(test_never_early_every_delta),
	  cmocka_unit_test(test_collect_step_by_step),
	  cmocka_unit_test(test_add_cancel_every_level), cmocka_unit_test(test_rearm_fast_path),
	  cmocka_unit_test(test_rearm_after_clock_moved), cmocka_unit_test(test_clamp),
	  cmocka_unit_test(test_next_expiry_random), cmocka_unit_test(test_forward),
	  cmocka_unit_test(test_collect_gap_vs_steps), cmocka_unit_test(test_level_wrap),
	  cmocka_unit_test(test_collect_order_in_tick), cmocka_unit_test(test_expired_list),
	  cmocka_unit_test(test_migrate), cmocka_unit_test(test_random_vs_model),
	  cmocka_unit_test(test_stats_accumulate))
