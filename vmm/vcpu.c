// SPDX-License-Identifier: MIT
/*
 * vCPU threads: create, run, kick, stop. The run loop dispatches exits to the buses and
 * turns guest crashes into a register dump and a stop; it never blocks on anything but
 * KVM_RUN. A kick is a flag plus SIGUSR1, whose handler sets kvm_run.immediate_exit so a
 * kick that lands just before KVM_RUN is not lost. When a thread runs, and whether it may
 * be kicked, is cpus.c's to decide.
 */
#include "vcpu.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "chaos.h"
#include "exitcode.h"
#include "log.h"
#include "rt_tune.h"
#include "sandbox.h"
#include "vm.h"
#include "x86/cpu.h"

#define VCPU_KICK_SIGNAL SIGUSR1
/* vcpu.tid while its thread is created but has not published its id yet (a futex word). */
#define VCPU_TID_STARTING ((pid_t)-1)
/* How long vcpu_tid() waits for a starting thread: a bound against a hang, never reached. */
#define VCPU_TID_WAIT_S 1

struct vcpu_snapshot {
	struct kvm_regs regs;
	struct kvm_sregs sregs;
	struct kvm_lapic_state lapic;
	struct kvm_fpu fpu;
};

static __thread struct kvm_run *this_run;

static void kick_handler(int sig)
{
	(void)sig;
	if (this_run)
		this_run->immediate_exit = 1;
}

int vcpu_init_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick_handler;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: KVM_RUN must return EINTR. */
	if (sigaction(VCPU_KICK_SIGNAL, &sa, NULL) < 0) {
		log_error("sigaction(SIGUSR1): %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int vcpu_create(struct vcpu *v, struct vm *vm, int id, bool boot)
{
	int err;

	/* KVM keeps a vCPU until the VM ends: after a failed setup, a retry takes its fd. */
	if (v->fd < 0) {
		int fd = ioctl(vm->kvm.vm_fd, KVM_CREATE_VCPU, (unsigned long)id);

		if (fd < 0) {
			err = errno;
			log_error("vCPU %d: KVM_CREATE_VCPU: %s", id, strerror(err));
			return -err;
		}
		v->fd = fd;
	}
	v->vm = vm;
	v->id = id;
	if (!v->run) {
		void *run = mmap(NULL, (size_t)vm->kvm.run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
				 v->fd, 0);

		if (run == MAP_FAILED) {
			err = errno;
			log_error("vCPU %d: mmap(kvm_run): %s", id, strerror(err));
			return -err;
		}
		v->run = run;
	}
	if (v->stats_fd < 0)
		v->stats_fd = ioctl(v->fd, KVM_GET_STATS_FD, NULL); /* -1: query-stats says so */
	pthread_mutex_init(&v->start_lock, NULL);
	atomic_store(&v->start_pending, false);
	atomic_store(&v->nmi_pending, false);

	if (id == 0 && !vm->cpuid.tsc_khz) {
		/* The first vCPU tells the TSC rate every vCPU's CPUID will advertise. */
		int khz = ioctl(v->fd, KVM_GET_TSC_KHZ, 0);

		vm->cpuid.tsc_khz = khz > 0 ? (uint32_t)khz : 0;
		if (khz <= 0)
			log_warn("KVM_GET_TSC_KHZ failed; the guest will calibrate its TSC");
	}
	/*
	 * CPUID: set by the vCPU's own thread before its first KVM_RUN (vcpu_set_cpuid()), so
	 * a boot's vCPUs set theirs side by side; test_cpus.c test_spare_vcpus_fallback.
	 */
	v->cpuid_set = false;
	/* KVM's INIT resets most of a vCPU, but not all: keep the power-on state. */
	v->reset = calloc(1, sizeof(*v->reset));
	if (!v->reset || ioctl(v->fd, KVM_GET_REGS, &v->reset->regs) < 0 ||
	    ioctl(v->fd, KVM_GET_SREGS, &v->reset->sregs) < 0 ||
	    ioctl(v->fd, KVM_GET_LAPIC, &v->reset->lapic) < 0 ||
	    ioctl(v->fd, KVM_GET_FPU, &v->reset->fpu) < 0) {
		err = v->reset ? errno : ENOMEM;
		log_error("vCPU %d: saving its reset state: %s", id, strerror(err));
		free(v->reset);
		v->reset = NULL; /* not ready: the fd stays for a retry (vcpu_ready()) */
		return -err;
	}
	if (boot && regs_setup_pvh(v->fd, vm->entry, (uint32_t)vm->start_info) < 0) {
		err = errno;
		log_error("vCPU %d: setting entry registers: %s", id, strerror(err));
		return -err;
	}
	return 0;
}

/*
 * A start is INIT and SIPI in one, and INIT clears the NMI state (KVM's reset does too): an
 * NMI queued for the CPU's past life (inject-nmi racing the start) would be taken at the
 * entry's first instruction, before the guest has an IDT (a triple fault), and one taken by
 * the past life's halt loop, its handler cut off by the start, would block NMIs until the
 * new life's first IRET. vCPU thread.
 */
static int drop_nmi_state(struct vcpu *v)
{
	struct kvm_vcpu_events ev;

	atomic_store(&v->nmi_pending, false);
	if (ioctl(v->fd, KVM_GET_VCPU_EVENTS, &ev) < 0)
		return -1;
	if (!ev.nmi.pending && !ev.nmi.injected && !ev.nmi.masked)
		return 0;
	ev.nmi.pending = 0;
	ev.nmi.injected = 0;
	ev.nmi.masked = 0;
	ev.flags |= KVM_VCPUEVENT_VALID_NMI_PENDING;
	if (ioctl(v->fd, KVM_SET_VCPU_EVENTS, &ev) < 0)
		return -1;
	log_info("vCPU %d: NMI state of its past life cleared at its start", v->id);
	return 0;
}

/* A pending direct start: 64-bit mode at the guest's entry (plugvm_abi.h). vCPU thread. */
static void apply_direct_start(struct vcpu *v)
{
	struct kvm_mp_state mp = { .mp_state = KVM_MP_STATE_RUNNABLE };
	struct long_mode_start r;
	bool pending;

	if (!atomic_load(&v->start_pending))
		return; /* the common case, every exit: no lock */
	pthread_mutex_lock(&v->start_lock);
	pending = atomic_exchange(&v->start_pending, false);
	r = v->start;
	pthread_mutex_unlock(&v->start_lock);
	if (!pending)
		return;
	if (regs_setup_long_mode(v->fd, &r) < 0 || ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0)
		goto fail;
	if (drop_nmi_state(v) < 0)
		goto fail;
	log_info("vCPU %d: direct start at %#llx", v->id, (unsigned long long)r.entry);
	return;
fail:
	log_error("vCPU %d: direct start: %s", v->id, strerror(errno));
}

/*
 * A pending NMI (QMP inject-nmi), into a vCPU that has started: one waiting for INIT/SIPI
 * (mp_state INIT_RECEIVED, an AP before its start) would take it at the first instruction
 * of its start, in real mode or before its IDT is loaded. vCPU thread.
 */
static void apply_nmi(struct vcpu *v)
{
	struct kvm_mp_state mp;

	if (!atomic_load(&v->nmi_pending) || !atomic_exchange(&v->nmi_pending, false))
		return; /* the common case, every exit */
	if (ioctl(v->fd, KVM_GET_MP_STATE, &mp) < 0) {
		log_error("vCPU %d: KVM_GET_MP_STATE: %s", v->id, strerror(errno));
		return;
	}
	if (mp.mp_state == KVM_MP_STATE_INIT_RECEIVED ||
	    mp.mp_state == KVM_MP_STATE_SIPI_RECEIVED) {
		log_info("vCPU %d: NMI not injected: the vCPU waits for its start", v->id);
		return;
	}
	if (ioctl(v->fd, KVM_NMI, 0) < 0)
		log_error("vCPU %d: KVM_NMI: %s", v->id, strerror(errno));
	else
		log_debug("vCPU %d: NMI injected", v->id);
}

void vcpu_post_nmi(struct vcpu *v)
{
	atomic_store(&v->nmi_pending, true);
	/* Out of KVM_RUN (or HLT): its loop issues KVM_NMI before re-entering. */
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_post_start(struct vcpu *v, const struct long_mode_start *r)
{
	pthread_mutex_lock(&v->start_lock);
	v->start = *r;
	atomic_store(&v->start_pending, true);
	pthread_mutex_unlock(&v->start_lock);
	/* Out of KVM_RUN (where it waits for SIPI, or halts): its loop applies the start. */
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_drop_start(struct vcpu *v)
{
	pthread_mutex_lock(&v->start_lock);
	atomic_store(&v->start_pending, false);
	pthread_mutex_unlock(&v->start_lock);
}

/*
 * The MSRs a guest may have left pointing into its memory or armed, which neither the
 * registers nor the LAPIC state cover: the TSC deadline, kvmclock, and KVM's paravirt EOI
 * (whose flag word KVM would otherwise go on writing into the next guest's memory).
 */
static int reset_msrs(struct vcpu *v)
{
	static const uint32_t idx[] = { 0x6e0 /* TSC_DEADLINE */, 0x4b564d01, 0x12 /* kvmclock */,
					0x4b564d04 /* PV EOI */ };
	enum { NR = sizeof(idx) / sizeof(idx[0]) };
	struct {
		struct kvm_msrs hdr;
		struct kvm_msr_entry e[NR];
	} m = { .hdr.nmsrs = NR };
	unsigned i;

	for (i = 0; i < NR; i++)
		m.e[i].index = idx[i];
	return ioctl(v->fd, KVM_SET_MSRS, &m) < 0 ? -1 : 0;
}

/* The power-on state saved at creation, then `mp_state`. */
static int reset_to(struct vcpu *v, uint32_t mp_state, bool boot)
{
	struct kvm_mp_state mp = { .mp_state = mp_state };

	if (!v->reset)
		return -EINVAL;
	vcpu_drop_start(v);
	if (ioctl(v->fd, KVM_SET_REGS, &v->reset->regs) < 0 ||
	    ioctl(v->fd, KVM_SET_SREGS, &v->reset->sregs) < 0 ||
	    ioctl(v->fd, KVM_SET_LAPIC, &v->reset->lapic) < 0 ||
	    ioctl(v->fd, KVM_SET_FPU, &v->reset->fpu) < 0 || reset_msrs(v) < 0 ||
	    (boot && regs_setup_pvh(v->fd, v->vm->entry, (uint32_t)v->vm->start_info) < 0) ||
	    ioctl(v->fd, KVM_SET_MP_STATE, &mp) < 0) {
		int err = errno;

		log_error("vCPU %d: reset: %s", v->id, strerror(err));
		return -err;
	}
	return 0;
}

int vcpu_reset_for_sipi(struct vcpu *v)
{
	return reset_to(v, KVM_MP_STATE_INIT_RECEIVED, false);
}

int vcpu_reset_for_boot(struct vcpu *v)
{
	return reset_to(v, KVM_MP_STATE_RUNNABLE, true);
}

/* Returns false when the thread should end. */
static bool handle_exit(struct vcpu *v)
{
	struct kvm_run *run = v->run;
	struct vm *vm = v->vm;
	char what[128];

	switch (run->exit_reason) {
	case KVM_EXIT_IO:
		if (run->io.size != 1 && run->io.size != 2 && run->io.size != 4) {
			vcpu_crash(v, "I/O exit with a bad access size");
			return false;
		}
		bus_dispatch(&vm->pio, v->id, run->io.port, (uint8_t *)run + run->io.data_offset,
			     run->io.size, run->io.count, run->io.direction == KVM_EXIT_IO_OUT);
		return true;
	case KVM_EXIT_MMIO:
		if (run->mmio.len == 0 || run->mmio.len > 8) {
			vcpu_crash(v, "MMIO exit with a bad access size");
			return false;
		}
		bus_dispatch(&vm->mmio, v->id, run->mmio.phys_addr, run->mmio.data, run->mmio.len,
			     1, run->mmio.is_write);
		return true;
	case KVM_EXIT_SHUTDOWN:
		/* A triple fault resets a machine that reboots (QEMU's way); else a crash. */
		if (atomic_load(&vm->on_reset) != ACTION_RESET) {
			vcpu_crash_shutdown(v);
			return false;
		}
		log_warn("vCPU %d: guest triple fault: the machine resets", v->id);
		vm_guest_reset(vm);
		return true;
	case KVM_EXIT_INTERNAL_ERROR:
		vcpu_crash_internal(v);
		return false;
	case KVM_EXIT_FAIL_ENTRY:
		snprintf(what, sizeof(what), "VM entry failed, hardware reason %#llx",
			 (unsigned long long)run->fail_entry.hardware_entry_failure_reason);
		vcpu_crash(v, what);
		return false;
	case KVM_EXIT_SYSTEM_EVENT:
		switch (run->system_event.type) {
		case KVM_SYSTEM_EVENT_SHUTDOWN:
			vm_guest_poweroff(vm);
			return true;
		case KVM_SYSTEM_EVENT_RESET:
			vm_guest_reset(vm);
			return true;
		default:
			snprintf(what, sizeof(what), "guest system event %u",
				 run->system_event.type);
			vcpu_crash(v, what);
			return false;
		}
	case KVM_EXIT_INTR:
		return true;
	default:
		snprintf(what, sizeof(what), "unexpected KVM exit reason %u", run->exit_reason);
		vcpu_crash(v, what);
		return false;
	}
}

int vcpu_gate_init(struct vcpu_gate *g)
{
	int err = pthread_mutex_init(&g->lock, NULL);

	if (err)
		return -err;
	err = pthread_cond_init(&g->cond, NULL);
	if (err) {
		pthread_mutex_destroy(&g->lock);
		return -err;
	}
	atomic_store(&g->closed, false);
	return 0;
}

void vcpu_gate_destroy(struct vcpu_gate *g)
{
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

void vcpu_gate_set(struct vcpu_gate *g, bool closed)
{
	pthread_mutex_lock(&g->lock);
	atomic_store(&g->closed, closed);
	pthread_cond_broadcast(&g->cond);
	pthread_mutex_unlock(&g->lock);
}

void vcpu_kick(struct vcpu *v)
{
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

int vcpu_wait_held(struct vcpu *v, const struct timespec *deadline)
{
	int err = 0;

	if (!v->gate)
		return 0;
	pthread_mutex_lock(&v->gate->lock);
	while (!atomic_load(&v->held) && err != ETIMEDOUT)
		err = pthread_cond_timedwait(&v->gate->cond, &v->gate->lock, deadline);
	pthread_mutex_unlock(&v->gate->lock);
	return atomic_load(&v->held) ? 0 : -ETIMEDOUT;
}

/* Mark the thread out of the guest and tell whoever waits for that. */
static void set_held(struct vcpu *v, bool held)
{
	if (!v->gate)
		return;
	pthread_mutex_lock(&v->gate->lock);
	atomic_store(&v->held, held);
	pthread_cond_broadcast(&v->gate->cond);
	pthread_mutex_unlock(&v->gate->lock);
}

/*
 * The guest asked the machine to power off or reset (or QMP system_reset is pending): no
 * more guest code until the main loop acts, which closes the gate (a pause, a reset) or
 * stops the VM. vCPU thread.
 */
static void wait_for_machine(struct vcpu *v)
{
	struct vcpu_gate *g = v->gate;

	if (!g)
		return;
	pthread_mutex_lock(&g->lock);
	while (!atomic_load(&g->closed) && !atomic_load(&v->stop) && !vm_stopping(v->vm))
		pthread_cond_wait(&g->cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

/*
 * Wait while the gate is closed, unless told to stop. Returns true if it waited (the
 * caller looks at its flags again). vCPU thread.
 */
static bool pass_gate(struct vcpu *v)
{
	struct vcpu_gate *g = v->gate;

	if (!g || !atomic_load(&g->closed))
		return false; /* the common case, every exit: no lock */
	/*
	 * Complete the last exit's I/O without running guest code (KVM's API: KVM_RUN with
	 * immediate_exit), so the registers are whole while the vCPU waits.
	 */
	v->run->immediate_exit = 1;
	if (ioctl(v->fd, KVM_RUN, 0) == 0 || (errno != EINTR && errno != EAGAIN))
		log_debug("vCPU %d: completing I/O before pausing: exit %u", v->id,
			  v->run->exit_reason);
	v->run->immediate_exit = 0;
	pthread_mutex_lock(&g->lock);
	atomic_store(&v->held, true);
	pthread_cond_broadcast(&g->cond);
	while (atomic_load(&g->closed) && !atomic_load(&v->stop) && !vm_stopping(v->vm))
		pthread_cond_wait(&g->cond, &g->lock);
	atomic_store(&v->held, false);
	pthread_mutex_unlock(&g->lock);
	return true;
}

/*
 * The vCPU's CPUID, once per fd, before its first KVM_RUN: in its own thread, still under
 * the main thread's filter (which allows KVM_SET_CPUID2; the vCPU's own does not), so that
 * the vCPUs of a big boot set theirs side by side instead of one after another on the main
 * thread; a vCPU created ahead of its hot-add has it set then (cpus.c).
 */
int vcpu_set_cpuid(struct vcpu *v)
{
	struct kvm_cpuid2 *cpuid;
	int err = 0;

	if (v->cpuid_set)
		return 0;
	cpuid = cpuid_build(v->vm->kvm.supported_cpuid, &v->vm->cpuid, (uint32_t)v->id);
	if (!cpuid) {
		log_error("vCPU %d: out of memory", v->id);
		return -ENOMEM;
	}
	if (ioctl(v->fd, KVM_SET_CPUID2, cpuid) < 0) {
		err = -errno;
		log_error("vCPU %d: KVM_SET_CPUID2: %s", v->id, strerror(-err));
	}
	free(cpuid);
	v->cpuid_set = !err;
	return err;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	char name[16];

	atomic_store(&v->tid, (pid_t)syscall(SYS_gettid));
	syscall(SYS_futex, (int *)&v->tid, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	snprintf(name, sizeof(name), "vcpu%d", v->id);
	pthread_setname_np(pthread_self(), name);
	rt_tune_vcpu(&v->vm->cfg->rt, (unsigned)v->id); /* <cputune>: before the first KVM_RUN */
	/* A hot-added vCPU inherits the main thread's filter and narrows it to its own. */
	if (vcpu_set_cpuid(v) || sandbox_enter(SANDBOX_VCPU)) {
		vm_request_stop(v->vm, PLUGVM_EXIT_INTERNAL);
		return NULL;
	}
	this_run = v->run;
	if (v->hot_added)
		chaos_vcpu_start(v->vm->chaos, (unsigned)v->id, &v->stop);

	for (;;) {
		/* Clear a consumed kick before looking at the flags; see the file comment. */
		v->run->immediate_exit = 0;
		if (atomic_load(&v->stop) || vm_stopping(v->vm))
			break;
		if (pass_gate(v))
			continue;
		apply_nmi(v); /* first: a start applied after it clears it, as INIT does */
		apply_direct_start(v);
		/* A kick during the stall sets immediate_exit: KVM_RUN returns at once. */
		chaos_vcpu_stall(v->vm->chaos, (unsigned)v->id, &v->stop);
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			log_error("vCPU %d: KVM_RUN: %s", v->id, strerror(errno));
			vm_request_stop(v->vm, PLUGVM_EXIT_INTERNAL);
			break;
		}
		if (!handle_exit(v))
			break;
		if (atomic_load(&v->vm->poweroff_requested) || atomic_load(&v->vm->reset_requested))
			wait_for_machine(v);
	}
	this_run = NULL;
	set_held(v, true);
	return NULL;
}

int vcpu_start_thread(struct vcpu *v, bool hot_added)
{
	sigset_t all, old;
	int err;

	atomic_store(&v->stop, false);
	atomic_store(&v->held, false);
	atomic_store(&v->tid, VCPU_TID_STARTING);
	v->hot_added = hot_added;
	vcpu_drop_start(v); /* a new life: nothing asked of an earlier one applies */
	atomic_store(&v->nmi_pending, false);
	/* The thread inherits a mask with only the kick signal open; the main thread takes
	 * every process-directed signal through its signalfd. */
	sigfillset(&all);
	sigdelset(&all, VCPU_KICK_SIGNAL);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	sigdelset(&all, SIGSYS); /* a seccomp violation is reported, not silently fatal */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&v->thread, NULL, vcpu_thread, v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		atomic_store(&v->tid, 0);
		log_error("vCPU %d: cannot start its thread: %s", v->id, strerror(err));
		return -err;
	}
	/* No wait for the thread to run: whoever needs its id waits in vcpu_tid(). */
	return 0;
}

pid_t vcpu_tid(struct vcpu *v)
{
	struct timespec now, end;
	pid_t tid;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += VCPU_TID_WAIT_S;
	while ((tid = atomic_load(&v->tid)) == VCPU_TID_STARTING) {
		struct timespec left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = end.tv_sec - now.tv_sec;
		left.tv_nsec = end.tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0) {
			left.tv_nsec += 1000000000L;
			left.tv_sec--;
		}
		if (left.tv_sec < 0)
			break;
		/* Returns at once if the id was published in between (the word changed). */
		syscall(SYS_futex, (int *)&v->tid, FUTEX_WAIT_PRIVATE, VCPU_TID_STARTING, &left,
			NULL, 0);
	}
	return tid == VCPU_TID_STARTING ? 0 : tid;
}

void vcpu_kick_stop(struct vcpu *v)
{
	atomic_store(&v->stop, true);
	if (v->gate) { /* a thread waiting at the closed gate looks at its flag again */
		pthread_mutex_lock(&v->gate->lock);
		pthread_cond_broadcast(&v->gate->cond);
		pthread_mutex_unlock(&v->gate->lock);
	}
	pthread_kill(v->thread, VCPU_KICK_SIGNAL);
}

void vcpu_join(struct vcpu *v)
{
	pthread_join(v->thread, NULL);
}

void vcpu_destroy(struct vcpu *v)
{
	free(v->reset);
	v->reset = NULL;
	if (v->run)
		munmap(v->run, (size_t)v->vm->kvm.run_size);
	if (v->fd >= 0)
		close(v->fd);
	if (v->stats_fd >= 0)
		close(v->stats_fd);
	v->run = NULL;
	v->fd = -1;
	v->stats_fd = -1;
}
