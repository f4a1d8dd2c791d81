/* SPDX-License-Identifier: MIT */
/*
 * The latency measurement's shared area (PLUGVM_FEATURE_LATENCY): the guest's cyclictest-
 * style threads (guest/apps/cyclic.c) publish live statistics in their RAM, and plugvm reads
 * them while the guest runs, without a guest round trip (QMP query-latency).
 *
 * Protocol: the guest allocates a struct plugvm_latency_area (page-aligned, contiguous in
 * guest-physical memory), fills its header, then writes, with one 32-bit OUT to
 * PLUGVM_PORT_LATENCY, the guest-physical address of a struct plugvm_latency_register
 * (8-byte aligned, below 4 GiB) naming it. plugvm copies the registration once, checks it
 * (magic, version, size, the whole area in RAM) and from then on copies records out of the
 * area on demand. A second registration replaces the first.
 *
 * Each per-CPU record is a latch (as Linux's seqcount latch): two copies and a sequence
 * count, written by its measurement thread only. The writer increments `seq` (now odd) and
 * updates copy[0], then increments it again (even) and applies the same update to copy[1].
 * A reader loads `seq`, copies copy[seq & 1] (the one not being written), and keeps it if
 * `seq` is unchanged after: a writer stopped half-way (its vCPU descheduled by the host)
 * never keeps a reader from a consistent record at most one update old. Each outlier slot is
 * written by one guest CPU at a time under a sequence count that names what it holds: the
 * writer of outlier index i sets it to PLUGVM_LATENCY_OUTLIER_SEQ(i) - 1 (odd) while inside
 * and to PLUGVM_LATENCY_OUTLIER_SEQ(i) once done; a reader keeps slot i % OUTLIERS as index i
 * only with that value before and after its copy. So a slot whose index was claimed (the
 * area's outlier_seq passed it) but not yet written, or never written because its slot was
 * busy, or written since by a later lap, is not taken for index i. The host treats every value as hostile (bounds
 * checked after the copy).
 */
#ifndef PLUGVM_COMMON_LATENCY_H
#define PLUGVM_COMMON_LATENCY_H

#include <stdint.h>

#define PLUGVM_FEATURE_LATENCY	  (1u << 3) /* PLUGVM_PORT_LATENCY exists */
#define PLUGVM_PORT_LATENCY	  0xaf28
#define PLUGVM_PORT_LATENCY_LEN	  4
#define PLUGVM_LATENCY_MAGIC	  0x4e54414cu /* "LATN" */
#define PLUGVM_LATENCY_VERSION	  2u /* 2: per-CPU records are latches */
#define PLUGVM_LATENCY_MAX_CPUS	  16u /* measured CPUs (logical numbers below this) */
#define PLUGVM_LATENCY_HIST_MAX	  10000u /* 1 us buckets: the histogram limit's maximum */
#define PLUGVM_LATENCY_OUTLIERS	  256u /* the outlier ring */
#define PLUGVM_LATENCY_MAX_STATES 64u /* cpuhp states attributed */
#define PLUGVM_LATENCY_STATE_NAME 24u /* bytes, NUL-padded */
#define PLUGVM_LATENCY_STATE_LOG2 24u /* power-of-two buckets: [2^k, 2^(k+1)) us, k < 24 */

struct plugvm_latency_register {
	uint32_t magic; /* PLUGVM_LATENCY_MAGIC */
	uint32_t version; /* PLUGVM_LATENCY_VERSION */
	uint64_t area_gpa; /* the struct plugvm_latency_area */
	uint64_t area_bytes; /* sizeof(struct plugvm_latency_area) */
	uint64_t reserved; /* 0 */
};
_Static_assert(sizeof(struct plugvm_latency_register) == 32, "latency registration is 32 bytes");

/* struct plugvm_latency_cpu.flags */
#define PLUGVM_LATENCY_CPU_USED (1u << 0) /* a measurement thread exists for this CPU */

/* One measured CPU's figures (slot = logical CPU number): one copy of its latch. */
struct plugvm_latency_cpu {
	uint32_t flags; /* PLUGVM_LATENCY_CPU_* */
	uint32_t prio; /* the thread's priority */
	uint64_t count; /* samples (periods missed by a late wake-up are not samples) */
	uint64_t missed; /* periods skipped because a wake-up came after the next deadline */
	uint64_t min_ns, max_ns, sum_ns, act_ns; /* act: the last sample */
	uint64_t overflows; /* samples at or beyond hist_us */
	uint64_t parks; /* times its CPU went away under it */
	uint64_t parked_ns; /* the waits of the periods its CPU went away in, in total */
	uint64_t elapsed_ns; /* time accounted: (count + missed) * interval + parked_ns */
	uint64_t outliers; /* samples above the threshold */
	uint64_t log2[PLUGVM_LATENCY_STATE_LOG2]; /* [2^k, 2^(k+1)) us (k = 0 also < 1 us) */
	uint32_t hist[PLUGVM_LATENCY_HIST_MAX]; /* hist[k]: samples in [k, k+1) us, k < hist_us */
};
_Static_assert(sizeof(struct plugvm_latency_cpu) ==
		   96 + 8 * PLUGVM_LATENCY_STATE_LOG2 + 4 * PLUGVM_LATENCY_HIST_MAX,
	       "latency record layout");

/* A measured CPU's record, written only by its measurement thread (see the protocol above). */
struct plugvm_latency_latch {
	uint32_t seq; /* odd: copy[0] is being written, read copy[1]; even: read copy[0] */
	uint32_t reserved;
	struct plugvm_latency_cpu copy[2]; /* equal whenever no update is in progress */
};
_Static_assert(sizeof(struct plugvm_latency_latch) == 8 + 2 * sizeof(struct plugvm_latency_cpu),
	       "latency latch layout");

/* struct plugvm_latency_outlier.flags */
#define PLUGVM_LATENCY_OUT_UNPARKED (1u << 0) /* first sample after its CPU came back */

/*
 * A sample above the threshold and what was going on: for every CPU below
 * PLUGVM_LATENCY_MAX_CPUS, the cpuhp callback it was running when the thread woke, else the
 * last one it started while the thread waited (state + 1 in the low 15 bits of hp[cpu], bit
 * 15 set for a tear-down; 0: none). Claimed by an atomic increment
 * of the area's outlier_seq (slot = the old value modulo PLUGVM_LATENCY_OUTLIERS).
 */
#define PLUGVM_LATENCY_OUTLIER_SEQ(i) ((uint32_t)((i) / PLUGVM_LATENCY_OUTLIERS * 2 + 2))
struct plugvm_latency_outlier {
	uint32_t seq;
	uint32_t cpu; /* the measured CPU */
	uint32_t flags; /* PLUGVM_LATENCY_OUT_* */
	uint32_t irqs; /* interrupts its CPU took since the previous sample */
	uint64_t latency_ns;
	uint64_t when_ns; /* the intended wake-up, ns since guest boot */
	uint16_t hp[PLUGVM_LATENCY_MAX_CPUS];
};
_Static_assert(sizeof(struct plugvm_latency_outlier) == 32 + 2 * PLUGVM_LATENCY_MAX_CPUS,
	       "latency outlier layout");
#define PLUGVM_LATENCY_HP_DOWN 0x8000u

/*
 * Samples for which a cpuhp state ran on some CPU (as an outlier's hp[]: at wake-up, or
 * started during the wait), updated with atomic adds by every measured CPU (no sequence
 * count: each field is one aligned 8-byte word).
 */
struct plugvm_latency_state {
	char name[PLUGVM_LATENCY_STATE_NAME]; /* written once at registration */
	uint64_t count;
	uint64_t max_ns;
	uint64_t log2[PLUGVM_LATENCY_STATE_LOG2]; /* [2^k, 2^(k+1)) us; k = 0 also holds < 1 us */
};
_Static_assert(sizeof(struct plugvm_latency_state) == 40 + 8 * PLUGVM_LATENCY_STATE_LOG2,
	       "latency state layout");

/* struct plugvm_latency_area.flags */
#define PLUGVM_LATENCY_F_RT	 (1u << 0) /* the guest's RT build (real per-CPU local_lock) */
#define PLUGVM_LATENCY_F_STARTED (1u << 1) /* every measurement thread and stress started */

struct plugvm_latency_area {
	uint32_t magic; /* PLUGVM_LATENCY_MAGIC */
	uint32_t version; /* PLUGVM_LATENCY_VERSION */
	uint32_t interval_us; /* the measurement period */
	uint32_t hist_us; /* histogram limit: buckets 0 .. hist_us - 1 */
	uint32_t threshold_us; /* outlier threshold (0: none) */
	uint32_t nr_states; /* entries of states[] in use */
	uint64_t tsc_khz; /* the guest's TSC rate (latencies are from the TSC) */
	uint64_t outlier_seq; /* outliers ever recorded */
	uint32_t flags; /* PLUGVM_LATENCY_F_* */
	uint32_t reserved32;
	uint64_t reserved[3];
	struct plugvm_latency_outlier outliers[PLUGVM_LATENCY_OUTLIERS];
	struct plugvm_latency_state states[PLUGVM_LATENCY_MAX_STATES];
	struct plugvm_latency_latch cpus[PLUGVM_LATENCY_MAX_CPUS];
};
_Static_assert(sizeof(struct plugvm_latency_area) ==
		   72 + PLUGVM_LATENCY_OUTLIERS * sizeof(struct plugvm_latency_outlier) +
		       PLUGVM_LATENCY_MAX_STATES * sizeof(struct plugvm_latency_state) +
		       PLUGVM_LATENCY_MAX_CPUS * sizeof(struct plugvm_latency_latch),
	       "latency area layout");

#endif
