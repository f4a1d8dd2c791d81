/* SPDX-License-Identifier: MIT */
/*
 * The benchmark's peer of the wheel: a binary min-heap of timers with each timer's position
 * stored in it, so cancel and re-arm are O(log n) from the timer alone. Host only.
 */
#ifndef PLUGVM_BENCH_HEAP_H
#define PLUGVM_BENCH_HEAP_H

#include <stdbool.h>
#include <stdint.h>

#define HEAP_NONE UINT32_MAX

struct heap_timer {
	uint64_t expires;
	uint32_t pos; /* index in heap.a, HEAP_NONE when not queued */
};

struct heap {
	struct heap_timer **a;
	uint32_t n;
	uint32_t cap;
};

/* heap_init - empty heap for up to cap timers (allocates); false if out of memory. */
bool heap_init(struct heap *h, uint32_t cap);
void heap_free(struct heap *h);

/* heap_add - queue t (not queued, room left) at `expires`. O(log n). */
void heap_add(struct heap *h, struct heap_timer *t, uint64_t expires);

/* heap_del - remove t; returns false if it was not queued. O(log n). */
bool heap_del(struct heap *h, struct heap_timer *t);

/* heap_mod - re-arm t (queued or not) to `expires`; returns whether it was queued. O(log n). */
bool heap_mod(struct heap *h, struct heap_timer *t, uint64_t expires);

/* heap_min - earliest timer, NULL if empty. O(1). */
static inline struct heap_timer *heap_min(const struct heap *h)
{
	return h->n ? h->a[0] : (struct heap_timer *)0;
}

/* heap_pop - remove and return the earliest timer, NULL if empty. O(log n). */
struct heap_timer *heap_pop(struct heap *h);

#endif
