// SPDX-License-Identifier: MIT
/*
 * Red-black tree timer queue (see timerqueue.h). Invariants: the root is black, a red node has
 * no red child, every root-to-NULL path has the same number of black nodes (so the height is at
 * most 2 log2(n + 1)); q->leftmost is the minimum; nodes with equal keys are in insertion order.
 */
#include "kernel/timerqueue.h"

#include "kernel/compiler.h"

static inline bool is_red(const struct tq_node *n)
{
	return n && n->red;
}

/* Put v where u hangs (v may be NULL). */
static void replace_child(struct timerqueue *q, struct tq_node *u, struct tq_node *v)
{
	struct tq_node *p = u->parent;

	if (!p)
		q->root = v;
	else if (p->left == u)
		p->left = v;
	else
		p->right = v;
	if (v)
		v->parent = p;
}

/* x's right child takes x's place, x becomes its left child. */
static void rotate_left(struct timerqueue *q, struct tq_node *x)
{
	struct tq_node *y = x->right;

	x->right = y->left;
	if (y->left)
		y->left->parent = x;
	replace_child(q, x, y);
	y->left = x;
	x->parent = y;
}

static void rotate_right(struct timerqueue *q, struct tq_node *x)
{
	struct tq_node *y = x->left;

	x->left = y->right;
	if (y->right)
		y->right->parent = x;
	replace_child(q, x, y);
	y->right = x;
	x->parent = y;
}

static struct tq_node *subtree_min(struct tq_node *n)
{
	while (n->left)
		n = n->left;
	return n;
}

void tq_init(struct timerqueue *q)
{
	q->root = NULL;
	q->leftmost = NULL;
	q->count = 0;
}

void tq_node_init(struct tq_node *n)
{
	n->parent = n->left = n->right = NULL;
	n->expires = 0;
	n->red = 0;
	n->queued = 0;
}

/* Restore the colour rules after linking red node n as a leaf. */
static void insert_fixup(struct timerqueue *q, struct tq_node *n)
{
	struct tq_node *p, *g, *u;

	while ((p = n->parent) && p->red) {
		g = p->parent; /* exists: a red node is never the root */
		if (p == g->left) {
			u = g->right;
			if (is_red(u)) {
				p->red = u->red = 0;
				g->red = 1;
				n = g;
				continue;
			}
			if (n == p->right) {
				rotate_left(q, p);
				n = p;
				p = n->parent;
			}
			p->red = 0;
			g->red = 1;
			rotate_right(q, g);
		} else {
			u = g->left;
			if (is_red(u)) {
				p->red = u->red = 0;
				g->red = 1;
				n = g;
				continue;
			}
			if (n == p->left) {
				rotate_right(q, p);
				n = p;
				p = n->parent;
			}
			p->red = 0;
			g->red = 1;
			rotate_left(q, g);
		}
	}
	q->root->red = 0;
}

bool tq_add(struct timerqueue *q, struct tq_node *n)
{
	struct tq_node **link = &q->root, *parent = NULL;
	bool leftmost = true;

	while (*link) {
		parent = *link;
		/* Equal keys go right: FIFO among equal expiries. */
		if (n->expires < parent->expires) {
			link = &parent->left;
		} else {
			link = &parent->right;
			leftmost = false;
		}
	}
	n->parent = parent;
	n->left = n->right = NULL;
	n->red = 1;
	n->queued = 1;
	*link = n;
	insert_fixup(q, n);
	if (leftmost)
		q->leftmost = n;
	q->count++;
	return leftmost;
}

/*
 * A black node was removed from beneath xp, leaving x (possibly NULL) one black short on its
 * side: push the deficit up or fix it with rotations.
 */
static void delete_fixup(struct timerqueue *q, struct tq_node *x, struct tq_node *xp)
{
	struct tq_node *s;

	while (x != q->root && !is_red(x)) {
		if (x == xp->left) {
			s = xp->right; /* non-NULL: that side has black height >= 1 */
			if (s->red) {
				s->red = 0;
				xp->red = 1;
				rotate_left(q, xp);
				s = xp->right;
			}
			if (!is_red(s->left) && !is_red(s->right)) {
				s->red = 1;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (!is_red(s->right)) {
				s->left->red = 0;
				s->red = 1;
				rotate_right(q, s);
				s = xp->right;
			}
			s->red = xp->red;
			xp->red = 0;
			s->right->red = 0;
			rotate_left(q, xp);
		} else {
			s = xp->left;
			if (s->red) {
				s->red = 0;
				xp->red = 1;
				rotate_right(q, xp);
				s = xp->left;
			}
			if (!is_red(s->left) && !is_red(s->right)) {
				s->red = 1;
				x = xp;
				xp = x->parent;
				continue;
			}
			if (!is_red(s->left)) {
				s->right->red = 0;
				s->red = 1;
				rotate_left(q, s);
				s = xp->left;
			}
			s->red = xp->red;
			xp->red = 0;
			s->left->red = 0;
			rotate_right(q, xp);
		}
		x = q->root;
		break;
	}
	if (x)
		x->red = 0;
}

bool tq_del(struct timerqueue *q, struct tq_node *n)
{
	struct tq_node *x, *xp, *y;
	bool was_first, removed_red;

	if (!n->queued)
		return false;
	was_first = q->leftmost == n;
	if (was_first)
		q->leftmost = tq_next(n); /* relinking below never changes the order */

	if (!n->left || !n->right) {
		/* At most one child: it takes n's place. */
		x = n->left ? n->left : n->right;
		xp = n->parent;
		removed_red = n->red;
		replace_child(q, n, x);
	} else {
		/* Two children: the successor y (no left child) takes n's place and colour. */
		y = subtree_min(n->right);
		removed_red = y->red;
		x = y->right;
		if (y->parent == n) {
			xp = y;
		} else {
			xp = y->parent;
			replace_child(q, y, x);
			y->right = n->right;
			y->right->parent = y;
		}
		replace_child(q, n, y);
		y->left = n->left;
		y->left->parent = y;
		y->red = n->red;
	}
	if (!removed_red)
		delete_fixup(q, x, xp);

	n->parent = n->left = n->right = NULL;
	n->red = 0;
	n->queued = 0;
	q->count--;
	return was_first;
}

struct tq_node *tq_next(const struct tq_node *n)
{
	const struct tq_node *p;

	if (n->right)
		return subtree_min(n->right);
	while ((p = n->parent) && n == p->right)
		n = p;
	return n->parent;
}
