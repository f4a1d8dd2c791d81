/* SPDX-License-Identifier: MIT */
/* Intrusive circular doubly linked lists (the Linux shape). Callers provide the locking. */
#ifndef PLUGVM_KERNEL_LIST_H
#define PLUGVM_KERNEL_LIST_H

#include <stdbool.h>

#include "kernel/compiler.h"

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)     \
	{                        \
		&(name), &(name) \
	}

static inline void list_init(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

static inline void __list_insert(struct list_head *n, struct list_head *prev,
				 struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

/* Insert after the head (stack order). */
static inline void list_add(struct list_head *n, struct list_head *h)
{
	__list_insert(n, h, h->next);
}

/* Insert before the head (queue order). */
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	__list_insert(n, h->prev, h);
}

/* Unlink and re-initialise, so list_empty(n) tells whether n is on a list. */
static inline void list_del(struct list_head *n)
{
	n->next->prev = n->prev;
	n->prev->next = n->next;
	list_init(n);
}

#define list_entry(ptr, type, member)	  container_of(ptr, type, member)
#define list_first_entry(h, type, member) list_entry((h)->next, type, member)

#define list_for_each(pos, h) for ((pos) = (h)->next; (pos) != (h); (pos) = (pos)->next)

#define list_for_each_entry(pos, h, member)                                                    \
	for ((pos) = list_entry((h)->next, __typeof__(*(pos)), member); &(pos)->member != (h); \
	     (pos) = list_entry((pos)->member.next, __typeof__(*(pos)), member))

#define list_for_each_entry_safe(pos, tmp, h, member)                           \
	for ((pos) = list_entry((h)->next, __typeof__(*(pos)), member),         \
	    (tmp) = list_entry((pos)->member.next, __typeof__(*(pos)), member); \
	     &(pos)->member != (h);                                             \
	     (pos) = (tmp), (tmp) = list_entry((tmp)->member.next, __typeof__(*(tmp)), member))

/*
 * Lock-free multi-producer stack (Linux's llist): any CPU pushes, the owner takes the
 * whole list at once with llist_del_all() and gets it newest first.
 */
struct llist_node {
	struct llist_node *next;
};

struct llist_head {
	struct llist_node *first;
};

/* Push n; returns true if the list was empty (the consumer may need a kick). */
static inline bool llist_add(struct llist_node *n, struct llist_head *h)
{
	struct llist_node *first = __atomic_load_n(&h->first, __ATOMIC_RELAXED);

	do {
		n->next = first;
	} while (!__atomic_compare_exchange_n(&h->first, &first, n, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return first == NULL;
}

static inline struct llist_node *llist_del_all(struct llist_head *h)
{
	return __atomic_exchange_n(&h->first, NULL, __ATOMIC_ACQUIRE);
}

static inline bool llist_empty(const struct llist_head *h)
{
	return __atomic_load_n(&h->first, __ATOMIC_RELAXED) == NULL;
}

/* Reverse a detached llist (newest-first -> oldest-first). */
static inline struct llist_node *llist_reverse(struct llist_node *n)
{
	struct llist_node *r = NULL;

	while (n) {
		struct llist_node *next = n->next;

		n->next = r;
		r = n;
		n = next;
	}
	return r;
}

#endif
