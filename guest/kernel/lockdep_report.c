// SPDX-License-Identifier: MIT
/*
 * The lock validator's reports (lockdep.c finds and builds them): each kind printed once
 * per (type, site, class), as "lockdep: ..." lines ("expected lockdep: ..." while the task
 * provokes them on purpose), then handed to lockdep_report_hook (the agent's event).
 */
#include "kernel/lockdep.h"

#ifdef CONFIG_LOCKDEP

#include "kernel/lockdep_internal.h"
#include "kernel/printk.h"
#include "kernel/string.h"

#define SEEN_SLOTS 256 /* (report type, site, class) already reported */

/* Lock-free (compare-and-swap): keys of the reports already printed. */
static uint64_t seen[SEEN_SLOTS];
static int seen_full;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/*
 * True the first time (type, site, class) is seen. The key is a 64-bit hash of the three,
 * the class taken as its name (so unregistered classes count too): a collision, which
 * would only silence a report, is vanishingly unlikely.
 */
bool lockdep_report_first(struct lockdep_task *t, enum lockdep_report_type type,
			  const struct lockdep_map *map, unsigned long ip)
{
	const char *name = map_name(map);
	uint64_t k = 14695981039346656037ull; /* FNV-1a over the compared bytes */
	unsigned slot, i;

	for (i = 0; i < LOCKDEP_NAME_LEN - 1 && name[i]; i++)
		k = (k ^ (uint8_t)name[i]) * 1099511628211ull;
	k = mix64(k ^ mix64((uint64_t)ip * (LOCKDEP_REPORT_DEPS_FULL + 1) + type));
	k += !k; /* 0 marks a free slot */
	slot = (unsigned)(k % SEEN_SLOTS);
	for (i = 0; i < SEEN_SLOTS; i++, slot = (slot + 1) % SEEN_SLOTS) {
		uint64_t v = __atomic_load_n(&seen[slot], __ATOMIC_RELAXED);

		if (!v && __atomic_compare_exchange_n(&seen[slot], &v, k, false, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
			return true;
		if (v == k)
			return false;
	}
	if (!__atomic_exchange_n(&seen_full, 1, __ATOMIC_RELAXED)) {
		t->recursion++;
		printk("lockdep: report table full: new reports are counted, not printed\n");
		t->recursion--;
	}
	return false;
}

/* A report line; "expected " in front while the task provokes reports on purpose. */
#define lprintk(t, fmt, ...) \
	printk("%slockdep: " fmt, (t)->expected ? "expected " : "", ##__VA_ARGS__)

void lockdep_print_held(const struct lockdep_task *t)
{
	unsigned i;

	lprintk(t, "%u locks held by task %p (cpu %u):\n", t->depth, (const void *)t,
		lockdep_cpu_id());
	for (i = 0; i < t->depth; i++) {
		const struct lockdep_held_lock *hl = &t->held[i];

		lprintk(t, " #%u: %s at 0x%lx%s\n", i, map_name(hl->map), hl->ip,
			hl->flags & LOCKDEP_TRYLOCK ? " (trylock)"
			: hl->flags & LOCKDEP_READ  ? " (read)"
						    : "");
	}
}

static void print_report(const struct lockdep_task *t, const struct lockdep_report *r)
{
	const struct lockdep_report_dep *p = r->prev;
	unsigned i;

	switch (r->type) {
	case LOCKDEP_REPORT_INVERSION:
		lprintk(t,
			"lock order inversion: %s -> %s at 0x%lx / 0x%lx, previously %s -> "
			"%s at 0x%lx / 0x%lx (cpu %u)\n",
			r->held, r->name, r->held_ip, r->ip, p->from, p->to, p->from_ip, p->to_ip,
			r->cpu);
		for (i = 1; i < r->nr_prev && i < LOCKDEP_REPORT_MAX_CHAIN; i++)
			lprintk(t, "  then %s -> %s at 0x%lx / 0x%lx\n", p[i].from, p[i].to,
				p[i].from_ip, p[i].to_ip);
		if (r->nr_prev > LOCKDEP_REPORT_MAX_CHAIN)
			lprintk(t, "  then %u more dependencies\n",
				r->nr_prev - LOCKDEP_REPORT_MAX_CHAIN);
		break;
	case LOCKDEP_REPORT_RECURSION:
		lprintk(t,
			"recursive acquire (self-deadlock): %s at 0x%lx, already held from "
			"0x%lx (cpu %u)\n",
			r->name, r->ip, r->held_ip, r->cpu);
		break;
	case LOCKDEP_REPORT_BAD_RELEASE:
		if (r->holder)
			lprintk(t,
				"release of a lock not held: %s at 0x%lx (cpu %u), held by "
				"task %p from 0x%lx\n",
				r->name, r->ip, r->cpu, (const void *)r->holder, r->holder_ip);
		else
			lprintk(t, "release of a lock not held: %s at 0x%lx (cpu %u)\n", r->name,
				r->ip, r->cpu);
		break;
	case LOCKDEP_REPORT_NOT_HELD:
		if (r->holder)
			lprintk(t,
				"lock not held: %s, asserted at 0x%lx (cpu %u), held by "
				"task %p from 0x%lx\n",
				r->name, r->ip, r->cpu, (const void *)r->holder, r->holder_ip);
		else
			lprintk(t, "lock not held: %s, asserted at 0x%lx (cpu %u)\n", r->name,
				r->ip, r->cpu);
		break;
	case LOCKDEP_REPORT_HELD:
		lprintk(t,
			"lock held: %s, asserted not held at 0x%lx, taken at 0x%lx (cpu "
			"%u)\n",
			r->name, r->ip, r->held_ip, r->cpu);
		break;
	case LOCKDEP_REPORT_OVERFLOW:
		lprintk(t,
			"held-lock stack overflow (%u locks) taking %s at 0x%lx (cpu %u); "
			"validator off\n",
			LOCKDEP_MAX_DEPTH, r->name, r->ip, r->cpu);
		lockdep_print_held(t);
		break;
	case LOCKDEP_REPORT_CLASSES_FULL:
		lprintk(t,
			"lock class table full (%u classes) registering %s at 0x%lx (cpu "
			"%u); validator off\n",
			LOCKDEP_MAX_CLASSES, r->name, r->ip, r->cpu);
		break;
	case LOCKDEP_REPORT_DEPS_FULL:
		lprintk(t,
			"dependency table full (%u dependencies) at %s -> %s (cpu %u); "
			"validator off\n",
			LOCKDEP_MAX_DEPS, r->held, r->name, r->cpu);
		break;
	}
}

/*
 * printk the report, then pass it to the hook. Never under the graph lock. Lockdep calls
 * from inside (the console lock, the hook's locks) are ignored for this task meanwhile.
 */
void lockdep_deliver(struct lockdep_task *t, struct lockdep_report *r)
{
	void (*hook)(const struct lockdep_report *r) = READ_ONCE(lockdep_report_hook);

	r->cpu = lockdep_cpu_id();
	r->task = t;
	if (!t->expected)
		stat_inc(unexpected);
	t->recursion++;
	barrier();
	print_report(t, r);
	if (hook)
		hook(r);
	barrier();
	t->recursion--;
}

void lockdep_report_reset(void)
{
	memset(seen, 0, sizeof(seen));
	__atomic_store_n(&seen_full, 0, __ATOMIC_RELAXED);
}

#endif /* CONFIG_LOCKDEP */
