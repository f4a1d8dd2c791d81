// SPDX-License-Identifier: MIT
/*
 * The vCPU lifecycle (see cpus.h): the slots, their state machine under one lock, the CPU
 * hotplug devices' callbacks, and the main loop's share (ejects, removal deadlines).
 * Per-slot fields a vCPU thread touches (eject_pending, request_ns, unplug_refused; it only
 * reads unplug_deadline) are atomics it only marks; the main thread acts on them.
 */
#include "cpus.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "devices/acpi_cpu_hotplug.h"
#include "devices/acpi_pm.h"
#include "devices/direct_start.h"
#include "devices/hotplug_pv.h"
#include "devices/hotplug_report.h"
#include "exitcode.h"
#include "log.h"
#include "cpus_internal.h"
#include "vcpu.h"
#include "vm.h"
#include "x86/acpi_layout.h"

/*
 * gcc 12's -fanalyzer loses the ids strdup()ed into the slots reached through c and reports
 * them as leaked (as in control.c); the ASan run of the integration tests (make check)
 * checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

static void emit(struct cpus *c, const struct cpus_event *e)
{
	if (c->event_fn)
		c->event_fn(c->event_opaque, e);
}

/* Hotplug activity now: spare vCPUs wait for CPUS_SPARE_QUIET_MS without any. */
static void note_activity(struct cpus *c)
{
	atomic_store(&c->busy_ns, clock_now_ns());
}

static void wake_main_loop(struct cpus *c)
{
	uint64_t one = 1;

	if (write(c->wake_fd, &one, sizeof(one)) < 0)
		log_error("cpus: eventfd: %s", strerror(errno));
}

static void set_state(struct cpus *c, struct cpu_slot *s, enum slot_state state)
{
	pthread_mutex_lock(&c->lock);
	atomic_store(&s->state, state);
	pthread_mutex_unlock(&c->lock);
}

/* The slot's id becomes `id` (owned; NULL: none), under the lock on_ost() reads it with. */
static void set_id(struct cpus *c, struct cpu_slot *s, char *id)
{
	char *old;

	pthread_mutex_lock(&c->lock);
	old = s->id;
	s->id = id;
	pthread_mutex_unlock(&c->lock);
	free(old);
}

/* ---- what the guest does, through the devices (vCPU threads) -------------------------- */

static void raise_gpe(void *opaque)
{
	struct cpus *c = opaque;

	acpi_pm_raise_gpe(c->vm, c->block_gpe_bit);
}

/* The block's event once the guest listens through the paravirt port: its notification. */
static void notify_pv(void *opaque)
{
	struct cpus *c = opaque;

	hotplug_pv_notify(&c->pv_port);
}

static void send_msi(void *opaque, uint32_t vector, uint32_t dest)
{
	struct cpus *c = opaque;
	int ret = kvm_signal_msi(&c->vm->kvm, dest, vector);

	if (ret)
		log_error("cpu-hotplug: KVM_SIGNAL_MSI: %s", strerror(-ret));
}

static void on_eject(void *opaque, unsigned slot)
{
	struct cpus *c = opaque;

	atomic_store(&c->slots[slot].eject_pending, true);
	note_activity(c);
	wake_main_loop(c);
}

static void on_ost(void *opaque, unsigned slot, uint32_t source, uint32_t status)
{
	struct cpus *c = opaque;
	struct cpu_slot *s = &c->slots[slot];
	struct cpus_event e = { .type = CPUS_EVENT_OST, .slot = slot };
	uint64_t d = atomic_load(&s->unplug_deadline);
	char id[CPUS_MAX_ID + 1] = "";

	note_activity(c);
	/* QEMU's ACPIOSTInfo names the device while the slot holds it (not once ejected). */
	pthread_mutex_lock(&c->lock);
	if (s->id && atomic_load(&s->state) == SLOT_RUNNING && !atomic_load(&s->eject_pending))
		snprintf(id, sizeof(id), "%s", s->id);
	pthread_mutex_unlock(&c->lock);
	e.id = id[0] ? id : NULL;
	/*
	 * _OST of an eject request: the guest said no. Marked only while a request is in
	 * flight, once per request (a hostile guest may answer any number of times): the main
	 * loop, woken after the mark, reports it, as only it may read the CPU's id.
	 */
	if (source == 3 && status != 0 && d && atomic_exchange(&s->unplug_refused, d) != d)
		wake_main_loop(c);
	e.ost_source = source;
	e.ost_status = status;
	emit(c, &e);
}

static void on_report(void *opaque, unsigned slot, bool online, int32_t result, uint64_t guest_ns)
{
	struct cpus *c = opaque;
	uint64_t since = atomic_exchange(&c->slots[slot].request_ns, 0);
	struct cpus_event e = { .type = CPUS_EVENT_REPORT,
				.slot = slot,
				.online = online,
				.result = result,
				.guest_ns = guest_ns };

	if (since) {
		e.requested = true;
		e.host_ns = clock_now_ns() - since;
	}
	note_activity(c);
	emit(c, &e);
}

static bool on_running(void *opaque, unsigned slot)
{
	struct cpus *c = opaque;

	return atomic_load(&c->slots[slot].state) == SLOT_RUNNING;
}

static int on_direct_start(void *opaque, unsigned slot, const struct long_mode_start *r)
{
	struct cpus *c = opaque;
	struct cpu_slot *s = &c->slots[slot];
	int ret = -EINVAL;

	note_activity(c); /* a CPU starting, at boot too: no spare vCPU is made beside it */
	/* Under the lock: the thread stays RUNNING, so it is not joined before the kick. */
	pthread_mutex_lock(&c->lock);
	if (atomic_load(&s->state) == SLOT_RUNNING) {
		vcpu_post_start(&s->vcpu, r);
		ret = 0;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

/* ---- the slots' life (main thread) ----------------------------------------------------- */

int cpus_create(struct vm *vm)
{
	const struct acpi_cpu_hotplug_ops block_ops = {
		.raise_gpe = raise_gpe, .eject = on_eject, .ost = on_ost, .notify_pv = notify_pv
	};
	struct acpi_cpu_hotplug_ops bo = block_ops;
	struct direct_start_ops so = { .running = on_running, .start = on_direct_start };
	struct hotplug_report_ops ro = { .report = on_report };
	struct hotplug_pv_ops po = { .notify = send_msi, .report = on_report };
	const struct acpi_layout *l = acpi_layout_of(vm->cfg->machine);
	struct cpus *c;
	unsigned i;
	int ret;

	if (!l) {
		log_error("cpu-hotplug: no port layout for machine %d", (int)vm->cfg->machine);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->block_gpe_bit = l->cpuhp_gpe_bit;
	c->vm = vm;
	c->nr = vm->cfg->max_cpus;
	c->spares_wanted = vm->cfg->spare_vcpus;
	c->spare_quiet_ns = CPUS_SPARE_QUIET_MS * 1000000ull;
	c->wake_fd = -1;
	pthread_mutex_init(&c->lock, NULL);
	vm->cpus = c;
	c->slots = calloc(c->nr, sizeof(*c->slots));
	if (!c->slots) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = vcpu_gate_init(&c->gate);
	if (ret)
		goto fail;
	c->gate_ready = true;
	for (i = 0; i < c->nr; i++) {
		c->slots[i].vcpu.vm = vm;
		c->slots[i].vcpu.id = (int)i;
		c->slots[i].vcpu.fd = -1;
		c->slots[i].vcpu.stats_fd = -1;
		c->slots[i].vcpu.gate = &c->gate;
	}
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		ret = -errno;
		goto fail;
	}
	bo.opaque = so.opaque = ro.opaque = po.opaque = c;
	ret = acpi_cpu_hotplug_init(&c->block, c->nr, vm->cfg->nr_cpus, &bo);
	if (!ret)
		ret = acpi_cpu_hotplug_attach(&c->block, &vm->pio, l->cpuhp_base);
	if (!ret)
		ret = hotplug_report_init(&c->report_port, vm, &ro);
	if (!ret)
		ret = direct_start_init(&c->start_port, vm, &so);
	if (!ret)
		ret = hotplug_pv_init(&c->pv_port, vm, &c->block, &po);
	if (ret)
		goto fail;
	return 0;
fail:
	log_error("cpu-hotplug: %s", strerror(-ret));
	cpus_destroy(c);
	vm->cpus = NULL;
	return ret;
}

void cpus_set_event_fn(struct cpus *c, void (*fn)(void *opaque, const struct cpus_event *e),
		       void *opaque)
{
	c->event_fn = fn;
	c->event_opaque = opaque;
}

int cpus_create_boot(struct cpus *c)
{
	unsigned i;
	int ret;

	for (i = 0; i < c->vm->cfg->nr_cpus; i++) {
		/* vCPU 0 enters the kernel; the others wait for INIT/SIPI. */
		ret = vcpu_create(&c->slots[i].vcpu, c->vm, (int)i, i == 0);
		if (ret)
			return ret;
		set_state(c, &c->slots[i], SLOT_PARKED);
	}
	return 0;
}

/* A slot with a vCPU and no thread gets its thread. */
static int slot_start(struct cpus *c, struct cpu_slot *s)
{
	int ret = vcpu_start_thread(&s->vcpu, c->boot_started);

	if (!ret)
		set_state(c, s, SLOT_RUNNING);
	return ret;
}

/* RUNNING -> STOPPING: told to end, kicked, its start request dropped. */
static bool slot_stop(struct cpus *c, struct cpu_slot *s)
{
	bool stopping = false;

	pthread_mutex_lock(&c->lock);
	if (atomic_load(&s->state) == SLOT_RUNNING) {
		atomic_store(&s->state, SLOT_STOPPING);
		vcpu_drop_start(&s->vcpu);
		stopping = true;
	}
	pthread_mutex_unlock(&c->lock);
	/* STOPPING: no direct start kicks it any more, and only this thread joins it. */
	if (stopping)
		vcpu_kick_stop(&s->vcpu);
	return stopping;
}

/* STOPPING -> PARKED: the thread joined; KVM keeps the fd for the next add. */
static void slot_join(struct cpus *c, struct cpu_slot *s)
{
	if (atomic_load(&s->state) != SLOT_STOPPING)
		return;
	vcpu_join(&s->vcpu);
	set_state(c, s, SLOT_PARKED);
}

int cpus_start_boot(struct cpus *c, bool paused)
{
	unsigned i;

	if (c->started)
		return 0;
	c->started = true;
	/* -S: the threads exist (QMP lists them, as QEMU's) and wait at the gate. */
	c->run_state = paused ? CPUS_PRELAUNCH : CPUS_RUNNING;
	vcpu_gate_set(&c->gate, paused);
	for (i = 0; i < c->vm->cfg->nr_cpus; i++) {
		if (slot_start(c, &c->slots[i])) {
			vm_request_stop(c->vm, PLUGVM_EXIT_SETUP);
			return -1;
		}
	}
	c->boot_started = true;
	note_activity(c); /* the spare vCPUs come once the boot's bring-up is quiet */
	return 0;
}

enum cpus_run_state cpus_run_state(const struct cpus *c)
{
	return c->run_state;
}

/* Every running vCPU out of the guest, waiting at the (closed) gate. */
static int hold_all(struct cpus *c)
{
	struct timespec deadline;
	unsigned i;
	int ret = 0;

	for (i = 0; i < c->nr; i++)
		if (atomic_load(&c->slots[i].state) == SLOT_RUNNING)
			vcpu_kick(&c->slots[i].vcpu);
	/* Each leaves KVM_RUN within an exit; the bound is against a wedged host thread. */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += CPUS_PAUSE_TIMEOUT_MS / 1000;
	for (i = 0; i < c->nr && !ret; i++) {
		if (atomic_load(&c->slots[i].state) != SLOT_RUNNING)
			continue;
		ret = vcpu_wait_held(&c->slots[i].vcpu, &deadline);
		if (ret)
			log_error("vCPU %u: did not leave the guest within %d ms", i,
				  CPUS_PAUSE_TIMEOUT_MS);
	}
	return ret;
}

int cpus_pause(struct cpus *c)
{
	if (c->run_state != CPUS_RUNNING)
		return 0;
	vcpu_gate_set(&c->gate, true);
	c->run_state = CPUS_PAUSED;
	return hold_all(c);
}

int cpus_reset(struct cpus *c)
{
	unsigned i, nr_boot = c->vm->cfg->nr_cpus;
	int ret;

	if (!c->started || c->run_state == CPUS_RUNNING)
		return -EBUSY;
	ret = hold_all(c);
	if (ret)
		return ret;
	/* Hot-added CPUs go (parked, as at an eject); boot CPUs the guest removed come back. */
	for (i = 0; i < c->nr; i++) {
		struct cpu_slot *s = &c->slots[i];
		struct cpus_event e = { .type = CPUS_EVENT_DELETED, .slot = i };

		atomic_store(&s->eject_pending, false);
		atomic_store(&s->unplug_deadline, 0);
		atomic_store(&s->unplug_refused, 0);
		atomic_store(&s->request_ns, 0);
		if (i < nr_boot || atomic_load(&s->state) != SLOT_RUNNING)
			continue;
		if (slot_stop(c, s))
			slot_join(c, s);
		e.id = s->id;
		emit(c, &e);
		set_id(c, s, NULL);
	}
	hotplug_pv_reset(&c->pv_port);
	acpi_cpu_hotplug_reset(&c->block, nr_boot);
	for (i = 0; i < nr_boot; i++) {
		struct cpu_slot *s = &c->slots[i];

		ret = i == 0 ? vcpu_reset_for_boot(&s->vcpu) : vcpu_reset_for_sipi(&s->vcpu);
		if (!ret && atomic_load(&s->state) != SLOT_RUNNING)
			ret = slot_start(c, s); /* it waits at the gate */
		if (ret)
			return ret;
	}
	c->run_state = CPUS_PRELAUNCH; /* QEMU's state after a reset of a VM not running */
	return 0;
}

bool cpus_resume(struct cpus *c)
{
	if (c->run_state == CPUS_RUNNING)
		return false;
	c->run_state = CPUS_RUNNING;
	vcpu_gate_set(&c->gate, false);
	return true;
}

int cpus_add(struct cpus *c, unsigned slot, const char *id)
{
	struct cpu_slot *s;
	bool ahead;
	int ret;

	if (slot >= c->nr)
		return -EINVAL;
	s = &c->slots[slot];
	if (atomic_load(&s->state) == SLOT_RUNNING || atomic_load(&s->state) == SLOT_STOPPING ||
	    acpi_cpu_hotplug_present(&c->block, slot))
		return -EEXIST;
	if (vm_stopping(c->vm))
		return -ESHUTDOWN;
	/*
	 * A new fd, or a parked one: to the reset state an AP powers on in, waiting for
	 * INIT/SIPI. Setting the LAPIC state also makes KVM put the new APIC ID in its
	 * interrupt routing map, without which the guest's INIT/SIPI would not arrive.
	 */
	if (!vcpu_ready(&s->vcpu)) {
		ret = vcpu_create(&s->vcpu, c->vm, (int)slot, false);
		if (ret)
			return ret;
		set_state(c, s, SLOT_PARKED);
	}
	ret = vcpu_reset_for_sipi(&s->vcpu);
	if (!ret)
		ret = slot_start(c, s);
	if (ret)
		return ret;
	ahead = s->spare;
	if (ahead) {
		s->spare = false; /* the next comes once hotplug is quiet (create_spares()) */
		c->spares--;
	}
	note_activity(c);
	atomic_store(&s->request_ns, clock_now_ns());
	set_id(c, s, id ? strndup(id, CPUS_MAX_ID) : NULL); /* an ejected CPU's id went with it */
	ret = acpi_cpu_hotplug_plug(&c->block, slot);
	if (ret)
		log_warn("cpu-hotplug: slot %u: %s", slot, strerror(-ret));
	log_info("vCPU %u added%s%s%s", slot, id ? " as " : "", id ? id : "",
		 ahead ? " (created ahead)" : "");
	return 0;
}

int cpus_request_removal(struct cpus *c, unsigned slot)
{
	struct cpu_slot *s;
	int ret;

	if (slot >= c->nr || atomic_load(&c->slots[slot].state) != SLOT_RUNNING)
		return -ENODEV;
	s = &c->slots[slot];
	if (atomic_load(&s->unplug_deadline))
		return -EALREADY;
	ret = acpi_cpu_hotplug_unplug_request(&c->block, slot);
	if (ret)
		return ret;
	atomic_store(&s->request_ns, clock_now_ns());
	atomic_store(&s->unplug_deadline, clock_now_ns() + CPUS_UNPLUG_TIMEOUT_MS * 1000000ull);
	note_activity(c);
	return 0;
}

bool cpus_hotplug_listening(struct cpus *c)
{
	bool on;

	pthread_mutex_lock(&c->block.lock);
	on = c->block.modern;
	pthread_mutex_unlock(&c->block.lock);
	return on;
}

int cpus_wake_fd(const struct cpus *c)
{
	return c->wake_fd;
}

/* A spare vCPU is wanted and a slot may take one (create_spares()). */
static bool spare_wanted(const struct cpus *c)
{
	return c->boot_started && c->spares < c->spares_wanted && c->spare_scan < c->nr &&
	       !vm_stopping(c->vm);
}

/*
 * When the main loop is due to report slot s's removal: its deadline, or `now` once the
 * guest refused it; 0 with none in flight. Any thread.
 */
static uint64_t removal_due_ns(const struct cpu_slot *s, uint64_t now)
{
	uint64_t d = atomic_load(&s->unplug_deadline);

	if (d && atomic_load(&s->unplug_refused) == d)
		return now;
	return d;
}

int cpus_next_timeout_ms(const struct cpus *c)
{
	uint64_t now = clock_now_ns(), next = 0;
	unsigned i;

	if (spare_wanted(c))
		next = atomic_load(&c->busy_ns) + c->spare_quiet_ns;
	for (i = 0; i < c->nr; i++) {
		uint64_t d = removal_due_ns(&c->slots[i], now);

		if (d && (!next || d < next))
			next = d;
	}
	if (!next)
		return -1;
	return next <= now ? 0 : (int)((next - now) / 1000000 + 1);
}

/* Removals the guest refused or did not finish in time: reported once each. */
static void check_removals(struct cpus *c)
{
	uint64_t now = clock_now_ns();
	unsigned i;

	for (i = 0; i < c->nr; i++) {
		struct cpu_slot *s = &c->slots[i];
		uint64_t d = atomic_load(&s->unplug_deadline);
		bool refused = d && atomic_load(&s->unplug_refused) == d;
		struct cpus_event e = { .type = CPUS_EVENT_UNPLUG_FAILED, .slot = i };

		/* Claimed by the exchange: each removal is reported once. */
		if (!d || (!refused && d > now) ||
		    !atomic_compare_exchange_strong(&s->unplug_deadline, &d, 0))
			continue;
		if (refused)
			log_warn("vCPU %u: the guest refused its removal", i);
		else
			log_warn("vCPU %u: the guest did not complete its removal within %d ms", i,
				 CPUS_UNPLUG_TIMEOUT_MS);
		e.id = s->id;
		emit(c, &e);
	}
}

/* The guest ejected these: their threads end, KVM keeps the fds (parked for reuse). */
static void carry_out_ejects(struct cpus *c)
{
	unsigned i;

	for (i = 0; i < c->nr; i++) {
		struct cpu_slot *s = &c->slots[i];
		struct cpus_event e = { .type = CPUS_EVENT_DELETED, .slot = i };

		if (!atomic_exchange(&s->eject_pending, false))
			continue;
		if (slot_stop(c, s))
			slot_join(c, s);
		log_info("vCPU %u ejected by the guest: parked", i);
		e.id = s->id;
		emit(c, &e);
		atomic_store(&s->unplug_deadline, 0);
		set_id(c, s, NULL);
	}
}

/*
 * --spare-vcpus: keep that many vCPUs created (fd, kvm_run, statistics fd, CPUID) and parked
 * for the lowest slots that never had one, so that a hot-add there skips the creation
 * (most of the VMM's part of an add: bench/hotplug/reply measures it). Creating one costs the host
 * about as much CPU as an add saves, so it is done only once hotplug has been quiet for
 * CPUS_SPARE_QUIET_MS (no add, removal, direct start, eject, _OST or report), never beside
 * an operation in flight, whose vCPUs and client it would take host CPU from: one per pass
 * of the main loop, which comes back at once for the next while it stays quiet. A failure (KVM's or
 * the host's limit) ends the refills, with a warning: adds then create their vCPUs as
 * without spares (a vCPU KVM created before its setup failed keeps its fd, and its add
 * finishes the setup).
 */
static void create_spares(struct cpus *c)
{
	if (!spare_wanted(c) || clock_now_ns() - atomic_load(&c->busy_ns) < c->spare_quiet_ns)
		return;
	/* A slot's vCPU, once created, stays until the VM ends: the scan never goes back. */
	for (; c->spare_scan < c->nr; c->spare_scan++) {
		unsigned i = c->spare_scan;
		struct cpu_slot *s = &c->slots[i];

		if (s->vcpu.fd >= 0)
			continue;
		if (vcpu_create(&s->vcpu, c->vm, (int)i, false) || vcpu_set_cpuid(&s->vcpu)) {
			/* Ready but CPUID unset: parked; its thread sets it at its add. */
			if (vcpu_ready(&s->vcpu))
				set_state(c, s, SLOT_PARKED);
			log_warn("vCPU %u: not created ahead of a hot-add; no more spare vCPUs", i);
			c->spares_wanted = 0;
			return;
		}
		set_state(c, s, SLOT_PARKED);
		s->spare = true;
		c->spares++;
		log_debug("vCPU %u: created ahead of a hot-add (spare)", i);
		return;
	}
}

void cpus_set_spare_quiet_ms(struct cpus *c, unsigned ms)
{
	c->spare_quiet_ns = ms * 1000000ull;
}

void cpus_process(struct cpus *c)
{
	uint64_t n;

	if (read(c->wake_fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_error("cpus: eventfd: %s", strerror(errno));
	check_removals(c);
	carry_out_ejects(c);
	create_spares(c); /* after the ejects: one just carried out counts as activity */
}

void cpus_stop_all(struct cpus *c)
{
	unsigned i;

	/* Kick every vCPU first, then join: the exits overlap. */
	for (i = 0; i < c->nr; i++)
		slot_stop(c, &c->slots[i]);
	for (i = 0; i < c->nr; i++)
		slot_join(c, &c->slots[i]);
}

void cpus_destroy(struct cpus *c)
{
	unsigned i;

	if (!c)
		return;
	if (c->slots) {
		cpus_stop_all(c);
		for (i = 0; i < c->nr; i++) {
			if (c->slots[i].vcpu.fd >= 0)
				vcpu_destroy(&c->slots[i].vcpu);
			free(c->slots[i].id);
		}
	}
	acpi_cpu_hotplug_exit(&c->block);
	if (c->gate_ready)
		vcpu_gate_destroy(&c->gate);
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	pthread_mutex_destroy(&c->lock);
	free(c->slots);
	free(c);
}
