/* SPDX-License-Identifier: MIT */
/*
 * The timer wheel: jiffy-resolution timeouts in the non-cascading layout of Linux 4.8.
 * A pure data structure: no locks, no arch code, no allocation. The per-CPU glue serialises
 * every call on one wheel (and on the expired lists it collects) with its base lock.
 *
 * Layout. WHEEL_LVL_DEPTH (9) levels of WHEEL_LVL_SIZE (64) buckets; level n has a granularity
 * of 8^n jiffies. A timer is placed by its distance from the wheel clock, delta = expires - clk:
 * level 0 takes delta < 63, level n >= 1 takes 63 * 8^(n-1) <= delta < 63 * 8^n (WHEEL_LVL_START).
 * Within the level it goes to the bucket of the first level tick strictly after `expires`.
 * Bit s of pending[n] says bucket 64 * n + s is non-empty.
 *
 * No cascading, ever. The classic wheel re-hashed a whole outer bucket into the level below each
 * time that level wrapped around: work proportional to the number of timers, paid almost always
 * for nothing, because most wheel timers are timeouts (network, I/O, watchdogs) that are cancelled
 * or re-armed long before they expire. The seed article quotes 93% cancelled; Linux measured 99%
 * of its 1 ms-level timers cancelled. Here a timer stays in the bucket it was put in until it
 * expires or is removed: add, cancel and re-arm are O(1); expiry processes at most one bucket
 * per level per tick, and the pending bitmaps find the next non-empty bucket without stepping
 * through idle ticks.
 *
 * Never early. A timer fires when the wheel processes tick B = ((expires >> 3n) + 1) << 3n, the
 * first multiple of its level's granularity strictly after `expires`; rounding down instead
 * (truncating the low bits in an outer level) would fire early. The "+1" applies to level 0 too:
 * a one-jiffy timeout armed just before a tick still lasts a full jiffy. A timer armed already
 * due (expires < clk) goes to the bucket processed next, at tick clk.
 *
 * The trade-off accepted. Lateness (B - expires) is 1 .. 8^n jiffies at level n, for every timer
 * armed with expires >= clk - 1 (clk runs one ahead of jiffies after a collect, so that is any
 * expires >= jiffies). Since level n >= 1 only holds timeouts of at least 63 * 8^(n-1) jiffies,
 * the worst relative lateness is 8/63, ~12.7% (the "12.5%" of the Linux design); short timeouts,
 * the ones that want accuracy, live in level 0 with one-jiffy granularity. Coarse outer buckets
 * also batch expiries for free.
 *
 * Levels for HZ=1000 (one jiffy = 1 ms); delta in jiffies (test_timer_wheel.c parses this table
 * and checks every row against the code):
 *
 * | lvl | offset | granularity | delta from |   delta to | HZ=1000: granularity, range |
 * |   0 |      0 |           1 |          0 |         62 | 1 ms, 0 ms .. 62 ms         |
 * |   1 |     64 |           8 |         63 |        503 | 8 ms, 63 ms .. 503 ms       |
 * |   2 |    128 |          64 |        504 |       4031 | 64 ms, 504 ms .. 4.0 s      |
 * |   3 |    192 |         512 |       4032 |      32255 | 512 ms, 4.0 s .. 32.3 s     |
 * |   4 |    256 |        4096 |      32256 |     258047 | 4.1 s, 32.3 s .. 4.3 min    |
 * |   5 |    320 |       32768 |     258048 |    2064383 | 32.8 s, 4.3 min .. 34.4 min |
 * |   6 |    384 |      262144 |    2064384 |   16515071 | 4.4 min, 34.4 min .. 4.6 h  |
 * |   7 |    448 |     2097152 |   16515072 |  132120575 | 35.0 min, 4.6 h .. 1.5 d    |
 * |   8 |    512 |    16777216 |  132120576 | 1056964607 | 4.7 h, 1.5 d .. 12.2 d      |
 *
 * Clamp. The wheel covers delta < WHEEL_CUTOFF (63 * 8^8 = 1,056,964,608 jiffies, 12.2 days at
 * HZ=1000). A longer timeout is shortened to clk + WHEEL_TIMEOUT_MAX (cut-off minus one level-8
 * granule, 12.0 days), so its bucket is still the right one on the last level and it does not
 * fire immediately. Unlike Linux, the wheel writes the shortened value back into t->expires and
 * sets WHEEL_TIMER_CLAMPED, so "never earlier than t->expires" holds for every timer; a caller
 * that needs longer re-arms when it fires. The same 9 levels serve any HZ (at HZ=100 they reach
 * 120 days; Linux drops the ninth there).
 *
 * Time. Jiffies are uint64_t and compared as plain integers: they must stay below 2^63 (292
 * million years at HZ=1000), there is no wrap-around arithmetic. `clk` is the next tick the
 * wheel will process: every bucket due before clk has been collected. wheel_collect(w, now)
 * processes ticks clk .. now, leaving clk = now + 1; wheel_forward() moves an idle wheel's clk up
 * to the current jiffy so new timers are placed relative to "now" (finest level possible).
 */
#ifndef PLUGVM_KERNEL_TIMER_WHEEL_H
#define PLUGVM_KERNEL_TIMER_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/compiler.h"

#define WHEEL_LVL_CLK_SHIFT 3
#define WHEEL_LVL_CLK_DIV   (1u << WHEEL_LVL_CLK_SHIFT)
#define WHEEL_LVL_CLK_MASK  (WHEEL_LVL_CLK_DIV - 1)
#define WHEEL_LVL_BITS	    6
#define WHEEL_LVL_SIZE	    (1u << WHEEL_LVL_BITS)
#define WHEEL_LVL_MASK	    (WHEEL_LVL_SIZE - 1)
#define WHEEL_LVL_DEPTH	    9
#define WHEEL_SIZE	    (WHEEL_LVL_SIZE * WHEEL_LVL_DEPTH)

#define WHEEL_LVL_SHIFT(n) ((n)*WHEEL_LVL_CLK_SHIFT)
#define WHEEL_LVL_GRAN(n)  (1ull << WHEEL_LVL_SHIFT(n))
#define WHEEL_LVL_OFFS(n)  ((n)*WHEEL_LVL_SIZE)
/* First delta of level n, for 1 <= n <= WHEEL_LVL_DEPTH (level 0 starts at 0). */
#define WHEEL_LVL_START(n) ((uint64_t)(WHEEL_LVL_SIZE - 1) << WHEEL_LVL_SHIFT((n)-1))

#define WHEEL_CUTOFF	  WHEEL_LVL_START(WHEEL_LVL_DEPTH)
#define WHEEL_TIMEOUT_MAX (WHEEL_CUTOFF - WHEEL_LVL_GRAN(WHEEL_LVL_DEPTH - 1))
#define WHEEL_NO_TIMER	  UINT64_MAX

/*
 * wheel_timer.flags: bits 0-23 belong to the glue (CPU number, deferrable, pinned, ...); the
 * wheel never changes them. Bits 24-31 are the wheel's: it rewrites them (read-modify-write of
 * the whole word) in wheel_add/wheel_mod/wheel_migrate, so the glue changes its bits only under
 * the lock that serialises those calls.
 */
#define WHEEL_TIMER_GLUE_MASK  0x00ffffffu
#define WHEEL_TIMER_WHEEL_MASK 0xff000000u
#define WHEEL_TIMER_CLAMPED    (1u << 24) /* expires was shortened to the wheel's range */

/* wheel_timer.state */
enum wheel_timer_state {
	WHEEL_TIMER_IDLE = 0, /* on no list */
	WHEEL_TIMER_QUEUED, /* in bucket `idx` of a wheel */
	WHEEL_TIMER_EXPIRED, /* collected onto a struct wheel_list, not yet popped */
};

/* Hash-list linkage: `pprev` points at the previous node's `next` or at the list head. */
struct wheel_node {
	struct wheel_node *next;
	struct wheel_node **pprev;
};

/*
 * Embed in the glue's timer; wheel_timer_init() before first use. The glue may read every field
 * (under the wheel's lock) and write only its flags bits; the rest belongs to the wheel.
 */
struct wheel_timer {
	struct wheel_node node; /* bucket or expired-list linkage */
	uint64_t expires; /* jiffy it must not fire before (clamped) */
	uint16_t idx; /* bucket, 64 * level + slot; after expiry, the one it expired from */
	uint8_t state; /* enum wheel_timer_state: the pending flag */
	uint32_t flags; /* WHEEL_TIMER_GLUE_MASK bits: the glue's */
};

/* Timers collected by wheel_collect(), waiting for the glue to pop and run them. */
struct wheel_list {
	struct wheel_node *first;
};

struct wheel_level_stats {
	uint64_t added; /* timers placed on this level (add, moving re-arm, migration in) */
	uint64_t cancelled; /* removed while queued (delete, or a re-arm that moved them) */
	uint64_t expired; /* collected by wheel_collect() */
	uint64_t rearmed; /* re-armed in place (same bucket) */
	uint64_t migrated; /* moved out to another wheel by wheel_migrate() */
	uint64_t lateness_sum; /* sum of (tick collected - expires) over expired timers */
	uint64_t lateness_max;
	uint64_t lateness_count; /* samples in lateness_sum (== expired) */
};

/*
 * Per wheel, for each level: queued now = added - cancelled - expired - migrated.
 * `clamped` counts timers whose expires was shortened (add, re-arm or migration).
 */
struct wheel_stats {
	struct wheel_level_stats lvl[WHEEL_LVL_DEPTH];
	uint64_t clamped;
};

struct timer_wheel {
	uint64_t clk; /* next tick to process */
	uint64_t next_expiry; /* tick of the earliest non-empty bucket, WHEEL_NO_TIMER if none */
	bool next_expiry_recalc; /* next_expiry may be too early (a bucket emptied, or collected) */
	uint32_t nr_queued; /* timers in buckets */
	uint64_t pending[WHEEL_LVL_DEPTH]; /* bit per non-empty bucket, one word per level */
	struct wheel_node *buckets[WHEEL_SIZE];
	struct wheel_stats stats;
};

/* Granularity of level `lvl` in jiffies. */
static inline uint64_t wheel_level_gran(unsigned lvl)
{
	return WHEEL_LVL_GRAN(lvl);
}

/* First delta (expires - clk) placed on level `lvl`, 0 <= lvl <= WHEEL_LVL_DEPTH. */
static inline uint64_t wheel_level_start(unsigned lvl)
{
	return lvl ? WHEEL_LVL_START(lvl) : 0;
}

/*
 * wheel_calc_index - where a timer expiring at `expires` goes on a wheel whose clock is `clk`.
 * Pure. `expires` must already be clamped (expires - clk < WHEEL_CUTOFF). Returns the bucket
 * index (level = index / 64) and stores the tick at which that bucket is processed next in
 * *bucket_expiry: > expires, and == clk when expires < clk.
 */
unsigned wheel_calc_index(uint64_t clk, uint64_t expires, uint64_t *bucket_expiry);

/*
 * wheel_init - empty wheel with clk = now, statistics zeroed. Any context; w must not be in use.
 */
void wheel_init(struct timer_wheel *w, uint64_t now);

/* wheel_timer_init - IDLE timer, flags cleared (set the glue's bits afterwards). */
void wheel_timer_init(struct wheel_timer *t);

/* True while t is QUEUED in a wheel or EXPIRED on a collected list. Caller holds the lock. */
static inline bool wheel_timer_pending(const struct wheel_timer *t)
{
	return t->state != WHEEL_TIMER_IDLE;
}

/* Level t sits on, or expired from (until it is queued again). */
static inline unsigned wheel_timer_level(const struct wheel_timer *t)
{
	return t->idx / WHEEL_LVL_SIZE;
}

/*
 * wheel_add - queue idle timer t to fire no earlier than `expires` (clamped to
 * clk + WHEEL_TIMEOUT_MAX, written back to t->expires). t must not be pending. Forward an idle
 * wheel to the current jiffy first (wheel_forward) for the finest placement. Caller holds the
 * wheel's lock.
 */
void wheel_add(struct timer_wheel *w, struct wheel_timer *t, uint64_t expires);

/*
 * wheel_del - remove t from its bucket, or from the collected list it waits on (then its callback
 * must not run: the glue sees true). Caller holds the lock of w (and of the list). Returns true
 * if t was pending (counted "cancelled" if it was in a bucket), false if it was idle.
 */
bool wheel_del(struct timer_wheel *w, struct wheel_timer *t);

/*
 * wheel_mod - re-arm t (pending or not) to `expires` (clamped as in wheel_add). If t is queued and
 * the bucket a fresh add would pick now is the one t is in, only t->expires changes ("re-armed",
 * the networking fast path; same lateness as a fresh add); otherwise t moves (counted cancelled
 * on the old level and added on the new). A collected, not yet popped timer is taken off its list
 * and queued again. Caller holds the lock. Returns true if t was pending, false if it was idle
 * (then this is wheel_add).
 */
bool wheel_mod(struct timer_wheel *w, struct wheel_timer *t, uint64_t expires);

/*
 * wheel_next_expiry - tick at which the earliest non-empty bucket will be processed (>= clk), or
 * WHEEL_NO_TIMER if the wheel is empty. Searches the bitmaps only when the cached value is stale;
 * caches the result. Caller holds the lock. A lockless reader (the tick's "anything due?"
 * check) may READ_ONCE(w->next_expiry) instead: it is never later than the truth, exact after
 * wheel_collect() and wheel_next_expiry(), and possibly early (one spurious expiry pass) after a
 * delete emptied the earliest bucket: call this under the lock before programming an idle
 * deadline.
 */
uint64_t wheel_next_expiry(struct timer_wheel *w);

/*
 * wheel_forward - move clk forward to `now`, but never past the next expiry and never backwards.
 * Call before adding timers to a wheel that has been idle. Caller holds the lock.
 */
void wheel_forward(struct timer_wheel *w, uint64_t now);

/*
 * wheel_collect - process every tick from clk to `now` (nothing if now < clk), jumping over ticks
 * with no timers: for each tick, take at most one bucket per level (level n only on ticks that
 * are multiples of 8^n), mark its timers EXPIRED and append them to `out` (which must be
 * initialised; existing entries stay first). Order: by tick; within a tick, higher levels first;
 * within a bucket, newest first. Leaves clk = now + 1 and next_expiry exact. Caller holds the
 * lock; the timers stay pending until popped. Returns the number of timers appended.
 */
unsigned wheel_collect(struct timer_wheel *w, uint64_t now, struct wheel_list *out);

/*
 * wheel_migrate - move every timer queued in src into dst, keeping each t->expires (the bucket is
 * recomputed against dst->clk; forward dst to the current jiffy first). Timers on lists already
 * collected from src are not touched. Caller holds both locks. Returns how many moved; src is
 * then empty.
 */
unsigned wheel_migrate(struct timer_wheel *dst, struct timer_wheel *src);

/* wheel_read_stats - copy w's statistics into *out. Caller holds the lock (or accepts tearing). */
void wheel_read_stats(const struct timer_wheel *w, struct wheel_stats *out);

/* wheel_stats_accumulate - add *s into *sum, level by level (max for lateness_max). Pure. */
void wheel_stats_accumulate(struct wheel_stats *sum, const struct wheel_stats *s);

static inline void wheel_list_init(struct wheel_list *l)
{
	l->first = NULL;
}

static inline bool wheel_list_empty(const struct wheel_list *l)
{
	return !l->first;
}

/* wheel_list_first - the timer wheel_list_pop() would return, left on l; NULL if l is empty. */
static inline struct wheel_timer *wheel_list_first(const struct wheel_list *l)
{
	return l->first ? container_of(l->first, struct wheel_timer, node) : NULL;
}

/*
 * wheel_list_pop - detach the first timer of l and make it IDLE (the glue then runs it); NULL if
 * l is empty. Caller holds the lock that guards l (the wheel's).
 */
struct wheel_timer *wheel_list_pop(struct wheel_list *l);

/*
 * wheel_list_take - detach the first timer of l but leave it pending (EXPIRED), for a caller
 * that queues it again at once with wheel_add() under the same lock (moving a dead CPU's
 * collected timers): a lockless reader never sees it idle in between. NULL if l is empty.
 */
struct wheel_timer *wheel_list_take(struct wheel_list *l);

#endif
