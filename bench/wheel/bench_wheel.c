// SPDX-License-Identifier: MIT
/*
 * Host benchmark: the guest's timer wheel (guest/kernel/timer_wheel.c, compiled unchanged)
 * against a binary heap with per-timer positions (heap.c), in one process, on identical
 * operation sequences (same seeds, same timer ids, same expiries). Prints markdown.
 *
 *   bench_wheel [--quick]                      ns/op tables (stdout)
 *   bench_wheel --callgrind add-cancel|add-expire wheel|heap
 *                                              one region for valgrind --toggle-collect=cg_region
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heap.h"
#include "kernel/compiler.h"
#include "kernel/timer_wheel.h"
#include "tests/unit/splitmix.h"

#define T0	     ((uint64_t)1 << 24) /* start of time: keeps "before the window" positive */
#define TIMEOUT_BITS 16 /* timeouts log-uniform in [1, 2^16) jiffies: 1 ms .. 65 s */
#define CANCEL_PCT   93 /* lifetimes ending before expiry (the seed article's 93%) */

enum kind { WHEEL, HEAP };

/* Piecewise log-uniform in [2^lo, 2^hi): uniform octave, uniform within it. */
static uint64_t rnd_octaves(unsigned lo, unsigned hi)
{
	unsigned b = lo + (unsigned)rnd_below(hi - lo);

	return (1ull << b) + rnd_below(1ull << b);
}

static uint64_t rnd_timeout(void)
{
	return rnd_octaves(0, TIMEOUT_BITS);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p) {
		fprintf(stderr, "bench_wheel: out of memory (%zu x %zu)\n", n, size);
		exit(1);
	}
	return p;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_wheel: %s\n", what);
	exit(1);
}

/* Both structures, n timers each; ids index both arrays. */
struct pair {
	struct timer_wheel *w;
	struct wheel_timer *wt;
	struct heap h;
	struct heap_timer *ht;
	uint32_t n;
};

static void pair_init(struct pair *p, uint32_t n, uint64_t now)
{
	uint32_t i;

	p->n = n;
	p->w = xcalloc(1, sizeof(*p->w));
	p->wt = xcalloc(n, sizeof(*p->wt));
	p->ht = xcalloc(n, sizeof(*p->ht));
	if (!heap_init(&p->h, n))
		die("out of memory (heap)");
	wheel_init(p->w, now);
	for (i = 0; i < n; i++) {
		wheel_timer_init(&p->wt[i]);
		p->ht[i].pos = HEAP_NONE;
	}
}

static void pair_free(struct pair *p)
{
	free(p->w);
	free(p->wt);
	free(p->ht);
	heap_free(&p->h);
}

static inline void op_add(struct pair *p, enum kind k, uint32_t id, uint64_t e)
{
	if (k == WHEEL)
		wheel_add(p->w, &p->wt[id], e);
	else
		heap_add(&p->h, &p->ht[id], e);
}

static inline bool op_del(struct pair *p, enum kind k, uint32_t id)
{
	return k == WHEEL ? wheel_del(p->w, &p->wt[id]) : heap_del(&p->h, &p->ht[id]);
}

static inline bool op_mod(struct pair *p, enum kind k, uint32_t id, uint64_t e)
{
	return k == WHEEL ? wheel_mod(p->w, &p->wt[id], e) : heap_mod(&p->h, &p->ht[id], e);
}

/* Expire everything due at or before `now`; returns how many fired. */
static inline uint64_t op_expire(struct pair *p, enum kind k, uint64_t now)
{
	uint64_t n = 0;

	if (k == WHEEL) {
		struct wheel_list l;

		wheel_list_init(&l);
		wheel_collect(p->w, now, &l);
		while (wheel_list_pop(&l))
			n++;
	} else {
		struct heap_timer *m;

		while ((m = heap_min(&p->h)) && m->expires <= now) {
			heap_pop(&p->h);
			n++;
		}
	}
	return n;
}

/* Expire everything, tick by tick as the glue would (collect, then run what it returned). */
static uint64_t op_drain(struct pair *p, enum kind k)
{
	uint64_t n = 0, next;

	if (k == HEAP) {
		while (heap_pop(&p->h))
			n++;
		return n;
	}
	while ((next = wheel_next_expiry(p->w)) != WHEEL_NO_TIMER) {
		struct wheel_list l;

		wheel_list_init(&l);
		wheel_collect(p->w, next, &l);
		while (wheel_list_pop(&l))
			n++;
	}
	return n;
}

/* ---- micro-operations at a steady pending count ------------------------------------------ */

enum { M_ADD, M_CANCEL, M_REARM, M_REARM1, M_EXPIRE, M_NR };
static const char *const m_name[M_NR] = { "add", "cancel", "re-arm (random expiry)",
					  "re-arm (+1 jiffy)", "expire" };

/*
 * Pending stays between n and n + k: each round adds k idle timers, cancels k random pending
 * ones, re-arms k random ones to a random expiry and k to expiry + 1.
 */
static void micro(uint32_t n, uint64_t total_ops, double ns[M_NR][2])
{
	uint32_t k = n >= 10000 ? 1000 : n / 10, rounds = (uint32_t)(total_ops / k), r, i;
	uint32_t *pend = xcalloc(n + k, sizeof(*pend)), *pick = xcalloc(k, sizeof(*pick));
	uint64_t *exp = xcalloc(k, sizeof(*exp));
	int kind;

	for (kind = WHEEL; kind <= HEAP; kind++) {
		enum kind kd = (enum kind)kind;
		double acc[M_NR] = { 0 }, t;
		uint32_t npend = n, nidle;
		struct pair p;

		rng_state = 1000 + n;
		pair_init(&p, n + k, T0);
		for (i = 0; i < n; i++) {
			pend[i] = i;
			op_add(&p, kd, i, T0 + rnd_timeout());
		}
		for (i = 0; i < k; i++)
			pick[i] = n + i; /* the idle ones */
		nidle = k;
		for (r = 0; r < rounds; r++) {
			for (i = 0; i < nidle; i++)
				exp[i] = T0 + rnd_timeout();
			t = now_ns();
			for (i = 0; i < nidle; i++)
				op_add(&p, kd, pick[i], exp[i]);
			acc[M_ADD] += now_ns() - t;
			for (i = 0; i < nidle; i++)
				pend[npend++] = pick[i];

			for (i = 0; i < k; i++) {
				uint32_t j = (uint32_t)rnd_below(npend);

				pick[i] = pend[j];
				pend[j] = pend[--npend];
			}
			t = now_ns();
			for (i = 0; i < k; i++)
				op_del(&p, kd, pick[i]);
			acc[M_CANCEL] += now_ns() - t;
			nidle = k;

			for (i = 0; i < k; i++) {
				exp[i] = T0 + rnd_timeout();
				pend[npend + i] =
				    pend[rnd_below(npend)]; /* scratch after the live part */
			}
			t = now_ns();
			for (i = 0; i < k; i++)
				op_mod(&p, kd, pend[npend + i], exp[i]);
			acc[M_REARM] += now_ns() - t;

			for (i = 0; i < k; i++)
				pend[npend + i] = pend[rnd_below(npend)];
			t = now_ns();
			if (kd == WHEEL)
				for (i = 0; i < k; i++) {
					struct wheel_timer *x = &p.wt[pend[npend + i]];

					wheel_mod(p.w, x, x->expires + 1);
				}
			else
				for (i = 0; i < k; i++) {
					struct heap_timer *x = &p.ht[pend[npend + i]];

					heap_mod(&p.h, x, x->expires + 1);
				}
			acc[M_REARM1] += now_ns() - t;
		}
		for (i = M_ADD; i <= M_REARM1; i++)
			ns[i][kd] = acc[i] / ((double)rounds * k);
		pair_free(&p);

		/* Expiry: fill n timers, drain them all; repeat up to ~total_ops timers. */
		rounds = (uint32_t)((total_ops + n - 1) / n);
		acc[M_EXPIRE] = 0;
		for (r = 0; r < rounds; r++) {
			pair_init(&p, n, T0);
			for (i = 0; i < n; i++)
				op_add(&p, kd, i, T0 + rnd_timeout());
			t = now_ns();
			if (op_drain(&p, kd) != n)
				die("expire: lost timers");
			acc[M_EXPIRE] += now_ns() - t;
			pair_free(&p);
		}
		ns[M_EXPIRE][kd] = acc[M_EXPIRE] / ((double)rounds * n);
		rounds = (uint32_t)(total_ops / k);
	}
	free(pend);
	free(pick);
	free(exp);
}

/* ---- the mostly-cancelled workload --------------------------------------------------------- */

enum { O_ADD, O_DEL, O_MOD };

struct op {
	uint64_t arg; /* expiry for ADD and MOD */
	uint32_t id;
	uint32_t type;
};

struct trace {
	struct op *ops;
	uint64_t *when; /* tick of each op while building */
	uint64_t nops, cap;
	uint32_t *tick_start; /* ops of tick T0 + i: [tick_start[i], tick_start[i + 1]) */
	uint64_t ticks;
	uint64_t lifetimes; /* lifetime ends inside the window (cancel, re-arm, expiry) */
	uint64_t expiries;
	uint64_t *pre_exp; /* expiry of each timer pending at T0, or 0 */
};

/* Jiffies after `expires` by which the wheel has surely fired a d-jiffy timeout. */
static uint64_t settle(uint64_t d)
{
	uint64_t b;

	return wheel_level_gran(wheel_calc_index(0, d, &b) / WHEEL_LVL_SIZE) + 1;
}

enum fate { F_EXPIRE, F_CANCEL, F_REARM };

struct life {
	uint64_t d; /* timeout */
	uint64_t off; /* end, from the start, for CANCEL and REARM: 0 .. d - 1 */
	enum fate fate;
};

static struct life rnd_life(void)
{
	struct life l;
	uint64_t r = rnd_below(100);

	l.d = rnd_timeout();
	l.fate = r >= CANCEL_PCT ? F_EXPIRE : r % 2 ? F_CANCEL : F_REARM;
	l.off = rnd_below(l.d);
	return l;
}

/* Time a timer is busy with a lifetime: to its end, or to expiry plus settling. */
static uint64_t life_len(const struct life *l)
{
	return l->fate == F_EXPIRE ? l->d + settle(l->d) : l->off + 1;
}

static void emit(struct trace *t, uint64_t tick, uint32_t type, uint32_t id, uint64_t arg)
{
	if (t->nops == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1 << 20;
		t->ops = realloc(t->ops, t->cap * sizeof(*t->ops));
		t->when = realloc(t->when, t->cap * sizeof(*t->when));
		if (!t->ops || !t->when)
			die("out of memory (trace)");
	}
	t->ops[t->nops] = (struct op){ .arg = arg, .id = id, .type = type };
	t->when[t->nops++] = tick;
}

/*
 * Every timer runs a chain of lifetimes for `ticks` jiffies from T0. Each starts at a
 * length-biased random point of a lifetime, so the window opens in the steady state.
 */
static void trace_build(struct trace *t, uint32_t n, uint64_t ticks)
{
	uint64_t end = T0 + ticks, i,
		 maxlen = life_len(&(struct life){ 1ull << TIMEOUT_BITS, 0, F_EXPIRE });
	struct op *sorted;
	uint32_t id, *fill;

	memset(t, 0, sizeof(*t));
	t->ticks = ticks;
	t->pre_exp = xcalloc(n, sizeof(*t->pre_exp));
	for (id = 0; id < n; id++) {
		struct life l;
		uint64_t start, len;

		do {
			l = rnd_life();
			len = life_len(&l);
		} while (rnd_below(maxlen) >= len);
		start = T0 - rnd_below(len); /* T0 falls inside this lifetime */
		if (l.fate != F_EXPIRE || start + l.d >= T0)
			t->pre_exp[id] = start + l.d;
		for (;;) {
			uint64_t next;
			uint32_t type;

			if (l.fate == F_EXPIRE) {
				if (start + l.d >= T0 && start + l.d < end) {
					t->lifetimes++;
					t->expiries++;
				}
				next = start + l.d + settle(l.d);
			} else {
				next = start + l.off;
			}
			if (next >= end)
				break;
			if (l.fate != F_EXPIRE)
				t->lifetimes++;
			if (l.fate == F_CANCEL)
				emit(t, next, O_DEL, id, 0);
			/* The next lifetime: a re-arm of the pending timer, or a fresh add. */
			type = l.fate == F_REARM ? O_MOD : O_ADD;
			l = rnd_life();
			emit(t, next, type, id, next + l.d);
			start = next;
		}
	}
	/* Stable counting sort by tick: a timer's own ops keep their order. */
	t->tick_start = xcalloc(ticks + 1, sizeof(*t->tick_start));
	for (i = 0; i < t->nops; i++)
		t->tick_start[t->when[i] - T0 + 1]++;
	for (i = 0; i < ticks; i++)
		t->tick_start[i + 1] += t->tick_start[i];
	sorted = xcalloc(t->nops ? t->nops : 1, sizeof(*sorted));
	fill = xcalloc(ticks, sizeof(*fill));
	for (i = 0; i < t->nops; i++) {
		uint64_t k = t->when[i] - T0;

		sorted[t->tick_start[k] + fill[k]++] = t->ops[i];
	}
	free(fill);
	free(t->ops);
	free(t->when);
	t->when = NULL;
	t->ops = sorted;
}

static void trace_free(struct trace *t)
{
	free(t->ops);
	free(t->tick_start);
	free(t->pre_exp);
}

/* Wheel lateness of the timers armed inside the window (pre-filled ones were placed at T0). */
struct lateness {
	uint64_t n;
	double sum; /* jiffies */
	uint64_t n_long; /* timeouts >= 63 jiffies (levels >= 1) */
	double rel_sum_long; /* of lateness / timeout */
	double rel_max_long;
};

/* Replay the window; returns ns and the timers fired; *lat for the wheel. */
static double replay(const struct trace *t, uint32_t n, enum kind k, uint64_t *fired,
		     struct lateness *lat)
{
	uint64_t *armed_at = xcalloc(n, sizeof(*armed_at));
	uint64_t tick, f = 0;
	struct wheel_list l;
	struct pair p;
	double t0, ns;
	uint32_t id;

	pair_init(&p, n, T0);
	wheel_list_init(&l);
	for (id = 0; id < n; id++)
		if (t->pre_exp[id])
			op_add(&p, k, id, t->pre_exp[id]);

	t0 = now_ns();
	for (tick = 0; tick < t->ticks; tick++) {
		uint64_t now = T0 + tick;
		uint32_t i = t->tick_start[tick], e = t->tick_start[tick + 1];

		/* The tick's cheap "anything due?" check, then expiry and the "callbacks". */
		if (k == WHEEL) {
			if (p.w->next_expiry <= now) {
				struct wheel_timer *x;

				wheel_collect(p.w, now, &l);
				while ((x = wheel_list_pop(&l))) {
					uint64_t at = armed_at[x - p.wt];

					f++;
					if (at) {
						double late = (double)(now - x->expires);
						double rel = late / (double)(x->expires - at);

						lat->n++;
						lat->sum += late;
						if (x->expires - at >= 63) {
							lat->n_long++;
							lat->rel_sum_long += rel;
							lat->rel_max_long =
							    MAX(lat->rel_max_long, rel);
						}
					}
				}
			} else if (i != e) {
				wheel_forward(p.w, now); /* as the glue does before adding */
			}
		} else {
			struct heap_timer *m;

			while ((m = heap_min(&p.h)) && m->expires <= now) {
				heap_pop(&p.h);
				f++;
			}
		}
		for (; i < e; i++) {
			const struct op *o = &t->ops[i];

			switch (o->type) {
			case O_ADD:
				op_add(&p, k, o->id, o->arg);
				armed_at[o->id] = now;
				break;
			case O_DEL:
				if (!op_del(&p, k, o->id))
					die("replay: cancel of an idle timer");
				break;
			default:
				if (!op_mod(&p, k, o->id, o->arg))
					die("replay: re-arm of an idle timer");
				armed_at[o->id] = now;
				break;
			}
		}
	}
	ns = now_ns() - t0;
	pair_free(&p);
	free(armed_at);
	*fired = f;
	return ns;
}

struct mc_result {
	uint64_t lifetimes, expiries, fired[2];
	double ns[2]; /* per lifetime */
	struct lateness lat;
	uint64_t ticks;
};

static void mostly_cancelled(uint32_t n, uint64_t lifetimes, struct mc_result *res)
{
	double mean = 0;
	uint64_t ticks, i;
	struct trace t;
	int kind;

	rng_state = 77 + n;
	for (i = 0; i < 100000; i++) {
		struct life l = rnd_life();

		mean += (double)life_len(&l);
	}
	mean /= 100000;
	ticks = (uint64_t)((double)lifetimes * mean / n) + 1;
	trace_build(&t, n, ticks);
	res->lifetimes = t.lifetimes;
	res->ticks = ticks;
	res->expiries = t.expiries;
	for (kind = WHEEL; kind <= HEAP; kind++) {
		struct lateness lat = { 0 };
		double ns = replay(&t, n, (enum kind)kind, &res->fired[kind], &lat);

		res->ns[kind] = ns / (double)t.lifetimes;
		if (kind == WHEEL)
			res->lat = lat;
	}
	trace_free(&t);
}

/* ---- callgrind regions ------------------------------------------------------------------------ */

#define CG_PENDING 100000
#define CG_OPS	   1000

/*
 * One measured region for `valgrind --tool=callgrind --toggle-collect=cg_region`: CG_OPS
 * add+cancel or add+expire pairs on a structure holding CG_PENDING timers. add+cancel: all
 * timeouts from the benchmark's distribution. add+expire: the pending timeouts (2^15 .. 2^17
 * jiffies) lie beyond the measured ones (1 .. 2^14), so exactly the measured ones expire.
 */
__attribute__((noinline)) void cg_region(struct pair *p, enum kind k, bool expire,
					 const uint64_t *exp, const uint32_t *order);
__attribute__((noinline)) void cg_region(struct pair *p, enum kind k, bool expire,
					 const uint64_t *exp, const uint32_t *order)
{
	uint32_t i;

	for (i = 0; i < CG_OPS; i++)
		op_add(p, k, CG_PENDING + i, exp[i]);
	if (expire) {
		if (op_expire(p, k, T0 + (1ull << 15) - 1) != CG_OPS)
			die("callgrind: expire count");
	} else {
		for (i = 0; i < CG_OPS; i++)
			op_del(p, k, CG_PENDING + order[i]);
	}
}

static int callgrind_mode(const char *op, const char *structure)
{
	uint64_t exp[CG_OPS];
	uint32_t order[CG_OPS], i;
	enum kind k = strcmp(structure, "heap") ? WHEEL : HEAP;
	bool expire = !strcmp(op, "add-expire");
	struct pair p;

	if ((strcmp(op, "add-expire") && strcmp(op, "add-cancel")) ||
	    (strcmp(structure, "heap") && strcmp(structure, "wheel")))
		die("usage: --callgrind add-cancel|add-expire wheel|heap");
	rng_state = 5;
	pair_init(&p, CG_PENDING + CG_OPS, T0);
	for (i = 0; i < CG_PENDING; i++)
		op_add(&p, k, i, T0 + (expire ? rnd_octaves(15, 17) : rnd_timeout()));
	for (i = 0; i < CG_OPS; i++) {
		exp[i] = T0 + (expire ? rnd_octaves(0, 14) : rnd_timeout());
		order[i] = i;
	}
	for (i = CG_OPS - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rnd_below(i + 1), x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	cg_region(&p, k, expire, exp, order);
	pair_free(&p);
	return 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1000, 100000, 1000000 };
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");
	uint64_t ops = quick ? 200000 : 2000000, lifetimes = quick ? 200000 : 2000000;
	double ns[3][M_NR][2];
	struct mc_result mc[3];
	unsigned s, m;

	if (argc == 4 && !strcmp(argv[1], "--callgrind"))
		return callgrind_mode(argv[2], argv[3]);
	if (argc > 1 && !quick)
		die("usage: bench_wheel [--quick] | --callgrind add-cancel|add-expire wheel|heap");

	for (s = 0; s < 3; s++) {
		micro(sizes[s], ops, ns[s]);
		mostly_cancelled(sizes[s], lifetimes, &mc[s]);
	}

	printf(
	    "Timeouts are log-uniform in 1 .. 2^16 jiffies (1 ms .. 65 s at HZ=1000). Wheel and heap "
	    "see the same operations on the same timers with the same expiries (fixed seeds); "
	    "each cell is the mean over %" PRIu64 " operations, timed in batches of 1000 (100 at "
	    "1000 pending). add: an idle timer into a structure holding `pending`; cancel: a "
	    "random pending timer; re-arm (random expiry): a random pending timer to a new random "
	    "expiry; re-arm (+1 jiffy): a random pending timer to its expiry + 1, the networking "
	    "pattern the wheel's same-bucket fast path serves; expire: per timer, filling a "
	    "structure with `pending` timers and expiring them all tick by tick (the wheel: "
	    "wheel_collect() at each next expiry, then popping the list).\n\n",
	    ops);
	printf("| operation | pending | wheel ns/op | heap ns/op | heap/wheel |\n");
	printf("|---|---:|---:|---:|---:|\n");
	for (m = 0; m < M_NR; m++)
		for (s = 0; s < 3; s++)
			printf("| %s | %" PRIu32 " | %.1f | %.1f | %.2f |\n", m_name[m], sizes[s],
			       ns[s][m][WHEEL], ns[s][m][HEAP], ns[s][m][HEAP] / ns[s][m][WHEEL]);

	printf(
	    "\nMostly-cancelled workload: every timer runs a chain of lifetimes, %d%% of which end "
	    "before expiry (half cancelled, half re-armed) while the rest expire; `pending` timers "
	    "stay queued throughout (the window opens in the steady state); each jiffy the tick "
	    "checks \"anything due?\" (wheel: next_expiry, heap: the minimum), expires what is "
	    "due, then applies that jiffy's operations. ns per timer lifetime (arming .. cancel, "
	    "re-arm or expiry, averaged over the whole replay).\n\n",
	    CANCEL_PCT);
	printf("| pending | jiffies replayed | lifetimes | expired | wheel ns/lifetime | "
	       "heap ns/lifetime | heap/wheel |\n");
	printf("|---:|---:|---:|---:|---:|---:|---:|\n");
	for (s = 0; s < 3; s++)
		printf("| %" PRIu32 " | %" PRIu64 " | %" PRIu64
		       " | %.1f%% | %.1f | %.1f | %.2f |\n",
		       sizes[s], mc[s].ticks, mc[s].lifetimes,
		       100.0 * (double)mc[s].expiries / (double)mc[s].lifetimes, mc[s].ns[WHEEL],
		       mc[s].ns[HEAP], mc[s].ns[HEAP] / mc[s].ns[WHEEL]);
	{
		const struct lateness *l = &mc[0].lat;

		printf(
		    "\nThe price: the heap fires at the expiry jiffy, the wheel never before expiry + 1. "
		    "Over the %" PRIu64 " timers that were armed and expired inside the %" PRIu32
		    "-pending replay (%" PRIu64 " jiffies, far longer than any timeout), the wheel "
		    "fired on average %.1f jiffies late (level 0, timeouts < 63 jiffies: exactly 1). "
		    "For the %" PRIu64 " timeouts of 63 jiffies or more: %.1f%% of the timeout on "
		    "average, %.1f%% at most (design bound 8/63 = 12.7%%).\n",
		    l->n, sizes[0], mc[0].ticks, l->n ? l->sum / (double)l->n : 0, l->n_long,
		    l->n_long ? 100 * l->rel_sum_long / (double)l->n_long : 0,
		    100 * l->rel_max_long);
	}
	return 0;
}
