// SPDX-License-Identifier: MIT
/* The fixed-priority queue (see prioq.h). Pure: compiled into the guest and host unit tests. */
#include "kernel/prioq.h"

void prioq_init(struct prioq *q)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(q->bitmap); i++)
		q->bitmap[i] = 0;
	for (i = 0; i < PRIOQ_NR_PRIO; i++)
		list_init(&q->lists[i]);
	q->nr = 0;
}

void prioq_node_init(struct prioq_node *e, int prio)
{
	list_init(&e->node);
	e->prio = prio;
	e->queued = false;
}

void prioq_add(struct prioq *q, struct prioq_node *e, bool head)
{
	int p = e->prio;

	if (head)
		list_add(&e->node, &q->lists[p]);
	else
		list_add_tail(&e->node, &q->lists[p]);
	q->bitmap[p / 64] |= 1ull << (p % 64);
	e->queued = true;
	q->nr++;
}

void prioq_del(struct prioq *q, struct prioq_node *e)
{
	int p = e->prio;

	list_del(&e->node);
	if (list_empty(&q->lists[p]))
		q->bitmap[p / 64] &= ~(1ull << (p % 64));
	e->queued = false;
	q->nr--;
}

int prioq_top_prio(const struct prioq *q)
{
	int w;

	for (w = (int)ARRAY_SIZE(q->bitmap) - 1; w >= 0; w--)
		if (q->bitmap[w])
			return w * 64 + 63 - __builtin_clzll(q->bitmap[w]);
	return -1;
}

struct prioq_node *prioq_peek(const struct prioq *q)
{
	int p = prioq_top_prio(q);

	if (p < 0)
		return NULL;
	return list_first_entry(&q->lists[p], struct prioq_node, node);
}
