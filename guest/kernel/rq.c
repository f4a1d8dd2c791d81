// SPDX-License-Identifier: MIT
/* Priority-bitmap ready queue. Pure: compiled into the guest and into host unit tests. */
#include "kernel/rq.h"

void rqq_init(struct rq_queue *q)
{
	unsigned i;

	for (i = 0; i < ARRAY_SIZE(q->bitmap); i++)
		q->bitmap[i] = 0;
	for (i = 0; i < SCHED_NR_PRIO; i++)
		list_init(&q->lists[i]);
	q->nr = 0;
}

void rqq_entity_init(struct rq_entity *e, int prio)
{
	list_init(&e->node);
	e->prio = prio;
	e->queued = false;
}

void rqq_enqueue(struct rq_queue *q, struct rq_entity *e, bool head)
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

void rqq_dequeue(struct rq_queue *q, struct rq_entity *e)
{
	int p = e->prio;

	list_del(&e->node);
	if (list_empty(&q->lists[p]))
		q->bitmap[p / 64] &= ~(1ull << (p % 64));
	e->queued = false;
	q->nr--;
}

int rqq_top_prio(const struct rq_queue *q)
{
	int w;

	for (w = (int)ARRAY_SIZE(q->bitmap) - 1; w >= 0; w--)
		if (q->bitmap[w])
			return w * 64 + 63 - __builtin_clzll(q->bitmap[w]);
	return -1;
}

struct rq_entity *rqq_peek(const struct rq_queue *q)
{
	int p = rqq_top_prio(q);

	if (p < 0)
		return NULL;
	return list_first_entry(&q->lists[p], struct rq_entity, node);
}
