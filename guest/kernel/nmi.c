// SPDX-License-Identifier: MIT
/*
 * The NMI report (kernel/nmi.h). An NMI can land anywhere, inside any lock's critical
 * section, so the report reads its CPU's state without locks (a field may be mid-update:
 * it is a diagnosis, not a decision) and serializes CPUs with its own lock, taken only in
 * NMI context: an NMI is never nested on one CPU, so its holder is always another CPU's NMI
 * handler, which finishes. A holder whose vCPU the host does not run is waited for at most
 * NMI_REPORT_WAIT_NS; then the lines may interleave, but nothing hangs.
 */
#include "kernel/nmi.h"

#include "arch.h"
#include "kernel/cpu.h"
#include "kernel/cpumask.h"
#include "kernel/hrtimer.h"
#include "kernel/preempt.h"
#include "kernel/printk.h"
#include "kernel/sched.h"

#define NMI_LINE 240

static int report_owner = -1; /* CPU printing its report, -1: none */
static unsigned nr_reports; /* reports finished since boot */

/* The report being built, on the NMI stack: the lines, then written in one go. */
struct report {
	char text[5 * NMI_LINE];
	size_t len;
};

static void emit(struct report *r, unsigned cpu, const char *fmt, ...) __printf(3, 4);

/* One line, "nmi: cpu N: ...", appended to the report. */
static void emit(struct report *r, unsigned cpu, const char *fmt, ...)
{
	size_t room = sizeof(r->text) - r->len;
	va_list ap;
	int n;

	if (room < 32)
		return;
	n = snprintf(r->text + r->len, room, "nmi: cpu %u: ", cpu);
	va_start(ap, fmt);
	n += vsnprintf(r->text + r->len + n, room - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)room - 2)
		n = (int)room - 2;
	r->text[r->len + (size_t)n] = '\n';
	r->len += (size_t)n + 1;
}

/* Microseconds from now to `ns` (negative: past). */
static long us_from(uint64_t ns, uint64_t now)
{
	return (long)((int64_t)(ns - now) / 1000);
}

/*
 * Our turn: wait while other CPUs report, at most NMI_REPORT_WAIT_NS for any one of them
 * (each report is a few hundred bytes through an emulated UART: with many CPUs the queue
 * takes longer than that, and a holder that changes is making progress).
 */
static bool report_lock(int me)
{
	uint64_t until = arch_now_ns() + NMI_REPORT_WAIT_NS;
	int holder = -1;

	for (;;) {
		int expect = -1;

		if (__atomic_compare_exchange_n(&report_owner, &expect, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		if (expect != holder) {
			holder = expect;
			until = arch_now_ns() + NMI_REPORT_WAIT_NS;
		} else if (arch_now_ns() > until) {
			return false; /* the holder's vCPU is not running: print anyway */
		}
		arch_cpu_relax();
	}
}

static void report_unlock(int me)
{
	int expect = me;

	__atomic_compare_exchange_n(&report_owner, &expect, -1, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

static void report_timers(struct report *r, struct cpu *c, uint64_t now)
{
	struct hrtimer_base *b = &c->hrt;
	struct tq_node *first = READ_ONCE(b->queue.leftmost);
	uint64_t programmed = READ_ONCE(b->programmed_ns);

	emit(r, c->id,
	     "hrtimer: %lu queued, first in %ld us, programmed %s%ld us%s, %lu interrupts, "
	     "%lu reprograms",
	     (unsigned long)READ_ONCE(b->queue.count), first ? us_from(first->expires, now) : 0L,
	     programmed == UINT64_MAX ? "off " : "in ",
	     programmed == UINT64_MAX ? 0L : us_from(programmed, now),
	     READ_ONCE(b->in_interrupt) ? ", in interrupt" : "",
	     (unsigned long)READ_ONCE(b->stats.interrupts),
	     (unsigned long)READ_ONCE(b->stats.reprograms));
}

static void report_rq(struct report *r, struct cpu *c)
{
	struct rq *rq = &c->rq;
	struct thread *curr = READ_ONCE(rq->curr);

	emit(r, c->id,
	     "rq: running %.24s, nr_running %u, queued %u, wake list %s, need_resched %d, "
	     "preempt %#x, irqs %lu",
	     curr ? curr->name : "-", READ_ONCE(rq->nr_running), READ_ONCE(rq->queue.nr),
	     llist_empty(&rq->wake_list) ? "empty" : "NOT EMPTY", READ_ONCE(c->need_resched),
	     (unsigned)READ_ONCE(c->preempt_count), (unsigned long)READ_ONCE(c->nr_irqs));
}

void nmi_report(uint64_t rip, bool irqs_on, const uint64_t *frames, unsigned nr_frames)
{
	struct cpu *c = raw_this_cpu(); /* NMI context: not migratable */
	int me = (int)c->id;
	uint64_t now = arch_now_ns();
	char lapic[NMI_LINE - 32];
	struct report r;
	bool locked;

	/*
	 * The state as the NMI found it, read before waiting for our turn: other CPUs' reports
	 * take a while on the UART, and interrupts due meanwhile wait for us (we are in the
	 * NMI), which would make a healthy CPU look stuck.
	 */
	r.len = 0;
	arch_nmi_describe(lapic, sizeof(lapic));
	if (READ_ONCE(c->dying) || !cpumask_test(&cpu_online_mask, c->id)) {
		/* Dead or on its way: its queues belong to others now. */
		emit(&r, c->id, "rip %#lx, interrupts %s, offline (dying %d)", (unsigned long)rip,
		     irqs_on ? "on" : "off", READ_ONCE(c->dying));
		emit(&r, c->id, "lapic: %s", lapic);
	} else {
		emit(&r, c->id, "rip %#lx, interrupts %s, at %lu us", (unsigned long)rip,
		     irqs_on ? "on" : "off", (unsigned long)(now / 1000));
		emit(&r, c->id, "lapic: %s", lapic);
		report_timers(&r, c, now);
		report_rq(&r, c);
	}
	if (nr_frames) { /* where the interrupted code was called from (frame pointers) */
		char line[NMI_FRAMES * 19 + 8];
		size_t len = 0;
		unsigned i;

		for (i = 0; i < nr_frames && len < sizeof(line); i++)
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %#lx",
						(unsigned long)frames[i]);
		emit(&r, c->id, "called from%s", line);
	}
	locked = report_lock(me);
	console_write_nmi(r.text, r.len);
	__atomic_add_fetch(&nr_reports, 1, __ATOMIC_RELEASE);
	if (locked)
		report_unlock(me);
}

unsigned nmi_report_all(void)
{
	unsigned start = __atomic_load_n(&nr_reports, __ATOMIC_ACQUIRE), want, seen = 0, last = 0;
	uint64_t until = arch_now_ns() + NMI_REPORT_WAIT_NS;

	want = cpumask_weight(&cpu_online_mask);
	arch_nmi_all();
	do {
		seen = __atomic_load_n(&nr_reports, __ATOMIC_ACQUIRE) - start;
		if (seen >= want)
			break;
		if (seen != last) { /* progress: the bound is per report */
			last = seen;
			until = arch_now_ns() + NMI_REPORT_WAIT_NS;
		}
		arch_cpu_relax();
	} while (arch_now_ns() < until);
	return seen;
}
