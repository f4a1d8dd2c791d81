// SPDX-License-Identifier: MIT
/* Binary min-heap with positions (see heap.h). Invariant: a[i]->pos == i, parent <= child. */
#include "heap.h"

#include <stdlib.h>

bool heap_init(struct heap *h, uint32_t cap)
{
	h->a = malloc((size_t)cap * sizeof(*h->a));
	h->n = 0;
	h->cap = cap;
	return h->a != NULL;
}

void heap_free(struct heap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}

static inline void put(struct heap *h, uint32_t i, struct heap_timer *t)
{
	h->a[i] = t;
	t->pos = i;
}

/* Move t up from hole i; returns its final index. */
static uint32_t sift_up(struct heap *h, uint32_t i, struct heap_timer *t)
{
	while (i) {
		uint32_t p = (i - 1) / 2;

		if (h->a[p]->expires <= t->expires)
			break;
		put(h, i, h->a[p]);
		i = p;
	}
	put(h, i, t);
	return i;
}

static void sift_down(struct heap *h, uint32_t i, struct heap_timer *t)
{
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->a[c + 1]->expires < h->a[c]->expires)
			c++;
		if (t->expires <= h->a[c]->expires)
			break;
		put(h, i, h->a[c]);
		i = c;
	}
	put(h, i, t);
}

/* Re-seat t, whose key changed or which was moved into hole i. */
static void fix(struct heap *h, uint32_t i, struct heap_timer *t)
{
	if (i && h->a[(i - 1) / 2]->expires > t->expires)
		sift_up(h, i, t);
	else
		sift_down(h, i, t);
}

void heap_add(struct heap *h, struct heap_timer *t, uint64_t expires)
{
	t->expires = expires;
	sift_up(h, h->n++, t);
}

bool heap_del(struct heap *h, struct heap_timer *t)
{
	uint32_t i = t->pos;
	struct heap_timer *last;

	if (i == HEAP_NONE)
		return false;
	t->pos = HEAP_NONE;
	last = h->a[--h->n];
	if (last != t)
		fix(h, i, last);
	return true;
}

bool heap_mod(struct heap *h, struct heap_timer *t, uint64_t expires)
{
	if (t->pos == HEAP_NONE) {
		heap_add(h, t, expires);
		return false;
	}
	t->expires = expires;
	fix(h, t->pos, t);
	return true;
}

struct heap_timer *heap_pop(struct heap *h)
{
	struct heap_timer *t = heap_min(h);

	if (t)
		heap_del(h, t);
	return t;
}
