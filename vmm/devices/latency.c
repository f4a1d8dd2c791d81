// SPDX-License-Identifier: MIT
/* The latency statistics port (see latency.h): one checked registration, checked copies. */
#include "latency.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../log.h"
#include "../vm.h"
#include "pv_port.h"

struct latency_dev {
	struct vm *vm;
	struct pv_port port;
	_Atomic uint64_t area_gpa; /* 0: nothing registered; written on a vCPU thread */
	/* Main thread: each record's last consistent copy, for one caught mid-write. */
	struct plugvm_latency_cpu last[PLUGVM_LATENCY_MAX_CPUS];
};

static void latency_io(void *opaque, int vcpu_id, uint64_t offset, uint8_t *data, unsigned size,
		       unsigned count, bool is_write)
{
	struct latency_dev *d = opaque;
	struct plugvm_latency_register r;

	(void)vcpu_id;
	if (!pv_port_request(&d->port, &d->vm->mem, offset, data, size, count, is_write, &r))
		return;
	if (r.magic != PLUGVM_LATENCY_MAGIC || r.version != PLUGVM_LATENCY_VERSION || r.reserved ||
	    r.area_bytes != sizeof(struct plugvm_latency_area) || !r.area_gpa || (r.area_gpa & 7) ||
	    !mem_gpa_ptr(&d->vm->mem, r.area_gpa, r.area_bytes)) {
		log_guest_warn(&d->port.rl,
			       "latency: bad registration (magic %#x, version %u, area %#llx, "
			       "%llu bytes)",
			       r.magic, r.version, (unsigned long long)r.area_gpa,
			       (unsigned long long)r.area_bytes);
		return;
	}
	atomic_store(&d->area_gpa, r.area_gpa);
}

int latency_init(struct vm *vm)
{
	struct latency_dev *d = calloc(1, sizeof(*d));
	int ret;

	if (!d) {
		log_error("latency: out of memory");
		return -ENOMEM;
	}
	d->vm = vm;
	d->port = (struct pv_port){ .name = "latency",
				    .object = "registration ",
				    .align = 8,
				    .len = sizeof(struct plugvm_latency_register) };
	ret = bus_register(&vm->pio, PLUGVM_PORT_LATENCY, PLUGVM_PORT_LATENCY_LEN, latency_io, d,
			   "latency");
	if (ret) {
		free(d);
		return ret;
	}
	vm->latency = d;
	return 0;
}

void latency_exit(struct vm *vm)
{
	free(vm->latency);
	vm->latency = NULL;
}

/*
 * Copy `len` bytes of an outlier slot, whose first word is a sequence count
 * (plugvm_latency.h), from guest memory: true when a copy was taken while the count was
 * `want` throughout, i.e. the slot held the index asked for, written whole.
 */
unsigned latency_copy_tries = LATENCY_COPY_TRIES;

static bool copy_seq(void *dst, const void *src, size_t len, uint32_t want)
{
	const _Atomic uint32_t *seq = (const _Atomic uint32_t *)src;
	unsigned i;

	for (i = 0; i < latency_copy_tries; i++) {
		uint32_t a = atomic_load_explicit(seq, memory_order_acquire), b;

		if (a != want && !(a & 1))
			return false; /* not written yet, skipped, or a later lap's */
		if (a & 1)
			continue; /* being written */
		memcpy(dst, src, len);
		atomic_thread_fence(memory_order_acquire);
		b = atomic_load_explicit(seq, memory_order_relaxed);
		if (a == b)
			return true;
	}
	return false;
}

/*
 * Copy a CPU's record out of its latch: the copy its writer is not in. Fails only if the
 * writer moved on during every try (it publishes once a period, so only a guest that spins
 * on its sequence count gets there).
 */
static bool copy_latch(struct plugvm_latency_cpu *dst, const struct plugvm_latency_latch *l)
{
	const _Atomic uint32_t *seq = (const _Atomic uint32_t *)&l->seq;
	unsigned i;

	for (i = 0; i < latency_copy_tries; i++) {
		uint32_t a = atomic_load_explicit(seq, memory_order_acquire);

		memcpy(dst, &l->copy[a & 1], sizeof(*dst));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(seq, memory_order_relaxed) == a)
			return true;
	}
	return false;
}

/* Clear what lies beyond the histogram's limit; drop a record whose figures contradict. */
static void check_cpu(struct latency_dev *d, struct plugvm_latency_cpu *c, unsigned hist_us)
{
	unsigned k;

	for (k = hist_us; k < PLUGVM_LATENCY_HIST_MAX; k++)
		c->hist[k] = 0;
	if (!c->count)
		c->min_ns = 0;
	if (c->count && (c->min_ns > c->max_ns || c->sum_ns / c->count > c->max_ns ||
			 c->sum_ns / c->count < c->min_ns)) {
		log_guest_warn(&d->port.rl, "latency: inconsistent record (min/avg/max)");
		memset(c, 0, sizeof(*c));
	}
}

int latency_read(struct vm *vm, struct latency_snapshot *s)
{
	struct latency_dev *d = vm->latency;
	const struct plugvm_latency_area *a;
	uint64_t gpa = d ? atomic_load(&d->area_gpa) : 0, n, i;
	unsigned k;

	memset(s, 0, sizeof(*s));
	if (!gpa)
		return -ENODATA;
	a = mem_gpa_ptr(&vm->mem, gpa, sizeof(*a));
	if (!a)
		return -EFAULT;
	s->interval_us = a->interval_us;
	s->hist_us = a->hist_us;
	s->threshold_us = a->threshold_us;
	s->nr_states = a->nr_states;
	s->tsc_khz = a->tsc_khz;
	s->flags = a->flags & (PLUGVM_LATENCY_F_RT | PLUGVM_LATENCY_F_STARTED);
	if (!s->hist_us || s->hist_us > PLUGVM_LATENCY_HIST_MAX || !s->interval_us ||
	    s->nr_states > PLUGVM_LATENCY_MAX_STATES) {
		log_guest_warn(&d->port.rl,
			       "latency: bad header (interval %u, histogram %u, "
			       "%u states)",
			       s->interval_us, s->hist_us, s->nr_states);
		memset(s, 0, sizeof(*s));
		return -EFAULT;
	}
	for (k = 0; k < PLUGVM_LATENCY_MAX_CPUS; k++) {
		struct plugvm_latency_cpu *c = &s->cpus[k];

		if (!copy_latch(c, &a->cpus[k])) {
			/*
			 * Its writer kept moving (a guest spinning on the count): the last good
			 * copy, held to this registration's limit too (it may be from an
			 * earlier one with a larger histogram; fuzz_latency found that).
			 */
			*c = d->last[k];
			check_cpu(d, c, s->hist_us);
			s->stale[k] = c->flags & PLUGVM_LATENCY_CPU_USED;
			s->torn++;
			continue;
		}
		if (!(c->flags & PLUGVM_LATENCY_CPU_USED)) {
			memset(c, 0, sizeof(*c));
			continue;
		}
		check_cpu(d, c, s->hist_us);
		d->last[k] = *c;
	}
	for (k = 0; k < s->nr_states; k++) {
		memcpy(&s->states[k], &a->states[k], sizeof(s->states[k]));
		s->states[k].name[PLUGVM_LATENCY_STATE_NAME - 1] = '\0';
		for (i = 0; s->states[k].name[i]; i++)
			if (s->states[k].name[i] < 0x20 || s->states[k].name[i] > 0x7e)
				s->states[k].name[i] = '?';
	}
	n = atomic_load_explicit((const _Atomic uint64_t *)&a->outlier_seq, memory_order_acquire);
	s->outlier_seq = n;
	for (i = n > PLUGVM_LATENCY_OUTLIERS ? n - PLUGVM_LATENCY_OUTLIERS : 0; i < n; i++) {
		struct plugvm_latency_outlier *o = &s->outliers[s->nr_outliers];

		if (!copy_seq(o, &a->outliers[i % PLUGVM_LATENCY_OUTLIERS], sizeof(*o),
			      PLUGVM_LATENCY_OUTLIER_SEQ(i)) ||
		    o->cpu >= PLUGVM_LATENCY_MAX_CPUS) {
			s->torn++;
			continue;
		}
		for (k = 0; k < PLUGVM_LATENCY_MAX_CPUS; k++) {
			unsigned st = o->hp[k] & ~PLUGVM_LATENCY_HP_DOWN;

			if (o->hp[k] && (st == 0 || st > s->nr_states))
				o->hp[k] = 0; /* names no state we know */
		}
		s->nr_outliers++;
	}
	return 0;
}
