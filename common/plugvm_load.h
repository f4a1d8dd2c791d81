/* SPDX-License-Identifier: MIT */
/*
 * The guest's load, published for plugvm's vCPU autoscaling (PLUGVM_FEATURE_LOAD): each
 * guest CPU keeps running totals of its busy time and of the time a runnable thread waited
 * for it in the guest's RAM, and plugvm reads them at its own sampling rate, without a guest
 * round trip and without an exit. The guest cannot flood the VMM through it (nothing the
 * guest writes makes plugvm act sooner), and everything it holds is hostile: plugvm checks
 * each figure and confirms busy time against the host's own measure of the vCPU thread
 * (docs/autoscale.md).
 *
 * Protocol: the guest allocates an array of struct plugvm_load_latch, one per possible CPU
 * (index: APIC ID; at least plugvm's maxcpus of them), 64-byte aligned and contiguous in
 * guest-physical memory, then writes, with one 32-bit OUT to PLUGVM_PORT_LOAD, the guest-
 * physical address of a struct plugvm_load_register (8-byte aligned, below 4 GiB) naming it.
 * plugvm copies the registration once, checks it (magic, version, the whole area in RAM,
 * reserved 0) and writes `status` back before the OUT completes. A second registration
 * replaces the first; area_gpa 0 withdraws it. A system reset withdraws it too.
 *
 * Each record is a latch (as plugvm_latency.h's): two copies and a sequence count, written
 * only by the CPU it describes. The writer increments `seq` (now odd) and updates copy[0],
 * then increments it again (even) and applies the same update to copy[1]. A reader loads
 * `seq`, copies copy[seq & 1], and keeps it if `seq` is unchanged after. A CPU updates its
 * record at least every 10 ms (at a scheduler tick) while it is busy, and when it enters and
 * leaves idle; an idle CPU without ticks leaves its record alone (now_ns then lags, and plugvm counts
 * the time since as idle when nr_running is 0).
 */
#ifndef PLUGVM_COMMON_LOAD_H
#define PLUGVM_COMMON_LOAD_H

#include <stdint.h>

#define PLUGVM_FEATURE_LOAD  (1u << 5) /* PLUGVM_PORT_LOAD exists */
#define PLUGVM_PORT_LOAD     0xaf30
#define PLUGVM_PORT_LOAD_LEN 4
#define PLUGVM_LOAD_MAGIC    0x44414f4cu /* "LOAD" */
#define PLUGVM_LOAD_VERSION  1u

/* struct plugvm_load_register.status, written by plugvm */
#define PLUGVM_LOAD_OK	   0u
#define PLUGVM_LOAD_EINVAL 1u /* magic, version, count or reserved */
#define PLUGVM_LOAD_EADDR  2u /* the area is not 64-byte aligned RAM of count records */

struct plugvm_load_register {
	uint32_t magic; /* PLUGVM_LOAD_MAGIC */
	uint32_t version; /* PLUGVM_LOAD_VERSION */
	uint64_t area_gpa; /* the struct plugvm_load_area; 0 withdraws */
	uint32_t count; /* records in the area: at least plugvm's maxcpus, at most 1024 */
	uint32_t status; /* written by plugvm: PLUGVM_LOAD_OK or an error */
	uint64_t reserved; /* 0 */
};
_Static_assert(sizeof(struct plugvm_load_register) == 32, "load registration is 32 bytes");

/* struct plugvm_load_cpu.flags */
#define PLUGVM_LOAD_ONLINE (1u << 0) /* the CPU is online in the guest */
/*
 * A thread that holds its CPU runs here (pinned to it and real-time, or told to keep it):
 * the guest refuses to take this CPU down, and the autoscaler does not ask it to.
 */
#define PLUGVM_LOAD_HELD (1u << 1)

/* One CPU's figures: one copy of its latch. Times in ns of the guest's monotonic clock. */
struct plugvm_load_cpu {
	uint32_t flags; /* PLUGVM_LOAD_* */
	uint32_t nr_running; /* runnable threads here, the running one included, idle not */
	uint64_t now_ns; /* when this copy was written */
	uint64_t busy_ns; /* total time not idle, since the guest booted */
	uint64_t wait_ns; /* total time with at least one runnable thread waiting here ("some") */
};
_Static_assert(sizeof(struct plugvm_load_cpu) == 32, "load record is 32 bytes");

struct plugvm_load_latch {
	uint32_t seq; /* odd: copy[0] is being written, read copy[1]; even: read copy[0] */
	uint32_t reserved;
	uint64_t pad;
	struct plugvm_load_cpu copy[2];
	uint64_t pad2[6]; /* two cache lines: no CPU shares a line with another's record */
};
_Static_assert(sizeof(struct plugvm_load_latch) == 128, "load latch is 128 bytes");

#endif
