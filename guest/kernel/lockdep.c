// SPDX-License-Identifier: MIT
/*
 * The lock validator: per-task held-lock stacks, and one class graph shared by all CPUs
 * (an adjacency bitmap, plus the first-seen sites of each dependency). Calls no lock,
 * scheduler or arch code and allocates nothing, so any lock implementation can call it.
 * What it finds is printed (once per kind, site and class) by lockdep_report.c.
 */
#include "kernel/lockdep.h"

void (*lockdep_report_hook)(const struct lockdep_report *r);

#ifdef CONFIG_LOCKDEP

#include "kernel/lockdep_internal.h"
#include "kernel/printk.h"
#include "kernel/string.h"

#define CLASS_WORDS  (LOCKDEP_MAX_CLASSES / 64)
#define HASH_BUCKETS 64

_Static_assert(LOCKDEP_MAX_CLASSES % 64 == 0 && LOCKDEP_MAX_CLASSES < 0xffff, "class bitmap");
_Static_assert(LOCKDEP_MAX_DEPS < 0xffff, "dependency links are 16-bit");

struct lockdep_class {
	char name[LOCKDEP_NAME_LEN];
	uint16_t hash_next; /* next class of the hash bucket, index + 1; 0 ends */
	uint16_t deps; /* first dependency from this class, index + 1; graph lock */
};

/* from -> to: `to` was first taken at to_ip while `from`, taken at from_ip, was held. */
struct lockdep_dep {
	unsigned long from_ip;
	unsigned long to_ip;
	uint16_t to;
	uint16_t next; /* next dependency from the same class, index + 1; 0 ends */
};

static int lockdep_on = 1;
static uint32_t class_gen = 1; /* bumped by lockdep_reset(); the top half of class keys */
struct lockdep_stats lockdep_counters;

/*
 * The graph lock: 0 when free, else the owning CPU + 1. A CPU never waits for itself: a
 * call from an interrupt (or, wrongly, a preempting thread) that finds its own CPU inside
 * the graph gives up the update instead of deadlocking.
 */
static unsigned graph_owner;

/*
 * Written under the graph lock. Classes below nr_classes never change until a reset, so
 * class_find() walks the hash chains without it; the fast path reads adj[] bits without it.
 */
static struct lockdep_class classes[LOCKDEP_MAX_CLASSES];
static uint32_t nr_classes;
static uint16_t hash_heads[HASH_BUCKETS]; /* class index + 1; 0: empty */
static uint64_t adj[LOCKDEP_MAX_CLASSES][CLASS_WORDS]; /* bit b of row a: a -> b recorded */
static struct lockdep_dep deps[LOCKDEP_MAX_DEPS];
static uint32_t nr_deps;
static uint16_t bfs_queue[LOCKDEP_MAX_CLASSES]; /* graph_path() scratch */
static uint16_t bfs_parent[LOCKDEP_MAX_CLASSES];
static uint64_t bfs_seen[CLASS_WORDS];

/* ---- helpers ----------------------------------------------------------------------------- */

static inline void lockdep_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	barrier();
#endif
}

static bool graph_lock(void)
{
	unsigned me = lockdep_cpu_id() + 1, v;

	for (;;) {
		v = 0;
		if (__atomic_compare_exchange_n(&graph_owner, &v, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		while (v) {
			if (v == me) {
				stat_inc(graph_busy);
				return false;
			}
			lockdep_relax();
			v = __atomic_load_n(&graph_owner, __ATOMIC_RELAXED);
		}
	}
}

static void graph_unlock(void)
{
	__atomic_store_n(&graph_owner, 0, __ATOMIC_RELEASE);
}

/* Turn the validator off; true for the one caller that did it (it prints the warning). */
static bool turn_off(void)
{
	return __atomic_exchange_n(&lockdep_on, 0, __ATOMIC_RELAXED) != 0;
}

/* The current task record, or NULL when calls are to be ignored. */
static inline struct lockdep_task *task_get(void)
{
	struct lockdep_task *t;

	if (unlikely(!__atomic_load_n(&lockdep_on, __ATOMIC_RELAXED)))
		return NULL;
	t = lockdep_current();
	if (unlikely(!t || t->recursion))
		return NULL;
	return t;
}

static inline bool key_live(uint32_t key)
{
	return key && key >> 16 == __atomic_load_n(&class_gen, __ATOMIC_RELAXED);
}

static inline unsigned key_index(uint32_t key)
{
	return (key & 0xffff) - 1;
}

/* Index of the topmost entry of t's stack for `map`, or -1. */
static int held_index(const struct lockdep_task *t, const struct lockdep_map *map)
{
	int i;

	for (i = (int)t->depth - 1; i >= 0; i--)
		if (t->held[i].map == map)
			return i;
	return -1;
}

/* ---- classes ----------------------------------------------------------------------------- */

static unsigned name_hash(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a over the compared bytes */
	size_t i;

	for (i = 0; i < LOCKDEP_NAME_LEN - 1 && name[i]; i++)
		h = (h ^ (uint8_t)name[i]) * 16777619u;
	return h % HASH_BUCKETS;
}

/* Index of the class named `name`, or -1. No lock needed (see above). */
static int class_find(const char *name, unsigned bucket)
{
	unsigned i = __atomic_load_n(&hash_heads[bucket], __ATOMIC_ACQUIRE);

	while (i) {
		const struct lockdep_class *c = &classes[i - 1];

		if (!strncmp(c->name, name, LOCKDEP_NAME_LEN - 1))
			return (int)i - 1;
		i = c->hash_next;
	}
	return -1;
}

/* A new class; -1 when the table is full. Graph lock held. */
static int class_add(const char *name, unsigned bucket)
{
	uint32_t n = nr_classes;
	struct lockdep_class *c;
	size_t len;

	if (n >= LOCKDEP_MAX_CLASSES)
		return -1;
	c = &classes[n];
	len = strnlen(name, LOCKDEP_NAME_LEN - 1);
	memcpy(c->name, name, len);
	c->name[len] = '\0';
	c->hash_next = hash_heads[bucket];
	c->deps = 0;
	/* Publish the filled entry to lock-free readers. */
	__atomic_store_n(&nr_classes, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&hash_heads[bucket], (uint16_t)(n + 1), __ATOMIC_RELEASE);
	return (int)n;
}

static uint32_t class_key(int idx)
{
	return __atomic_load_n(&class_gen, __ATOMIC_RELAXED) << 16 | (uint32_t)(idx + 1);
}

/* First acquisition of `map` (since a reset): find or register its class. 0 if none. */
static __attribute__((noinline)) uint32_t map_class_slow(struct lockdep_task *t,
							 struct lockdep_map *map, unsigned long ip)
{
	unsigned bucket;
	uint32_t key;
	int idx;

	if (!map->name)
		return 0;
	bucket = name_hash(map->name);
	idx = class_find(map->name, bucket);
	if (idx < 0) {
		if (!graph_lock())
			return 0; /* tracked without a class this time */
		idx = class_find(map->name, bucket);
		if (idx < 0)
			idx = class_add(map->name, bucket);
		graph_unlock();
	}
	if (idx < 0) {
		if (turn_off()) {
			struct lockdep_report r = { .type = LOCKDEP_REPORT_CLASSES_FULL,
						    .name = map_name(map),
						    .ip = ip };

			lockdep_deliver(t, &r);
		}
		return 0;
	}
	key = class_key(idx);
	__atomic_store_n(&map->class_key, key, __ATOMIC_RELEASE);
	return key;
}

static inline uint32_t map_class(struct lockdep_task *t, struct lockdep_map *map, unsigned long ip)
{
	uint32_t key = __atomic_load_n(&map->class_key, __ATOMIC_ACQUIRE);

	if (likely(key_live(key)))
		return key;
	return map_class_slow(t, map, ip);
}

/* ---- the dependency graph ---------------------------------------------------------------- */

static inline bool dep_known(unsigned a, unsigned b)
{
	return __atomic_load_n(&adj[a][b / 64], __ATOMIC_RELAXED) & (1ull << (b % 64));
}

/* The recorded dependency a -> b, or NULL. Graph lock held. */
static const struct lockdep_dep *dep_find(unsigned a, unsigned b)
{
	unsigned i;

	for (i = classes[a].deps; i; i = deps[i - 1].next)
		if (deps[i - 1].to == b)
			return &deps[i - 1];
	return NULL;
}

/*
 * Whether class `to` is reachable from `from` (breadth-first over adj[]); if so, the
 * dependencies of the path go to r->prev[] and their number to r->nr_prev. Graph lock held.
 */
static bool graph_path(unsigned from, unsigned to, struct lockdep_report *r)
{
	unsigned head = 0, tail = 0, n = 0, i, u, v, w;

	memset(bfs_seen, 0, sizeof(bfs_seen));
	bfs_seen[from / 64] |= 1ull << (from % 64);
	bfs_queue[tail++] = (uint16_t)from;
	while (head < tail) {
		u = bfs_queue[head++];
		for (w = 0; w < CLASS_WORDS; w++) {
			uint64_t bits = adj[u][w] & ~bfs_seen[w];

			bfs_seen[w] |= bits;
			while (bits) {
				v = w * 64 + (unsigned)__builtin_ctzll(bits);
				bits &= bits - 1;
				bfs_parent[v] = (uint16_t)u;
				if (v == to)
					goto found;
				bfs_queue[tail++] = (uint16_t)v;
			}
		}
	}
	return false;
found:
	/* Lay the path out forwards in bfs_queue[0..n]: from, ..., to. */
	for (v = to; v != from; v = bfs_parent[v])
		n++;
	for (v = to, i = n; i > 0; v = bfs_parent[v], i--)
		bfs_queue[i] = (uint16_t)v;
	bfs_queue[0] = (uint16_t)from;
	r->nr_prev = n;
	for (i = 0; i < n && i < LOCKDEP_REPORT_MAX_CHAIN; i++) {
		const struct lockdep_dep *d = dep_find(bfs_queue[i], bfs_queue[i + 1]);

		r->prev[i].from = classes[bfs_queue[i]].name;
		r->prev[i].to = classes[bfs_queue[i + 1]].name;
		r->prev[i].from_ip = d ? d->from_ip : 0;
		r->prev[i].to_ip = d ? d->to_ip : 0;
	}
	return true;
}

/* Record a -> b (hl's class -> map's class), first checking that b does not lead to a. */
static __attribute__((noinline)) void dep_add(struct lockdep_task *t,
					      const struct lockdep_held_lock *hl,
					      struct lockdep_map *map, unsigned a, unsigned b,
					      unsigned long ip)
{
	struct lockdep_report r = { .type = LOCKDEP_REPORT_INVERSION,
				    .name = map_name(map),
				    .ip = ip,
				    .held = map_name(hl->map),
				    .held_ip = hl->ip };
	struct lockdep_dep *d;
	bool inversion;

	if (!graph_lock())
		return; /* retried at the next acquisition */
	if (dep_known(a, b)) {
		graph_unlock(); /* another CPU recorded it meanwhile */
		return;
	}
	if (nr_deps >= LOCKDEP_MAX_DEPS) {
		graph_unlock();
		if (turn_off()) {
			r.type = LOCKDEP_REPORT_DEPS_FULL;
			lockdep_deliver(t, &r);
		}
		return;
	}
	inversion = graph_path(b, a, &r);
	/* Recorded even when inverted: the pair is then known and never reported again. */
	d = &deps[nr_deps];
	d->from_ip = hl->ip;
	d->to_ip = ip;
	d->to = (uint16_t)b;
	d->next = classes[a].deps;
	classes[a].deps = (uint16_t)(nr_deps + 1);
	__atomic_store_n(&nr_deps, nr_deps + 1, __ATOMIC_RELAXED);
	__atomic_fetch_or(&adj[a][b / 64], 1ull << (b % 64), __ATOMIC_RELAXED);
	graph_unlock();
	if (inversion) {
		stat_inc(inversions);
		lockdep_deliver(t, &r);
	}
}

/* ---- reports (built here, printed by lockdep_report.c) ---------------------------------- */

static __attribute__((noinline)) void
report_recursion(struct lockdep_task *t, const struct lockdep_held_lock *hl, unsigned long ip)
{
	struct lockdep_report r = { .type = LOCKDEP_REPORT_RECURSION,
				    .name = map_name(hl->map),
				    .ip = ip,
				    .held_ip = hl->ip };

	stat_inc(recursion);
	t->recursed = true; /* its releases take the slow path from now on */
	if (lockdep_report_first(t, r.type, hl->map, ip))
		lockdep_deliver(t, &r);
}

static __attribute__((noinline)) void
report_overflow(struct lockdep_task *t, const struct lockdep_map *map, unsigned long ip)
{
	struct lockdep_report r = { .type = LOCKDEP_REPORT_OVERFLOW,
				    .name = map_name(map),
				    .ip = ip };

	if (turn_off())
		lockdep_deliver(t, &r);
}

/* A report about `map` that names its holder when that is another task. */
static __attribute__((noinline)) void report_not_held(struct lockdep_task *t,
						      enum lockdep_report_type type,
						      const struct lockdep_map *map,
						      unsigned long ip)
{
	struct lockdep_report r = { .type = type, .name = map_name(map), .ip = ip };
	struct lockdep_task *holder = __atomic_load_n(&map->holder, __ATOMIC_RELAXED);

	if (holder && holder != t) {
		r.holder = holder;
		r.holder_ip = __atomic_load_n(&map->holder_ip, __ATOMIC_RELAXED);
	}
	if (lockdep_report_first(t, type, map, ip))
		lockdep_deliver(t, &r);
}

/* ---- the API ----------------------------------------------------------------------------- */

void lockdep_task_init(struct lockdep_task *t)
{
	memset(t, 0, sizeof(*t));
}

void lockdep_init_map(struct lockdep_map *map, const char *name)
{
	map->name = name;
	__atomic_store_n(&map->class_key, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&map->holder, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&map->holder_ip, 0, __ATOMIC_RELAXED);
}

/*
 * The checks before taking `map`: recursion, and a dependency on every held lock unless
 * this is a trylock. The fast path is one bitmap test per held lock. Returns map's class.
 * Inlined into both callers: lockdep_acquire() runs around every lock in the debug build
 * (twice per timer tick), and on an emulated guest CPU each instruction here counts.
 */
static __attribute__((always_inline)) inline uint32_t
check_acquire(struct lockdep_task *t, struct lockdep_map *map, unsigned flags, unsigned long ip)
{
	uint32_t key = map_class(t, map, ip);
	uint32_t gen = __atomic_load_n(&class_gen, __ATOMIC_RELAXED);
	bool ordered = key && key >> 16 == gen && !(flags & LOCKDEP_TRYLOCK);
	/* Without a live class (key 0: unnamed, or classes full) there is no column to test. */
	unsigned i, b = ordered ? key_index(key) : 0, depth = t->depth;
	const uint64_t *col = &adj[0][b / 64];
	uint64_t bit = 1ull << (b % 64);

	for (i = 0; i < depth; i++) {
		const struct lockdep_held_lock *hl = &t->held[i];
		uint32_t hk = hl->class_key;

		if (unlikely(hl->map == map)) {
			if (!(flags & hl->flags & LOCKDEP_READ))
				report_recursion(t, hl, ip);
			continue;
		}
		/* Same-class nesting (two run queues, say) is the caller's to order. */
		if (ordered && hk >> 16 == gen && hk && hk != key &&
		    unlikely(!(__atomic_load_n(&col[(size_t)key_index(hk) * CLASS_WORDS],
					       __ATOMIC_RELAXED) &
			       bit)))
			dep_add(t, hl, map, key_index(hk), b, ip);
	}
	return key;
}

static __attribute__((noinline)) void note_depth(unsigned depth)
{
	uint32_t old = __atomic_load_n(&lockdep_counters.max_depth, __ATOMIC_RELAXED);

	while (depth > old &&
	       !__atomic_compare_exchange_n(&lockdep_counters.max_depth, &old, depth, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void lockdep_acquire(struct lockdep_map *map, unsigned flags, unsigned long ip)
{
	struct lockdep_task *t = task_get();
	struct lockdep_held_lock *hl;
	uint32_t key;
	unsigned depth;

	if (!t)
		return;
	depth = t->depth;
	if (unlikely(depth >= LOCKDEP_MAX_DEPTH)) {
		report_overflow(t, map, ip);
		return;
	}
	key = check_acquire(t, map, flags, ip);
	hl = &t->held[depth];
	hl->map = map;
	hl->ip = ip;
	hl->class_key = key;
	hl->flags = flags;
	/* An interrupt sharing this record only ever looks below depth. */
	barrier();
	t->depth = ++depth;
	if (!(flags & LOCKDEP_READ)) {
		__atomic_store_n(&map->holder, t, __ATOMIC_RELAXED);
		__atomic_store_n(&map->holder_ip, ip, __ATOMIC_RELAXED);
	}
	stat_inc(acquisitions);
	if (unlikely(depth > __atomic_load_n(&lockdep_counters.max_depth, __ATOMIC_RELAXED)))
		note_depth(depth);
}

void lockdep_contended(struct lockdep_map *map, unsigned flags, unsigned long ip)
{
	struct lockdep_task *t = task_get();

	if (t)
		check_acquire(t, map, flags, ip);
}

/* The release of held[i], not the top of the stack, or of a lock held more than once. */
static __attribute__((noinline)) void release_slow(struct lockdep_task *t, struct lockdep_map *map,
						   int i)
{
	bool exclusive = !(t->held[i].flags & LOCKDEP_READ);
	int j;

	for (j = i; j + 1 < (int)t->depth; j++)
		t->held[j] = t->held[j + 1];
	barrier();
	if (--t->depth == 0)
		t->recursed = false; /* nothing held: the fast path is exact again */
	stat_inc(releases);
	if (!exclusive || __atomic_load_n(&map->holder, __ATOMIC_RELAXED) != t)
		return;
	for (j = 0; j < (int)t->depth; j++)
		if (t->held[j].map == map && !(t->held[j].flags & LOCKDEP_READ))
			return; /* still held (a reported recursion) */
	__atomic_store_n(&map->holder, NULL, __ATOMIC_RELAXED);
}

void lockdep_release(struct lockdep_map *map, unsigned long ip)
{
	struct lockdep_task *t = task_get();
	unsigned depth;
	int i;

	if (!t)
		return;
	depth = t->depth;
	/*
	 * The common case: the lock on top, taken once (a recursion is reported, and only then
	 * can the same map sit lower in the stack too: release_slow() looks).
	 */
	if (likely(depth && t->held[depth - 1].map == map && !t->recursed)) {
		bool exclusive = !(t->held[depth - 1].flags & LOCKDEP_READ);

		barrier();
		t->depth = depth - 1;
		stat_inc(releases);
		if (exclusive && __atomic_load_n(&map->holder, __ATOMIC_RELAXED) == t)
			__atomic_store_n(&map->holder, NULL, __ATOMIC_RELAXED);
		return;
	}
	i = held_index(t, map);
	if (unlikely(i < 0)) {
		stat_inc(bad_release);
		report_not_held(t, LOCKDEP_REPORT_BAD_RELEASE, map, ip);
		return;
	}
	release_slow(t, map, i);
}

bool lockdep_is_held(const struct lockdep_map *map)
{
	struct lockdep_task *t = task_get();

	return !t || held_index(t, map) >= 0;
}

void lockdep_assert_held(const struct lockdep_map *map)
{
	struct lockdep_task *t = task_get();

	if (!t || held_index(t, map) >= 0)
		return;
	stat_inc(not_held);
	report_not_held(t, LOCKDEP_REPORT_NOT_HELD, map,
			(unsigned long)__builtin_return_address(0));
}

void lockdep_assert_not_held(const struct lockdep_map *map)
{
	struct lockdep_task *t = task_get();
	unsigned long ip = (unsigned long)__builtin_return_address(0);
	int i;

	if (!t || (i = held_index(t, map)) < 0)
		return;
	stat_inc(held);
	if (lockdep_report_first(t, LOCKDEP_REPORT_HELD, map, ip)) {
		struct lockdep_report r = { .type = LOCKDEP_REPORT_HELD,
					    .name = map_name(map),
					    .ip = ip,
					    .held_ip = t->held[i].ip };

		lockdep_deliver(t, &r);
	}
}

unsigned lockdep_depth(void)
{
	struct lockdep_task *t = task_get();

	return t ? t->depth : 0;
}

void lockdep_for_each_held(void (*fn)(const struct lockdep_held_lock *hl, void *arg), void *arg)
{
	struct lockdep_task *t = task_get();
	unsigned i;

	if (!t)
		return;
	t->recursion++;
	for (i = 0; i < t->depth; i++)
		fn(&t->held[i], arg);
	t->recursion--;
}

void lockdep_print_held_locks(void)
{
	struct lockdep_task *t = task_get();

	if (!t)
		return;
	t->recursion++;
	lockdep_print_held(t);
	t->recursion--;
}

void lockdep_get_stats(struct lockdep_stats *st)
{
	st->acquisitions = __atomic_load_n(&lockdep_counters.acquisitions, __ATOMIC_RELAXED);
	st->releases = __atomic_load_n(&lockdep_counters.releases, __ATOMIC_RELAXED);
	st->inversions = __atomic_load_n(&lockdep_counters.inversions, __ATOMIC_RELAXED);
	st->not_held = __atomic_load_n(&lockdep_counters.not_held, __ATOMIC_RELAXED);
	st->held = __atomic_load_n(&lockdep_counters.held, __ATOMIC_RELAXED);
	st->bad_release = __atomic_load_n(&lockdep_counters.bad_release, __ATOMIC_RELAXED);
	st->recursion = __atomic_load_n(&lockdep_counters.recursion, __ATOMIC_RELAXED);
	st->graph_busy = __atomic_load_n(&lockdep_counters.graph_busy, __ATOMIC_RELAXED);
	st->unexpected = __atomic_load_n(&lockdep_counters.unexpected, __ATOMIC_RELAXED);
	st->classes = __atomic_load_n(&nr_classes, __ATOMIC_RELAXED);
	st->dependencies = __atomic_load_n(&nr_deps, __ATOMIC_RELAXED);
	st->max_depth = __atomic_load_n(&lockdep_counters.max_depth, __ATOMIC_RELAXED);
	st->enabled = __atomic_load_n(&lockdep_on, __ATOMIC_RELAXED);
}

void lockdep_reset(void)
{
	bool locked = graph_lock();
	uint32_t gen = (__atomic_load_n(&class_gen, __ATOMIC_RELAXED) + 1) & 0xffff;

	memset(classes, 0, sizeof(classes));
	memset(hash_heads, 0, sizeof(hash_heads));
	memset(adj, 0, sizeof(adj));
	memset(deps, 0, sizeof(deps));
	memset(&lockdep_counters, 0, sizeof(lockdep_counters));
	__atomic_store_n(&nr_classes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&nr_deps, 0, __ATOMIC_RELAXED);
	lockdep_report_reset();
	/* Cached class keys of the old generation stop matching. */
	__atomic_store_n(&class_gen, gen ? gen : 1, __ATOMIC_RELAXED);
	if (locked)
		graph_unlock();
	__atomic_store_n(&lockdep_on, 1, __ATOMIC_RELEASE);
}

#endif /* CONFIG_LOCKDEP */
