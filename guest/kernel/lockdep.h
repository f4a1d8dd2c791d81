/* SPDX-License-Identifier: MIT */
/*
 * The lock validator (CONFIG_LOCKDEP): every lock embeds a struct lockdep_map, every thread
 * a struct lockdep_task (its stack of held locks). Locks are grouped into classes by name;
 * the first time class B is taken while A is held, the dependency A -> B is recorded, and if
 * B already leads to A (directly or through other classes) the inversion is reported once,
 * with the sites of both orders. Without CONFIG_LOCKDEP every call compiles to nothing.
 */
#ifndef PLUGVM_KERNEL_LOCKDEP_H
#define PLUGVM_KERNEL_LOCKDEP_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/compiler.h"

#define LOCKDEP_MAX_DEPTH	 16 /* locks one task (or interrupt context) holds at once */
#define LOCKDEP_MAX_CLASSES	 256 /* distinct lock names */
#define LOCKDEP_MAX_DEPS	 1024 /* recorded dependencies A -> B between classes */
#define LOCKDEP_NAME_LEN	 32 /* class names compare on their first 31 bytes */
#define LOCKDEP_REPORT_MAX_CHAIN 8 /* dependencies of an earlier order carried by a report */

/*
 * lockdep_acquire() flags. TRYLOCK: taken by a successful trylock, which cannot deadlock, so
 * it adds no dependency on the locks held. READ: shared; the same task may take it again shared.
 */
#define LOCKDEP_TRYLOCK 0x1u
#define LOCKDEP_READ	0x2u

/* The address of the instruction where it is used, for `ip` arguments (Linux's _THIS_IP_). */
#define LOCKDEP_THIS_IP                  \
	({                               \
		__label__ __here;        \
__here:                                  \
		(unsigned long)&&__here; \
	})

enum lockdep_report_type {
	LOCKDEP_REPORT_INVERSION, /* held -> name, while name -> ... -> held was seen before */
	LOCKDEP_REPORT_RECURSION, /* name taken again by the task holding it (self-deadlock) */
	LOCKDEP_REPORT_BAD_RELEASE, /* name released by a task that does not hold it */
	LOCKDEP_REPORT_NOT_HELD, /* lockdep_assert_held(name) failed */
	LOCKDEP_REPORT_HELD, /* lockdep_assert_not_held(name) failed */
	LOCKDEP_REPORT_OVERFLOW, /* held-lock stack full taking name: validator off */
	LOCKDEP_REPORT_CLASSES_FULL, /* no class left for name: validator off */
	LOCKDEP_REPORT_DEPS_FULL, /* no room for held -> name: validator off */
};

/* One recorded dependency: `to` was taken at to_ip while `from` (taken at from_ip) was held. */
struct lockdep_report_dep {
	const char *from;
	const char *to;
	unsigned long from_ip;
	unsigned long to_ip;
};

/* What lockdep_report_hook receives; the pointers are valid during the call only. */
struct lockdep_report {
	enum lockdep_report_type type;
	unsigned cpu; /* lockdep_cpu_id() of the reporting context */
	const struct lockdep_task *task; /* the reporting task record */
	const char *name; /* the lock acquired, released or asserted */
	unsigned long ip; /* ... and where */
	const char *held; /* INVERSION, DEPS_FULL: the lock held meanwhile */
	unsigned long held_ip; /* INVERSION, RECURSION, HELD: where it was taken */
	const struct lockdep_task *holder; /* BAD_RELEASE, NOT_HELD: another holder, or NULL */
	unsigned long holder_ip; /* ... and where it took the lock */
	unsigned nr_prev; /* INVERSION: dependencies of name -> ... -> held */
	struct lockdep_report_dep prev[LOCKDEP_REPORT_MAX_CHAIN]; /* the first of them */
};

/* Counters since boot (or lockdep_reset()). */
struct lockdep_stats {
	uint64_t acquisitions; /* tracked lockdep_acquire() calls */
	uint64_t releases; /* tracked lockdep_release() calls that found the lock held */
	uint64_t inversions; /* class pairs seen in both orders (each counted once) */
	uint64_t not_held; /* failed lockdep_assert_held() calls */
	uint64_t held; /* failed lockdep_assert_not_held() calls */
	uint64_t bad_release; /* releases of a lock the task did not hold */
	uint64_t recursion; /* acquisitions of a lock the task already held */
	uint64_t graph_busy; /* graph updates put off: this CPU was interrupted inside one */
	uint64_t unexpected; /* reports printed while the task did not expect them */
	uint32_t classes; /* lock classes registered */
	uint32_t dependencies; /* dependencies recorded */
	uint32_t max_depth; /* most locks held at once by one task */
	bool enabled; /* false once a fixed table ran out (or without CONFIG_LOCKDEP) */
};

/*
 * Called after the printk lines of every report (any context, possibly with interrupts
 * off); must not sleep. Locks it takes are not validated. NULL (the default): no hook.
 */
extern void (*lockdep_report_hook)(const struct lockdep_report *r);

struct lockdep_task;

/*
 * Provided by the kernel (the scheduler), not by lockdep.c: the record of the running
 * thread, or in interrupt context a per-CPU record (nested interrupt levels may share it);
 * NULL while none exists yet (early boot), which makes every call a no-op. Any context;
 * must not take a lock or call lockdep.
 */
struct lockdep_task *lockdep_current(void);
/* Provided by the kernel: the running CPU's number, unique among running CPUs. Any context. */
unsigned lockdep_cpu_id(void);

#ifdef CONFIG_LOCKDEP

/* Embedded in every lock. LOCKDEP_MAP_INIT or lockdep_init_map() before first use. */
struct lockdep_map {
	const char *name; /* class name: maps with equal names share a class */
	uint32_t class_key; /* cached class: generation << 16 | index + 1; 0: unknown */
	/* Written by the holder with atomics, read racily by reports: */
	struct lockdep_task *holder; /* exclusive holder; NULL when free or held shared */
	unsigned long holder_ip; /* where the holder took it */
};

#define LOCKDEP_MAP_INIT(n) \
	{                   \
		.name = (n) \
	}

/* One entry of a held-lock stack. */
struct lockdep_held_lock {
	struct lockdep_map *map;
	unsigned long ip; /* where it was acquired */
	uint32_t class_key; /* the map's class at that time; 0: none */
	uint32_t flags; /* LOCKDEP_TRYLOCK, LOCKDEP_READ */
};

/* Per thread (and per CPU for interrupt context); only its owner touches it. All zero: empty. */
struct lockdep_task {
	unsigned depth; /* entries used in held[], oldest first */
	unsigned recursion; /* > 0 while lockdep itself prints: calls are ignored */
	bool expected; /* a test provokes reports on purpose: they say "expected lockdep:" */
	bool recursed; /* a recursive acquisition was seen: releases check the whole stack */
	struct lockdep_held_lock held[LOCKDEP_MAX_DEPTH];
};

/* Make `t` an empty record. Before the thread (or context) it belongs to first runs. */
void lockdep_task_init(struct lockdep_task *t);

/*
 * Name a lock. `name` selects the class: locks initialized with equal strings (compared on
 * their first LOCKDEP_NAME_LEN - 1 bytes) share it, like Linux's keys per init site; the
 * string is copied into the class. NULL: the lock is tracked (held stack, assertions) but
 * takes no part in order checking. Takes no lock; any context, before the lock is used.
 */
void lockdep_init_map(struct lockdep_map *map, const char *name);

/*
 * The current task has just taken the lock of `map` (call it after the lock is taken, with
 * preemption or interrupts disabled). `flags`: LOCKDEP_TRYLOCK, LOCKDEP_READ; `ip`: the
 * acquisition site for reports. Pushes the lock on the held stack; reports a recursive
 * acquisition, and for a blocking acquisition records a dependency on every lock held,
 * reporting an inversion the first time a class pair is seen in both orders.
 */
void lockdep_acquire(struct lockdep_map *map, unsigned flags, unsigned long ip);

/*
 * Optional, before waiting for a contended lock (preemption disabled): the checks of
 * lockdep_acquire() without the push, so a self-deadlock or an inversion is reported before
 * the wait can hang. The lockdep_acquire() once the lock is taken is still needed.
 */
void lockdep_contended(struct lockdep_map *map, unsigned flags, unsigned long ip);

/*
 * The current task is about to drop the lock of `map` (call it while still holding it, with
 * preemption or interrupts disabled). Locks may be released in any order. Reports a release
 * of a lock the task does not hold.
 */
void lockdep_release(struct lockdep_map *map, unsigned long ip);

/*
 * Whether the current task (or interrupt context) holds `map`. True as well when it cannot
 * tell: validator off, or no task record yet. Any context.
 */
bool lockdep_is_held(const struct lockdep_map *map);

/*
 * Report "lock not held" (once per call site and class) unless lockdep_is_held(map). For
 * the function that touches what the lock protects. Any context.
 */
void lockdep_assert_held(const struct lockdep_map *map);

/* Report "lock held" (once per call site and class) if the current task holds `map`. */
void lockdep_assert_not_held(const struct lockdep_map *map);

/* Locks the current task holds; 0 with the validator off or without a task record. */
unsigned lockdep_depth(void);

/*
 * Call fn(hl, arg) for every lock the current task holds, oldest first. fn must not take
 * or release tracked locks. Nothing with the validator off.
 */
void lockdep_for_each_held(void (*fn)(const struct lockdep_held_lock *hl, void *arg), void *arg);

/* printk the current task's held locks, one "lockdep:  #i: name at 0x..." line each. */
void lockdep_print_held_locks(void);

/* Copy the counters. Any context. */
void lockdep_get_stats(struct lockdep_stats *st);

/*
 * Forget every class, dependency, report and counter, and turn the validator back on. For
 * tests and self-tests: no other CPU may be inside a lockdep call meanwhile. Locks held
 * across it are still released cleanly but take no part in later order checks.
 */
void lockdep_reset(void);

#else /* !CONFIG_LOCKDEP */

struct lockdep_map {
};

#define LOCKDEP_MAP_INIT(n) \
	{                   \
	}

struct lockdep_held_lock {
	struct lockdep_map *map;
	unsigned long ip;
	uint32_t class_key;
	uint32_t flags;
};

struct lockdep_task {
};

static inline void lockdep_task_init(struct lockdep_task *t)
{
	(void)t;
}

static inline void lockdep_init_map(struct lockdep_map *map, const char *name)
{
	(void)map;
	(void)name;
}

static inline void lockdep_acquire(struct lockdep_map *map, unsigned flags, unsigned long ip)
{
	(void)map;
	(void)flags;
	(void)ip;
}

static inline void lockdep_contended(struct lockdep_map *map, unsigned flags, unsigned long ip)
{
	(void)map;
	(void)flags;
	(void)ip;
}

static inline void lockdep_release(struct lockdep_map *map, unsigned long ip)
{
	(void)map;
	(void)ip;
}

static inline bool lockdep_is_held(const struct lockdep_map *map)
{
	(void)map;
	return true;
}

static inline void lockdep_assert_held(const struct lockdep_map *map)
{
	(void)map;
}

static inline void lockdep_assert_not_held(const struct lockdep_map *map)
{
	(void)map;
}

static inline unsigned lockdep_depth(void)
{
	return 0;
}

static inline void lockdep_for_each_held(void (*fn)(const struct lockdep_held_lock *hl, void *arg),
					 void *arg)
{
	(void)fn;
	(void)arg;
}

static inline void lockdep_print_held_locks(void)
{
}

static inline void lockdep_get_stats(struct lockdep_stats *st)
{
	*st = (struct lockdep_stats){ .enabled = false };
}

static inline void lockdep_reset(void)
{
}

#endif /* CONFIG_LOCKDEP */

#endif
