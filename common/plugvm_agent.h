/* SPDX-License-Identifier: MIT */
/*
 * The agent channel (virtio slot PLUGVM_VIRTIO_SLOT_AGENT, see plugvm_virtio.h): what
 * ACPI cannot say. The host asks the guest's agent thread to move a CPU to any cpuhp
 * state, to fail a state, for statistics, to run a workload; the guest answers and also
 * reports events on its own: cpuhp callbacks a CPU runs (the states that do something;
 * markers have none) while the host asked for them with TRACE, and those of the CPU a
 * SET_TARGET moves; and lock-validator warnings. Events flow from the agent's HELLO on
 * (after the boot-time bring-up); a new session starts with TRACE off.
 *
 * Framing: both directions carry a byte stream of fixed-size messages of
 * PLUGVM_AGENT_MSG_SIZE bytes (little-endian, the layouts below). A receiver that finds
 * no PLUGVM_AGENT_MAGIC at a message boundary drops bytes until the magic, counting the
 * damage; a message with an unknown type, a wrong version or a `len` beyond the payload
 * gets a reply with status PLUGVM_AGENT_EPROTO (requests) or is dropped (replies, events).
 *
 * Requests carry a host-chosen `id`, echoed by the reply (flags PLUGVM_AGENT_F_REPLY).
 * The guest answers requests in order, one at a time; SET_TARGET replies only when the CPU
 * got there or rolled back, after the STATE events of that transition.
 * Status values are negated Linux errno numbers (0 = success).
 */
#ifndef PLUGVM_COMMON_AGENT_H
#define PLUGVM_COMMON_AGENT_H

#include <stdint.h>

#define PLUGVM_AGENT_MAGIC    0x544e4741u /* "AGNT" */
#define PLUGVM_AGENT_VERSION  1u
#define PLUGVM_AGENT_MSG_SIZE 512u

#define PLUGVM_AGENT_F_REPLY 0x1u /* answers the request with the same id */
#define PLUGVM_AGENT_F_EVENT 0x2u /* unsolicited, from the guest; id 0 */

/* Requests (host to guest); the reply has the same type. */
#define PLUGVM_AGENT_HELLO	    1 /* -> plugvm_agent_hello (also sent as an event at start) */
#define PLUGVM_AGENT_LIST_STATES    2 /* plugvm_agent_index -> plugvm_agent_states */
#define PLUGVM_AGENT_GET_CPUS	    3 /* plugvm_agent_index -> plugvm_agent_cpus */
#define PLUGVM_AGENT_SET_TARGET	    4 /* plugvm_agent_cpu_state -> plugvm_agent_target_done */
#define PLUGVM_AGENT_FAIL	    5 /* plugvm_agent_cpu_state (state -1 clears) -> nothing */
#define PLUGVM_AGENT_TIMER_STATS    6 /* plugvm_agent_index (first = cpu) -> _timer_stats */
#define PLUGVM_AGENT_SCHED_STATS    7 /* plugvm_agent_index (first = cpu) -> _sched_stats */
#define PLUGVM_AGENT_LOCK_STATS	    8 /* nothing -> plugvm_agent_lock_stats */
#define PLUGVM_AGENT_WORKLOAD_START 9 /* plugvm_agent_workload -> plugvm_agent_workload_id */
#define PLUGVM_AGENT_WORKLOAD_STOP  10 /* plugvm_agent_workload_id -> _workload_result */
#define PLUGVM_AGENT_TRACE	    11 /* plugvm_agent_trace -> nothing (STATE events on/off) */
/* Events (guest to host, flags PLUGVM_AGENT_F_EVENT). */
#define PLUGVM_AGENT_EV_STATE	0x100 /* plugvm_agent_ev_state */
#define PLUGVM_AGENT_EV_LOCKDEP 0x101 /* plugvm_agent_ev_lockdep */

/* Status values (negated Linux errno). */
#define PLUGVM_AGENT_OK	    0
#define PLUGVM_AGENT_EIO    (-5) /* a state's callback failed: rolled back */
#define PLUGVM_AGENT_EBUSY  (-16) /* e.g. a workload already running */
#define PLUGVM_AGENT_ENODEV (-19) /* CPU not present */
#define PLUGVM_AGENT_EINVAL (-22) /* bad CPU, state or argument */
#define PLUGVM_AGENT_ENOSPC (-28)
#define PLUGVM_AGENT_EPROTO (-71) /* malformed message */
#define PLUGVM_AGENT_ENOSYS (-38) /* unknown request type */

struct plugvm_agent_hdr {
	uint32_t magic; /* PLUGVM_AGENT_MAGIC */
	uint16_t version; /* PLUGVM_AGENT_VERSION */
	uint16_t type; /* PLUGVM_AGENT_* */
	uint32_t id; /* request id, echoed in the reply; 0 in events */
	int32_t status; /* replies: PLUGVM_AGENT_OK or an error; else 0 */
	uint32_t len; /* payload bytes that count (<= PLUGVM_AGENT_PAYLOAD) */
	uint32_t flags; /* PLUGVM_AGENT_F_* */
};
_Static_assert(sizeof(struct plugvm_agent_hdr) == 24, "agent header is 24 bytes");

#define PLUGVM_AGENT_PAYLOAD (PLUGVM_AGENT_MSG_SIZE - sizeof(struct plugvm_agent_hdr))

struct plugvm_agent_msg {
	struct plugvm_agent_hdr hdr;
	uint8_t payload[PLUGVM_AGENT_MSG_SIZE - sizeof(struct plugvm_agent_hdr)];
};
_Static_assert(sizeof(struct plugvm_agent_msg) == PLUGVM_AGENT_MSG_SIZE, "agent message size");

/* ---- payloads ---- */

struct plugvm_agent_hello {
	uint32_t version; /* PLUGVM_AGENT_VERSION */
	uint32_t nr_cpus; /* possible CPUs */
	uint32_t nr_states; /* cpuhp states (ids 0 .. nr_states - 1) */
	uint32_t online_state; /* the id of the fully online state */
	uint32_t rt; /* 1 for the RT build */
	uint32_t reserved;
};
_Static_assert(sizeof(struct plugvm_agent_hello) == 24, "hello");

/* TRACE: every cpuhp callback as a STATE event (on = 1) or only SET_TARGET's (on = 0). */
struct plugvm_agent_trace {
	uint32_t on; /* 0 or 1 */
	uint32_t reserved; /* 0 */
};
_Static_assert(sizeof(struct plugvm_agent_trace) == 8, "trace");

/* A request for entries from `first` on (or for one CPU: first = the CPU). */
struct plugvm_agent_index {
	uint32_t first;
	uint32_t reserved;
};
_Static_assert(sizeof(struct plugvm_agent_index) == 8, "index");

#define PLUGVM_AGENT_SECTION_PREPARE  0
#define PLUGVM_AGENT_SECTION_STARTING 1
#define PLUGVM_AGENT_SECTION_ONLINE   2

#define PLUGVM_AGENT_STATE_CAN_REST 0x1 /* a valid target */
#define PLUGVM_AGENT_STATE_CAN_FAIL 0x2 /* cpuhp-fail accepts it */
#define PLUGVM_AGENT_STATE_DYNAMIC  0x4 /* a dynamic slot (free: name "") */

#define PLUGVM_AGENT_NAME_LEN 24

struct plugvm_agent_state {
	int32_t id;
	uint8_t section; /* PLUGVM_AGENT_SECTION_* */
	uint8_t flags; /* PLUGVM_AGENT_STATE_* */
	uint16_t reserved;
	char name[PLUGVM_AGENT_NAME_LEN]; /* NUL-terminated */
};
_Static_assert(sizeof(struct plugvm_agent_state) == 32, "state entry");

#define PLUGVM_AGENT_STATES_MAX 14
struct plugvm_agent_states {
	uint32_t total; /* states in the table */
	uint32_t count; /* entries below, for ids first .. first + count - 1 */
	struct plugvm_agent_state st[PLUGVM_AGENT_STATES_MAX];
};
_Static_assert(sizeof(struct plugvm_agent_states) <= PLUGVM_AGENT_PAYLOAD, "states fit");

#define PLUGVM_AGENT_CPU_PRESENT 0x1
#define PLUGVM_AGENT_CPU_ONLINE	 0x2 /* in cpu_online_mask */
#define PLUGVM_AGENT_CPU_ACTIVE	 0x4 /* threads may be placed on it */

struct plugvm_agent_cpu {
	uint16_t cpu;
	uint8_t flags; /* PLUGVM_AGENT_CPU_* */
	int8_t state; /* current cpuhp state */
	int8_t target; /* target cpuhp state */
	int8_t failed_state; /* where the last transition failed, or -1 */
	int16_t last_error; /* its error, or 0 */
	int8_t fail_inject; /* state armed by FAIL, or -1 */
	uint8_t reserved[7];
};
_Static_assert(sizeof(struct plugvm_agent_cpu) == 16, "cpu entry");

#define PLUGVM_AGENT_CPUS_MAX 29
struct plugvm_agent_cpus {
	uint32_t nr_cpus; /* possible CPUs */
	uint32_t count; /* entries below, for CPUs first .. first + count - 1 */
	struct plugvm_agent_cpu cpu[PLUGVM_AGENT_CPUS_MAX];
};
_Static_assert(sizeof(struct plugvm_agent_cpus) <= PLUGVM_AGENT_PAYLOAD, "cpus fit");

struct plugvm_agent_cpu_state {
	uint32_t cpu;
	int32_t state; /* a state id */
};
_Static_assert(sizeof(struct plugvm_agent_cpu_state) == 8, "cpu state");

struct plugvm_agent_target_done {
	struct plugvm_agent_cpu cpu; /* where the CPU is now */
	uint64_t ns; /* the whole transition, guest clock */
	int32_t from; /* the state it started in */
	int32_t failed_state; /* on failure: the state that failed */
};
_Static_assert(sizeof(struct plugvm_agent_target_done) == 32, "target done");

#define PLUGVM_AGENT_WHEEL_LEVELS 9
struct plugvm_agent_wheel_level {
	uint64_t added, cancelled, expired, lateness_sum, lateness_max;
};
struct plugvm_agent_timer_stats {
	uint32_t cpu;
	uint32_t levels; /* PLUGVM_AGENT_WHEEL_LEVELS */
	uint64_t ticks, idle_tick_stops, softirqs, callbacks, remote_ops, migrated_in;
	uint64_t clamped; /* timers beyond the wheel's range, put in its last bucket */
	uint64_t jiffy_ns; /* one wheel tick (lateness is in ticks) */
	struct plugvm_agent_wheel_level lvl[PLUGVM_AGENT_WHEEL_LEVELS];
};
_Static_assert(sizeof(struct plugvm_agent_timer_stats) <= PLUGVM_AGENT_PAYLOAD, "timers fit");

struct plugvm_agent_sched_stats {
	uint32_t cpu;
	uint32_t nr_running; /* runnable threads queued, not counting the running one */
	uint64_t switches, preemptions, wakeups_local, wakeups_remote, migrations_in,
	    migrations_out, idle_entries, resched_ipis;
};
_Static_assert(sizeof(struct plugvm_agent_sched_stats) == 72, "sched stats");

struct plugvm_agent_lock_stats {
	uint64_t acquisitions, releases, inversions, not_held, held, bad_release, recursion;
	uint32_t classes, dependencies, max_depth;
	uint32_t enabled; /* 0: the validator is off (or not built in) */
	uint64_t reports; /* EV_LOCKDEP events sent */
};
_Static_assert(sizeof(struct plugvm_agent_lock_stats) == 80, "lock stats");

#define PLUGVM_AGENT_WORK_HOG	 1 /* CPU-bound threads that sleep briefly between bursts */
#define PLUGVM_AGENT_WORK_TIMERS 2 /* timer storm: mostly cancelled timeouts */
/*
 * Alone, not with the others: real-time threads pinned to `cpu` that hold it (the guest
 * refuses to take it down, its load record says PLUGVM_LOAD_HELD) until the workload stops,
 * each waking every period.
 */
#define PLUGVM_AGENT_WORK_HOLD 4

struct plugvm_agent_workload {
	uint32_t kind; /* PLUGVM_AGENT_WORK_* bits, or PLUGVM_AGENT_WORK_HOLD alone */
	uint32_t threads; /* 1 .. 64 */
	uint32_t period_us; /* hog: sleep between bursts; timers: re-arm period; hold: wake-ups */
	uint32_t cpu; /* hold: the CPU held (an active one); 0 for the other kinds */
};
_Static_assert(sizeof(struct plugvm_agent_workload) == 16, "workload");

struct plugvm_agent_workload_id {
	uint32_t id;
	uint32_t reserved;
};
_Static_assert(sizeof(struct plugvm_agent_workload_id) == 8, "workload id");

struct plugvm_agent_workload_result {
	uint32_t id;
	uint32_t threads;
	uint64_t ns; /* how long it ran */
	uint64_t iterations; /* hog bursts */
	uint64_t timers_armed, timers_cancelled, timers_fired;
};
_Static_assert(sizeof(struct plugvm_agent_workload_result) == 48, "workload result");

struct plugvm_agent_ev_state {
	uint32_t cpu;
	int32_t state;
	uint32_t up; /* 1: startup callback, 0: teardown */
	int32_t result; /* the callback's return (0, or the error that starts a rollback) */
	uint64_t ns;
};
_Static_assert(sizeof(struct plugvm_agent_ev_state) == 24, "state event");

#define PLUGVM_AGENT_LOCK_NAME 48
struct plugvm_agent_ev_lockdep {
	uint32_t
	    type; /* enum lockdep_report_type: 0 inversion, 1 recursion, 2 bad release, 3 not held, 4 held, 5-7 validator off */
	uint32_t cpu;
	char lock[PLUGVM_AGENT_LOCK_NAME]; /* NUL-terminated */
	char held[PLUGVM_AGENT_LOCK_NAME]; /* the other lock involved, or "" */
};
_Static_assert(sizeof(struct plugvm_agent_ev_lockdep) == 104, "lockdep event");

#endif
