/* SPDX-License-Identifier: MIT */
/*
 * Ordered queue of high-resolution timers (ns expiries): an intrusive red-black tree keyed by
 * `expires`, with the leftmost node cached. Worst-case O(log n) insert and arbitrary removal,
 * O(1) earliest, in-order walk with tq_next(). Equal expiries keep insertion order (FIFO).
 * Pure data structure: no locks, no allocation; the caller serialises calls on one queue.
 *
 * Why a red-black tree and not a pairing heap: the bounds are worst case rather than amortised
 * (an RT guest cares about the single slow operation, not the average), the tree can be walked
 * in order, and nodes never move when others are removed.
 */
#ifndef PLUGVM_KERNEL_TIMERQUEUE_H
#define PLUGVM_KERNEL_TIMERQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Embed in the timer; set `expires` before tq_add() and leave it alone while queued. */
struct tq_node {
	struct tq_node *parent;
	struct tq_node *left;
	struct tq_node *right;
	uint64_t expires; /* key, ns */
	uint8_t red; /* colour: 1 red, 0 black */
	uint8_t queued; /* linked into a queue */
};

struct timerqueue {
	struct tq_node *root;
	struct tq_node *leftmost; /* earliest node, NULL when empty */
	size_t count;
};

/* tq_init - empty queue. */
void tq_init(struct timerqueue *q);

/* tq_node_init - unqueued node with expires = 0. */
void tq_node_init(struct tq_node *n);

/*
 * tq_add - insert n (not queued; n->expires set) after any nodes with the same expiry. O(log n).
 * Caller serialises. Returns true if n became the first node (the caller reprograms the timer
 * device), false otherwise.
 */
bool tq_add(struct timerqueue *q, struct tq_node *n);

/*
 * tq_del - remove n from q. O(log n). Caller serialises. Returns true if n was the first node
 * (the earliest expiry changed, or the queue became empty); false if it was not first or not
 * queued at all (then nothing happens).
 */
bool tq_del(struct timerqueue *q, struct tq_node *n);

/* tq_first - the node with the earliest expiry (oldest among equals), NULL if empty. O(1). */
static inline struct tq_node *tq_first(const struct timerqueue *q)
{
	return q->leftmost;
}

/* tq_queued - true while n is in a queue. */
static inline bool tq_queued(const struct tq_node *n)
{
	return n->queued;
}

/* tq_count - number of queued nodes. */
static inline size_t tq_count(const struct timerqueue *q)
{
	return q->count;
}

/*
 * tq_next - the node after n in expiry order (in-order successor), NULL if n is last.
 * n must be queued. O(log n) worst case, O(1) amortised over a full walk from tq_first().
 */
struct tq_node *tq_next(const struct tq_node *n);

#endif
