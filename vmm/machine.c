// SPDX-License-Identifier: MIT
/*
 * The machine: a VM's life from its config to its exit status. machine_create() builds in
 * the order KVM charges least for: VM, memory slots, irqchip, devices, kernel and boot data,
 * then the boot vCPUs. machine_run() starts them and runs the main event loop until a stop
 * is requested, then ends every vCPU thread. The only file that knows every part: nothing
 * includes it but main.c.
 */
#include "machine.h"

#include <errno.h>
#include <linux/kvm.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "control/agent.h"
#include "autoscale.h"
#include "chaos.h"
#include "console.h"
#include "control/control.h"
#include "control/qmp.h"
#include "cpus.h"
#include "daemon.h"
#include "devices/acpi_pm.h"
#include "devices/debug_exit.h"
#include "devices/latency.h"
#include "devices/load.h"
#include "devices/reset_control.h"
#include "devices/uart16550.h"
#include "devices/virtio_console.h"
#include "exitcode.h"
#include "jail.h"
#include "loader.h"
#include "log.h"
#include "plugvm_abi.h"
#include "plugvm_hotplug.h"
#include "plugvm_load.h"
#include "runas.h"
#include "sandbox.h"
#include "vcpu.h"
#include "vm.h"
#include "x86/acpi.h"
#include "x86/acpi_dump.h"
#include "x86/boot.h"
#include "x86/cpu.h"
#include "x86/layout.h"

static int load_guest(struct vm *vm)
{
	struct acpi_config acfg = { .nr_cpus = vm->cfg->nr_cpus,
				    .max_cpus = vm->cfg->max_cpus,
				    .layout = acpi_layout_of(vm->cfg->machine) };
	struct loaded_kernel k;
	char err[512];
	uint8_t *acpi;
	bool first = !vm->kernel_img;
	gpa_t rsdp;
	int ret;

	ret = first ? loader_read_file(vm->cfg->kernel_path, vm->mem.size, &vm->kernel_img,
				       &vm->kernel_len, err, sizeof(err))
		    : 0;
	if (first && !ret)
		vm->kernel_abs = realpath(vm->cfg->kernel_path, NULL);
	if (!ret)
		ret = loader_load_image(&vm->mem, vm->cfg->kernel_path, vm->kernel_img,
					vm->kernel_len, &k, err, sizeof(err));
	if (ret) {
		log_error("%s", err);
		return PLUGVM_EXIT_USAGE;
	}
	/*
	 * A reset loads the image again: keep only the prefix the loader reads (loader.h),
	 * not the symbols and debug information after it (1.1 of guest.elf's 1.4 MB, resident
	 * for the VM's life otherwise).
	 */
	if (first) {
		size_t keep = loader_elf_kept_len(vm->kernel_img, vm->kernel_len);
		uint8_t *img = keep < vm->kernel_len ? realloc(vm->kernel_img, keep) : NULL;

		if (img) {
			vm->kernel_img = img;
			vm->kernel_len = keep;
		}
	}
	vm->entry = k.entry;
	acpi = mem_gpa_ptr(&vm->mem, LAYOUT_ACPI_BASE, LAYOUT_ACPI_SIZE);
	rsdp = acpi ? acpi_build(acpi, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, &acfg) : 0;
	if (!rsdp) {
		log_error("ACPI tables for %u CPUs do not fit %llu KiB", acfg.max_cpus,
			  LAYOUT_ACPI_SIZE >> 10);
		return PLUGVM_EXIT_SETUP;
	}
	/* Once, at start: the tables are the same after a reset (and files are not opened then). */
	if (first && vm->cfg->acpi_dump_dir &&
	    acpi_dump(acpi, LAYOUT_ACPI_SIZE, LAYOUT_ACPI_BASE, vm->cfg->acpi_dump_dir))
		return PLUGVM_EXIT_SETUP;
	{
		/* The virtio devices announce themselves on the command line (kvmtool's way). */
		char extra[512], *cmdline;

		if (virtio_devices_cmdline(vm, extra, sizeof(extra)) ||
		    asprintf(&cmdline, "%s%s", vm->cfg->cmdline, extra) < 0) {
			log_error("out of memory");
			return PLUGVM_EXIT_SETUP;
		}
		vm->start_info = pvh_write_start_info(&vm->mem, cmdline, rsdp);
		free(cmdline);
	}
	if (!vm->start_info) {
		char extra[512];
		size_t added = virtio_devices_cmdline(vm, extra, sizeof(extra)) ? 0 : strlen(extra);

		/* The real limit for --append: what the virtio devices' words leave. */
		log_error("--append: command line longer than %llu bytes (plugvm adds %zu for its "
			  "virtio devices; %llu with --virtio off)",
			  LAYOUT_CMDLINE_MAX - 1 - added, added, LAYOUT_CMDLINE_MAX - 1);
		return PLUGVM_EXIT_USAGE;
	}
	log_debug("machine %s (%s): GPE0 %#x (%u bytes), CPU hotplug block %#x", acfg.layout->name,
		  acfg.layout->chipset, acfg.layout->gpe0_base, acfg.layout->gpe0_len,
		  acfg.layout->cpuhp_base);
	log_debug("kernel [%#llx-%#llx) entry %#x, start_info %#llx, rsdp %#llx",
		  (unsigned long long)k.lowest, (unsigned long long)k.highest, k.entry,
		  (unsigned long long)vm->start_info, (unsigned long long)rsdp);
	return 0;
}

static int create_devices(struct vm *vm)
{
	/* console_io.c opened it (stdout for plugvm's default). */
	vm->console =
	    console_create(vm->cfg->console_fd >= 0 ? vm->cfg->console_fd : STDOUT_FILENO);
	if (!vm->console || uart_init(vm) || debug_exit_init(vm) || reset_control_init(vm) ||
	    acpi_pm_init(vm) || cpus_create(vm) || autoscale_create(vm) || latency_init(vm) ||
	    load_init(vm) || virtio_devices_init(vm) || agent_init(vm))
		return PLUGVM_EXIT_SETUP;
	return 0;
}

int machine_create(struct vm *vm, const struct vm_config *cfg)
{
	int ret;

	if (vm_init(vm, cfg))
		return PLUGVM_EXIT_SETUP;
	/* While this is the only thread: the SIGSYS handler is process-wide. */
	if (sandbox_init(!cfg->sandbox_disabled))
		return PLUGVM_EXIT_SETUP;
	/* -machine none (libvirt's probe): no KVM VM, no vCPU, no kernel; QMP only. */
	if (cfg->machine_none)
		return 0;

	if (kvm_open(&vm->kvm, "/dev/kvm"))
		return PLUGVM_EXIT_SETUP;
	if (cfg->max_cpus > vm->kvm.max_vcpus) {
		log_error("--smp: %u vCPUs exceed KVM's limit of %u on this host", cfg->max_cpus,
			  vm->kvm.max_vcpus);
		return PLUGVM_EXIT_USAGE;
	}
	vm->cpuid.max_cpus = cfg->max_cpus;
	vm->cpuid.tsc_deadline = vm->kvm.tsc_deadline;
	vm->cpuid.no_arch_caps = cfg->cpu_no_arch_caps;
	vm->cpuid.features = PLUGVM_FEATURE_HOTPLUG_REPORT | PLUGVM_FEATURE_DIRECT_START |
			     PLUGVM_FEATURE_LATENCY | PLUGVM_FEATURE_HOTPLUG_PV |
			     PLUGVM_FEATURE_LOAD;
	if (!cfg->virtio_disabled)
		vm->cpuid.features |= PLUGVM_FEATURE_VIRTIO;

	if (mem_init(&vm->mem, cfg->mem_bytes))
		return PLUGVM_EXIT_SETUP;
	if (cfg->mem_thp)
		mem_set_thp(&vm->mem, true);
	if (kvm_setup_memory_and_irqchip(&vm->kvm, &vm->mem))
		return PLUGVM_EXIT_SETUP;
	/* Before the devices: every line change of theirs must go through it. */
	if (cfg->chaos.enabled) {
		if (chaos_create(&vm->chaos, &cfg->chaos, cfg->max_cpus, kvm_irq_line_now,
				 &vm->kvm))
			return PLUGVM_EXIT_SETUP;
		if (chaos_irq_enabled(vm->chaos))
			vm->kvm.chaos = vm->chaos;
	}
	ret = create_devices(vm);
	if (ret)
		return ret;
	ret = load_guest(vm);
	if (ret)
		return ret;
	if (vcpu_init_signals() || cpus_create_boot(vm->cpus))
		return PLUGVM_EXIT_SETUP;
	return 0;
}

/*
 * QMP system_reset, as QEMU's: every vCPU out of the guest, the devices and the interrupt
 * controllers at power-on state, RAM zeroed and the kernel loaded again, vCPU 0 at its
 * entry; then RESET, and the VM runs again if it ran. A failure ends the VM.
 */
static void machine_reset(struct vm *vm)
{
	bool was_running = cpus_run_state(vm->cpus) == CPUS_RUNNING,
	     guest = atomic_exchange(&vm->reset_by_guest, false);
	int ret;

	if (cpus_pause(vm->cpus))
		goto fail;
	acpi_pm_reset(vm);
	reset_control_reset();
	uart_reset(vm);
	virtio_devices_reset(vm);
	load_reset(vm);
	if (kvm_irqchip_reset(&vm->kvm))
		goto fail;
	ret = mem_clear(&vm->mem);
	if (ret) {
		log_error("system_reset: clearing guest RAM: %s", strerror(-ret));
		goto fail;
	}
	if (load_guest(vm) || cpus_reset(vm->cpus))
		goto fail;
	log_info("system reset: the guest boots again");
	vm->powered_off = false;
	control_reset_done(vm, guest);
	if (was_running)
		cpus_resume(vm->cpus);
	return;
fail:
	log_error("system_reset failed: stopping the VM");
	vm_request_stop(vm, PLUGVM_EXIT_INTERNAL);
}

/*
 * The guest powered off under on_poweroff ACTION_PAUSE (QEMU's -no-shutdown): SHUTDOWN,
 * every vCPU out of the guest, STOP; the VM is in the "shutdown" run state until
 * system_reset, and plugvm stays up (test_qmp_libvirt.py).
 */
static void machine_poweroff_paused(struct vm *vm)
{
	bool reset = atomic_exchange(&vm->reset_shutdown, false),
	     was_running = cpus_run_state(vm->cpus) == CPUS_RUNNING;

	log_info("guest powered off: the vCPUs stop, the VM waits (-no-shutdown)");
	control_guest_shutdown(vm, reset);
	vm->powered_off = true;
	cpus_pause(vm->cpus);
	if (was_running) /* as QEMU's: STOP only when the vCPUs ran (a `stop` came first) */
		control_stopped(vm);
}

/* Console input for the UART. Returns false at EOF or on error (stop watching it). */
static bool read_console(struct vm *vm)
{
	uint8_t buf[256];
	ssize_t n = read(vm->cfg->console_in_fd, buf, sizeof(buf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	/* The guest's virtio console takes over input once its driver listens. */
	if (virtio_console_live(vm))
		virtio_console_rx(vm, buf, (size_t)n);
	else
		uart_rx(vm, buf, (size_t)n);
	return true;
}

/* The earlier of two timeouts in ms, -1 meaning none. */
static int earliest(int a, int b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

static int event_loop(struct vm *vm, int sig_fd)
{
	struct epoll_event ev, events[8];
	int ep, i, n;
	bool watch_stdin;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		log_error("epoll_create1: %s", strerror(errno));
		return -errno;
	}
	ev.events = EPOLLIN;
	ev.data.fd = vm->stop_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, vm->stop_fd, &ev);
	ev.data.fd = sig_fd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sig_fd, &ev);
	if (control_fd(vm) >= 0) {
		ev.data.fd = control_fd(vm);
		epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	}
	/* Ejects and refused removals: cpus_process() below, each time round. */
	ev.data.fd = cpus_wake_fd(vm->cpus);
	epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	if (agent_fd(vm) >= 0) {
		ev.data.fd = agent_fd(vm);
		epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev);
	}
	ev.data.fd = vm->cfg->console_in_fd;
	/* Fails for regular files, /dev/null and -1, which is what we want: no console input. */
	watch_stdin = ev.data.fd >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, ev.data.fd, &ev) == 0;

	while (!vm_stopping(vm)) {
		int timeout = earliest(
		    earliest(control_next_timeout_ms(vm), agent_next_timeout_ms(vm)),
		    earliest(cpus_next_timeout_ms(vm->cpus), autoscale_next_timeout_ms(vm)));

		n = epoll_wait(ep, events, 8, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		control_tick(vm);
		/* A power-off before a reset, as QEMU's main loop: a reset asked after it wins. */
		if (vm_take_poweroff(vm))
			machine_poweroff_paused(vm);
		if (vm_take_reset(vm))
			machine_reset(vm);
		cpus_process(vm->cpus);
		autoscale_process(vm);
		if (n < 0) {
			log_error("epoll_wait: %s", strerror(errno));
			vm_request_stop(vm, PLUGVM_EXIT_INTERNAL);
			break;
		}
		for (i = 0; i < n; i++) {
			int fd = events[i].data.fd;

			if (fd == sig_fd) {
				struct signalfd_siginfo si;

				if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
					log_error("terminating on signal %u", si.ssi_signo);
					vm_request_stop(vm, PLUGVM_EXIT_SIGNAL_BASE +
								(int)si.ssi_signo);
				}
			} else if (fd == control_fd(vm)) {
				control_dispatch(vm);
			} else if (fd == vm->cfg->console_in_fd && watch_stdin) {
				if (!read_console(vm)) {
					epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);
					watch_stdin = false;
				}
			}
		}
		/*
		 * Guest agent messages (a budget of them; the rest at the timeout above) and
		 * request deadlines, after signals and QMP: a command that came during this
		 * pass waits for one budget at most (test_flood.py).
		 */
		agent_process(vm);
	}
	close(ep);
	return 0;
}

/*
 * --domain's <vcpus> entries enabled and hotpluggable: hot-added before any vCPU runs, as
 * libvirt does with device_add on a paused QEMU; the guest's ACPI driver finds them when it
 * starts. 0, or -1 (logged).
 */
static int add_start_cpus(struct vm *vm)
{
	unsigned i;

	for (i = 0; i < vm->cfg->nr_start_hotplug; i++) {
		unsigned slot = vm->cfg->start_hotplug[i];
		char id[24];
		int ret;

		snprintf(id, sizeof(id), "vcpu%u", slot);
		ret = cpus_add(vm->cpus, slot, id);
		if (ret) {
			log_error("<vcpus>: hot-adding vCPU %u at start: %s", slot, strerror(-ret));
			return -1;
		}
	}
	return 0;
}

/*
 * What each thread kind writes to, into the filters (sandbox.h): the console writer the
 * guest's output (console_io.c's descriptor); a vCPU thread the main loop's eventfds (a stop or reset, CPU
 * hotplug work, a QMP event, an agent message); the main thread all of these (its filter is
 * the union) and, through send(2), its QMP clients. The QMP socket (unless inherited) and the
 * -pidfile are removed at exit as names in their directories. 0 or -errno (logged).
 */
static int sandbox_grants(struct vm *vm)
{
	int r = sandbox_allow_write(SANDBOX_VCPU, vm->stop_fd);

	if (!r && vm->qmp)
		r = sandbox_allow_write(SANDBOX_VCPU, qmp_server_event_fd(vm->qmp));
	if (!r && vm->qmp && qmp_server_dir_fd(vm->qmp) >= 0)
		r = sandbox_allow_unlinkat(qmp_server_dir_fd(vm->qmp));
	if (!r && daemon_pidfile_dir_fd() >= 0)
		r = sandbox_allow_unlinkat(daemon_pidfile_dir_fd());
	/* -machine none: no console, no vCPU, no agent. */
	if (r || !vm_has_machine(vm))
		return r;
	r = sandbox_allow_write(SANDBOX_CONSOLE,
				vm->cfg->console_fd >= 0 ? vm->cfg->console_fd : STDOUT_FILENO);
	if (!r)
		r = sandbox_allow_write(SANDBOX_VCPU, cpus_wake_fd(vm->cpus));
	if (!r && agent_fd(vm) >= 0)
		r = sandbox_allow_write(SANDBOX_VCPU, agent_fd(vm));
	return r;
}

/*
 * -machine none: QMP alone until `quit` or a signal (helper-free: no vCPU, no console). The
 * main loop's stop_fd, signals and the QMP server, nothing else.
 */
static void serve_only(struct vm *vm, int sig_fd)
{
	struct pollfd p[3] = { { .fd = vm->stop_fd, .events = POLLIN },
			       { .fd = sig_fd, .events = POLLIN },
			       { .fd = control_fd(vm), .events = POLLIN } };

	while (!vm_stopping(vm)) {
		int n = poll(p, p[2].fd >= 0 ? 3 : 2, control_next_timeout_ms(vm));

		if (n < 0 && errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			vm_request_stop(vm, PLUGVM_EXIT_INTERNAL);
			break;
		}
		control_tick(vm);
		if (n > 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				vm_request_stop(vm, PLUGVM_EXIT_SIGNAL_BASE + (int)si.ssi_signo);
		}
		if (n > 0 && (p[2].revents & POLLIN))
			control_dispatch(vm);
	}
}

int machine_run(struct vm *vm)
{
	sigset_t mask;
	int sig_fd, status, ret;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0) {
		log_error("signalfd: %s", strerror(errno));
		return PLUGVM_EXIT_SETUP;
	}

	/*
	 * --jail: the namespaces and the new root while this is the only thread (unshare of
	 * the mount namespace needs it), before the socket is bound inside DIR.
	 */
	if (vm->cfg->jail_dir && jail_enter(vm->cfg)) {
		close(sig_fd);
		return PLUGVM_EXIT_SETUP;
	}
	ret = control_start(vm);
	/* QMP listens: the pidfile and -daemonize's parent may now say so (daemon.h). */
	if (!ret)
		ret = daemon_ready(vm->cfg);
	if (ret) {
		close(sig_fd);
		/* A socket path that cannot be used is a bad flag (exit 2), as a bad kernel file. */
		return ret == -ENOENT || ret == -ENOTDIR || ret == -EACCES || ret == -EROFS ||
			       ret == -ELOOP || ret == -ENAMETOOLONG || ret == -EEXIST ||
			       ret == -EADDRINUSE
			   ? PLUGVM_EXIT_USAGE
			   : PLUGVM_EXIT_SETUP;
	}
	/*
	 * Setup is over: /dev/kvm and the socket are open. Drop the user while this is the
	 * only thread, enter the main thread's sandbox, then start the helpers in theirs (they
	 * inherit the main filter and narrow it); every vCPU thread enters its own at start,
	 * the <vcpus> hot-added at start included (after the user is dropped: glibc's setuid
	 * would make each thread call setresuid, which no vCPU filter allows).
	 */
	status = vm->cfg->runas ? runas_user(vm->cfg->runas) : 0;
	/* Jailed: the last capabilities and process creation go before any other thread. */
	if (!status && vm->cfg->jail_dir && jail_lock(vm->cfg))
		status = -EPERM;
	if (!status && !vm_has_machine(vm)) {
		if (sandbox_grants(vm) || sandbox_enter(SANDBOX_MAIN)) {
			close(sig_fd);
			return PLUGVM_EXIT_SETUP;
		}
		serve_only(vm, sig_fd);
		close(sig_fd);
		status = vm_exit_status(vm);
		control_stop(vm, status);
		return status;
	}
	if (status || sandbox_grants(vm) || sandbox_enter(SANDBOX_MAIN) ||
	    console_start(vm->console) || chaos_start(vm->chaos) || add_start_cpus(vm)) {
		close(sig_fd);
		return status == -ENOENT ? PLUGVM_EXIT_USAGE : PLUGVM_EXIT_SETUP;
	}
	/* -S: the vCPUs wait for QMP `cont` (config refuses -S without a socket). */
	cpus_start_boot(vm->cpus, vm->cfg->start_paused);
	event_loop(vm, sig_fd);

	cpus_stop_all(vm->cpus);
	close(sig_fd);
	chaos_stop(vm->chaos);
	chaos_report(vm->chaos);

	status = vm_exit_status(vm);
	agent_shutdown(vm);
	control_stop(vm, status);
	/* SIGQUIT asks for a post-mortem of a hung guest, like a core dump would give. */
	if (status == PLUGVM_EXIT_SIGNAL_BASE + SIGQUIT)
		cpus_dump(vm->cpus);
	/* The guest had powered off (-no-shutdown): a signal ending plugvm then is no failure. */
	if (vm->powered_off && status >= PLUGVM_EXIT_SIGNAL_BASE)
		status = PLUGVM_EXIT_OK;
	return status;
}

void machine_destroy(struct vm *vm)
{
	control_free(vm);
	if (vm->cfg->machine_none) {
		vm_fini(vm);
		return;
	}
	autoscale_destroy(vm);
	cpus_destroy(vm->cpus); /* the vCPUs, then the CPU hotplug devices */
	vm->cpus = NULL;
	/* Only the main thread is left: nothing else can be inside chaos_irq_line(). */
	vm->kvm.chaos = NULL;
	chaos_destroy(vm->chaos);
	vm->chaos = NULL;
	agent_exit(vm);
	latency_exit(vm);
	load_exit(vm);
	virtio_devices_exit(vm);
	acpi_pm_exit(vm);
	uart_exit(vm);
	console_destroy(vm->console); /* after the devices: the guest's last words go out */
	vm->console = NULL;
	kvm_close(&vm->kvm);
	mem_destroy(&vm->mem);
	free(vm->kernel_img);
	free(vm->kernel_abs);
	vm->kernel_img = NULL;
	vm->kernel_abs = NULL;
	vm_fini(vm);
}
