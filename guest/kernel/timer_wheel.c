// SPDX-License-Identifier: MIT
/*
 * The non-cascading timer wheel (design and granularity table: timer_wheel.h).
 * Invariants: bit s of pending[n] is set iff buckets[64n + s] is non-empty; every queued timer's
 * bucket is processed at a tick >= clk; next_expiry is exact unless next_expiry_recalc, and then
 * never later than the truth.
 */
#include "kernel/timer_wheel.h"

#include "kernel/compiler.h"
#include "kernel/string.h"

/* ---- hash-list primitives --------------------------------------------------------------- */

static inline void node_add_head(struct wheel_node *n, struct wheel_node **head)
{
	n->next = *head;
	if (n->next)
		n->next->pprev = &n->next;
	n->pprev = head;
	*head = n;
}

static inline void node_unlink(struct wheel_node *n)
{
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
}

static inline struct wheel_timer *node_timer(struct wheel_node *n)
{
	return container_of(n, struct wheel_timer, node);
}

/* ---- index computation ------------------------------------------------------------------- */

/* Level for a (clamped) delta = expires - clk >= 0: short timeouts, the common case, exit first. */
static inline unsigned calc_level(uint64_t delta)
{
	unsigned lvl = 0;

	while (lvl < WHEEL_LVL_DEPTH - 1 && delta >= WHEEL_LVL_START(lvl + 1))
		lvl++;
	return lvl;
}

/* Bucket on level lvl for expires, rounded up one granule: never early. */
static inline unsigned calc_index(uint64_t expires, unsigned lvl, uint64_t *bucket_expiry)
{
	uint64_t e = (expires >> WHEEL_LVL_SHIFT(lvl)) + 1;

	*bucket_expiry = e << WHEEL_LVL_SHIFT(lvl);
	return WHEEL_LVL_OFFS(lvl) + (unsigned)(e & WHEEL_LVL_MASK);
}

unsigned wheel_calc_index(uint64_t clk, uint64_t expires, uint64_t *bucket_expiry)
{
	/* Already due: the bucket processed next, so it fires on the coming tick. */
	if (expires < clk) {
		*bucket_expiry = clk;
		return (unsigned)(clk & WHEEL_LVL_MASK);
	}
	return calc_index(expires, calc_level(expires - clk), bucket_expiry);
}

/* Clock of level lvl: the first level tick at or after clk, i.e. ceil(clk / 8^lvl). */
static inline uint64_t level_clk(uint64_t clk, unsigned lvl)
{
	return (clk + WHEEL_LVL_GRAN(lvl) - 1) >> WHEEL_LVL_SHIFT(lvl);
}

/* Tick at which bucket idx is processed next, seen from clk. */
static uint64_t bucket_tick(uint64_t clk, unsigned idx)
{
	unsigned lvl = idx / WHEEL_LVL_SIZE;
	uint64_t lclk = level_clk(clk, lvl);
	uint64_t dist = (idx - lclk) & WHEEL_LVL_MASK;

	return (lclk + dist) << WHEEL_LVL_SHIFT(lvl);
}

/* Clamp a far expiry to the wheel's capacity; true if it was clamped. */
static inline bool clamp_expires(const struct timer_wheel *w, uint64_t *expires)
{
	if (*expires > w->clk && *expires - w->clk >= WHEEL_CUTOFF) {
		*expires = w->clk + WHEEL_TIMEOUT_MAX;
		return true;
	}
	return false;
}

/* ---- enqueue / dequeue ---------------------------------------------------------------------- */

static void enqueue(struct timer_wheel *w, struct wheel_timer *t, unsigned idx, uint64_t bexp)
{
	unsigned lvl = idx / WHEEL_LVL_SIZE;

	node_add_head(&t->node, &w->buckets[idx]);
	w->pending[lvl] |= 1ull << (idx & WHEEL_LVL_MASK);
	t->idx = (uint16_t)idx;
	t->state = WHEEL_TIMER_QUEUED;
	w->nr_queued++;
	w->stats.lvl[lvl].added++;
	/*
	 * A stale next_expiry is never later than the truth, so a bucket earlier than it is the
	 * new minimum and makes the cached value exact again.
	 */
	if (bexp < w->next_expiry) {
		w->next_expiry = bexp;
		w->next_expiry_recalc = false;
	}
}

/* Place t by its (already clamped) t->expires relative to w->clk. */
static void place(struct timer_wheel *w, struct wheel_timer *t)
{
	uint64_t bexp;
	unsigned idx = wheel_calc_index(w->clk, t->expires, &bexp);

	enqueue(w, t, idx, bexp);
}

static void set_expires(struct timer_wheel *w, struct wheel_timer *t, uint64_t expires)
{
	t->flags &= ~WHEEL_TIMER_CLAMPED;
	if (clamp_expires(w, &expires)) {
		t->flags |= WHEEL_TIMER_CLAMPED;
		w->stats.clamped++;
	}
	t->expires = expires;
}

/* Take a queued timer out of its bucket; keeps the bitmap and next_expiry honest. */
static void dequeue(struct timer_wheel *w, struct wheel_timer *t)
{
	unsigned idx = t->idx;

	node_unlink(&t->node);
	t->state = WHEEL_TIMER_IDLE;
	w->nr_queued--;
	if (!w->buckets[idx]) {
		w->pending[idx / WHEEL_LVL_SIZE] &= ~(1ull << (idx & WHEEL_LVL_MASK));
		if (bucket_tick(w->clk, idx) == w->next_expiry)
			w->next_expiry_recalc = true;
	}
}

/* ---- API ---------------------------------------------------------------------------------- */

void wheel_init(struct timer_wheel *w, uint64_t now)
{
	memset(w, 0, sizeof(*w));
	w->clk = now;
	w->next_expiry = WHEEL_NO_TIMER;
}

void wheel_timer_init(struct wheel_timer *t)
{
	memset(t, 0, sizeof(*t));
}

void wheel_add(struct timer_wheel *w, struct wheel_timer *t, uint64_t expires)
{
	set_expires(w, t, expires);
	place(w, t);
}

bool wheel_del(struct timer_wheel *w, struct wheel_timer *t)
{
	switch (t->state) {
	case WHEEL_TIMER_QUEUED:
		w->stats.lvl[wheel_timer_level(t)].cancelled++;
		dequeue(w, t);
		return true;
	case WHEEL_TIMER_EXPIRED:
		/* Already counted as expired; the glue must not run it now. */
		node_unlink(&t->node);
		t->state = WHEEL_TIMER_IDLE;
		return true;
	default:
		return false;
	}
}

bool wheel_mod(struct timer_wheel *w, struct wheel_timer *t, uint64_t expires)
{
	bool was_pending = wheel_timer_pending(t);
	bool clamped = clamp_expires(w, &expires);
	uint64_t bexp;
	unsigned idx;

	if (t->state == WHEEL_TIMER_QUEUED) {
		idx = wheel_calc_index(w->clk, expires, &bexp);
		if (idx == t->idx) {
			/*
			 * Same bucket: it is processed at bexp, exactly as if freshly added, so
			 * staying put is never early and no later than an add. (No shortcut for
			 * an unchanged expiry: a bucket chosen against an older clk may be
			 * coarser than a fresh add would pick.)
			 */
			t->expires = expires;
			t->flags =
			    (t->flags & ~WHEEL_TIMER_CLAMPED) | (clamped ? WHEEL_TIMER_CLAMPED : 0);
			w->stats.clamped += clamped;
			w->stats.lvl[wheel_timer_level(t)].rearmed++;
			return true;
		}
		w->stats.lvl[wheel_timer_level(t)].cancelled++;
		dequeue(w, t);
	} else if (t->state == WHEEL_TIMER_EXPIRED) {
		node_unlink(&t->node);
		t->state = WHEEL_TIMER_IDLE;
	}
	t->flags = (t->flags & ~WHEEL_TIMER_CLAMPED) | (clamped ? WHEEL_TIMER_CLAMPED : 0);
	w->stats.clamped += clamped;
	t->expires = expires;
	place(w, t);
	return was_pending;
}

/* Next set bit of a level's bitmap at or after slot pos, with wrap-around: distance or -1. */
static inline int next_pending_dist(uint64_t map, unsigned pos)
{
	uint64_t rot;

	if (!map)
		return -1;
	rot = pos ? (map >> pos) | (map << (WHEEL_LVL_SIZE - pos)) : map;
	return __builtin_ctzll(rot);
}

static uint64_t recalc_next_expiry(const struct timer_wheel *w)
{
	uint64_t next = WHEEL_NO_TIMER;
	uint64_t lclk = w->clk; /* level clock: ceil(clk / 8^lvl) */
	unsigned lvl;

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		int dist = next_pending_dist(w->pending[lvl], (unsigned)(lclk & WHEEL_LVL_MASK));
		uint64_t carry = (lclk & WHEEL_LVL_CLK_MASK) != 0;

		if (dist >= 0) {
			uint64_t tick = (lclk + (uint64_t)dist) << WHEEL_LVL_SHIFT(lvl);

			if (tick < next)
				next = tick;
		}
		/*
		 * The next level's earliest bucket is processed at its own clock, the first
		 * multiple of 8^(lvl+1) at or after clk: a hit no later than that cannot be
		 * beaten by any higher level.
		 */
		lclk = (lclk >> WHEEL_LVL_CLK_SHIFT) + carry;
		if (lvl + 1 < WHEEL_LVL_DEPTH && next <= (lclk << WHEEL_LVL_SHIFT(lvl + 1)))
			break;
	}
	return next;
}

uint64_t wheel_next_expiry(struct timer_wheel *w)
{
	if (w->next_expiry_recalc) {
		w->next_expiry = w->nr_queued ? recalc_next_expiry(w) : WHEEL_NO_TIMER;
		w->next_expiry_recalc = false;
	}
	return w->next_expiry;
}

void wheel_forward(struct timer_wheel *w, uint64_t now)
{
	uint64_t target = MIN(now, wheel_next_expiry(w));

	if (target > w->clk)
		w->clk = target;
}

/*
 * Collect the buckets due at tick w->clk onto *tailp, highest level first. Level n is due on
 * ticks whose low 3n bits are all zero.
 */
static unsigned collect_tick(struct timer_wheel *w, struct wheel_node ***tailp)
{
	uint64_t tick = w->clk;
	unsigned nlvl = 1, n = 0;
	int lvl;

	while (nlvl < WHEEL_LVL_DEPTH &&
	       !((tick >> WHEEL_LVL_SHIFT(nlvl - 1)) & WHEEL_LVL_CLK_MASK))
		nlvl++;

	for (lvl = (int)nlvl - 1; lvl >= 0; lvl--) {
		unsigned slot = (unsigned)((tick >> WHEEL_LVL_SHIFT(lvl)) & WHEEL_LVL_MASK);
		unsigned idx = WHEEL_LVL_OFFS(lvl) + slot;
		struct wheel_level_stats *st = &w->stats.lvl[lvl];
		struct wheel_node *first = w->buckets[idx], *p, *last = NULL;

		if (!first)
			continue;
		for (p = first; p; p = p->next) {
			struct wheel_timer *t = node_timer(p);
			uint64_t late = tick - t->expires;

			t->state = WHEEL_TIMER_EXPIRED;
			st->lateness_sum += late;
			if (late > st->lateness_max)
				st->lateness_max = late;
			st->lateness_count++;
			st->expired++;
			last = p;
			n++;
		}
		/* Splice the whole bucket onto the tail of the out list. */
		**tailp = first;
		first->pprev = *tailp;
		*tailp = &last->next;
		w->buckets[idx] = NULL;
		w->pending[lvl] &= ~(1ull << slot);
	}
	w->nr_queued -= n;
	return n;
}

unsigned wheel_collect(struct timer_wheel *w, uint64_t now, struct wheel_list *out)
{
	struct wheel_node **tail = &out->first;
	unsigned n = 0;

	while (*tail)
		tail = &(*tail)->next;

	while (w->clk <= now) {
		uint64_t next = wheel_next_expiry(w);

		if (next > now) {
			w->clk = now + 1;
			break;
		}
		w->clk = next;
		n += collect_tick(w, &tail);
		w->clk++;
		w->next_expiry_recalc = true;
	}
	/* Leave next_expiry exact for the tick's lockless "anything due?" check. */
	wheel_next_expiry(w);
	return n;
}

unsigned wheel_migrate(struct timer_wheel *dst, struct timer_wheel *src)
{
	unsigned lvl, n = 0;

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		uint64_t map = src->pending[lvl];

		while (map) {
			unsigned idx = WHEEL_LVL_OFFS(lvl) + (unsigned)__builtin_ctzll(map);
			struct wheel_node *p;

			map &= map - 1;
			while ((p = src->buckets[idx])) {
				struct wheel_timer *t = node_timer(p);

				node_unlink(p);
				src->stats.lvl[lvl].migrated++;
				/* Re-clamp only if dst lags src by hours; never lengthens expires. */
				if (clamp_expires(dst, &t->expires)) {
					t->flags |= WHEEL_TIMER_CLAMPED;
					dst->stats.clamped++;
				}
				place(dst, t);
				n++;
			}
		}
		src->pending[lvl] = 0;
	}
	src->nr_queued = 0;
	src->next_expiry = WHEEL_NO_TIMER;
	src->next_expiry_recalc = false;
	return n;
}

void wheel_read_stats(const struct timer_wheel *w, struct wheel_stats *out)
{
	*out = w->stats;
}

void wheel_stats_accumulate(struct wheel_stats *sum, const struct wheel_stats *s)
{
	unsigned lvl;

	for (lvl = 0; lvl < WHEEL_LVL_DEPTH; lvl++) {
		struct wheel_level_stats *d = &sum->lvl[lvl];
		const struct wheel_level_stats *l = &s->lvl[lvl];

		d->added += l->added;
		d->cancelled += l->cancelled;
		d->expired += l->expired;
		d->rearmed += l->rearmed;
		d->migrated += l->migrated;
		d->lateness_sum += l->lateness_sum;
		d->lateness_max = MAX(d->lateness_max, l->lateness_max);
		d->lateness_count += l->lateness_count;
	}
	sum->clamped += s->clamped;
}

struct wheel_timer *wheel_list_take(struct wheel_list *l)
{
	struct wheel_node *n = l->first;

	if (!n)
		return NULL;
	node_unlink(n); /* state stays EXPIRED: pending until the caller queues it */
	return node_timer(n);
}

struct wheel_timer *wheel_list_pop(struct wheel_list *l)
{
	struct wheel_timer *t = wheel_list_take(l);

	if (t)
		t->state = WHEEL_TIMER_IDLE;
	return t;
}
