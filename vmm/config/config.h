/* SPDX-License-Identifier: MIT */
/*
 * The VM's configuration and the QEMU-style command line that fills it. Parsing is pure
 * (no I/O, no exit) so the unit tests can drive it; limits that need KVM are checked later.
 */
#ifndef PLUGVM_VMM_CONFIG_H
#define PLUGVM_VMM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../rt_tune.h"

#define CONFIG_DEFAULT_MEM_BYTES (64ull << 20)
#define CONFIG_MIN_MEM_BYTES	 (4ull << 20)
#define CONFIG_MAX_MEM_BYTES	 (256ull << 30)
#define CONFIG_MAX_CMDLINE	 4095

#define CONFIG_MAX_QMP_PATH	   107 /* sockaddr_un */
#define CONFIG_MAX_USER_NAME	   255 /* --runas */
#define CONFIG_DEFAULT_SPARE_VCPUS 1

/*
 * --chaos: host-side fault injection for testing (docs/reliability.md, "Host-side chaos").
 * Each component, when it gets a chance, fires with probability ppm / 10^6 and then delays
 * by a uniformly random 1..max_us microseconds; ppm == 0 or max_us == 0 turns it off.
 */
#define CONFIG_CHAOS_MAX_US 1000000u /* longer is a hang, not a loaded host */
#define CONFIG_CHAOS_PPM    1000000u /* 100% */

struct chaos_knob {
	uint32_t ppm; /* probability in parts per million */
	uint32_t max_us;
};

struct chaos_config {
	bool enabled; /* --chaos given */
	bool seed_given; /* seed=N; otherwise the VMM draws one from getrandom() */
	uint64_t seed;
	struct chaos_knob stall; /* a vCPU thread sleeps before (re-)entering KVM_RUN */
	struct chaos_knob irq; /* a device interrupt line change is injected late */
	struct chaos_knob start; /* a hot-added vCPU's thread sleeps before its first KVM_RUN */
};

/* Plain --chaos, and every key a spec leaves out (measured: docs/reliability.md). */
#define CONFIG_CHAOS_DEFAULT_STALL \
	{                          \
		200000, 5000       \
	} /* 20%, up to 5 ms */
#define CONFIG_CHAOS_DEFAULT_IRQ \
	{                        \
		500000, 2000     \
	} /* 50%, up to 2 ms */
#define CONFIG_CHAOS_DEFAULT_START      \
	{                               \
		CONFIG_CHAOS_PPM, 20000 \
	} /* always, up to 20 ms */

/* QEMU's -smp topology; sockets * dies * cores * threads == max_cpus. */
struct smp_topology {
	unsigned sockets, dies, cores, threads;
};

/*
 * A character device as QEMU's query-chardev names it: the monitor's and the serial
 * console's, filled by the front end that read the command line (qemu_cli.c, or plugvm's own
 * flags) and, for a pty, by the machine once it opened one.
 */
#define CONFIG_MAX_CHARDEVS 4
struct config_chardev {
	char *label; /* -chardev id=: "charmonitor", "charserial0" */
	char *filename; /* QEMU's form: "unix:PATH,server=on", "pty:/dev/pts/N", "file", "stdio" */
};

/* Where the guest's serial console goes (its output, and its input where one exists). */
enum config_console {
	CONSOLE_STDIO, /* stdout, input from stdin (plugvm's default) */
	CONSOLE_FILE, /* output appended to console_path; no input */
	CONSOLE_FD, /* output to console_fd (an inherited descriptor, -add-fd); no input */
	CONSOLE_PTY, /* a new pseudo-terminal: output and input (query-chardev names it) */
	CONSOLE_NONE, /* discarded */
};

/* The chipset whose ACPI port layout plugvm presents (QEMU's pc = i440FX/PIIX4, q35 = ICH9). */
enum config_machine {
	MACHINE_PC, /* PM block 0x600, GPE0 0xafe0 (4 bytes), CPU hotplug block 0xaf00 */
	MACHINE_Q35, /* PM block 0x600, GPE0 PMBASE+0x20 (16 bytes), CPU hotplug block 0x0cd8 */
};

/*
 * --autoscale: vCPUs on demand (docs/autoscale.md, vmm/autoscale_policy.h). All zero: off.
 * Times in ms, shares in percent.
 */
struct autoscale_params {
	bool enabled;
	unsigned min, max; /* present vCPUs kept in [min, max]; 0: 1 and maxcpus */
	unsigned period_ms; /* sampling period */
	unsigned pressure_pct, pressure_ms; /* add one: threads waited this share, this long */
	unsigned idle_pct,
	    idle_ms; /* remove one: one vCPU fewer still idle this share, this long */
	unsigned cooldown_ms; /* no operation starts within this of the last one's end */
};

#define AUTOSCALE_DEFAULT_PERIOD_MS   100
#define AUTOSCALE_DEFAULT_PRESSURE    20
#define AUTOSCALE_DEFAULT_PRESSURE_MS 200
#define AUTOSCALE_DEFAULT_IDLE	      50
#define AUTOSCALE_DEFAULT_IDLE_MS     1000
#define AUTOSCALE_DEFAULT_COOLDOWN_MS 500
/* Bounds of the times (a period of 10 ms at least: each sample reads every vCPU's record). */
#define AUTOSCALE_PERIOD_MIN_MS 10
#define AUTOSCALE_TIME_MAX_MS	600000

/* What a guest power-off or reset does (QEMU's -no-shutdown, -no-reboot). */
enum config_action {
	ACTION_EXIT, /* plugvm ends (power-off: status 0) */
	ACTION_PAUSE, /* power-off under -no-shutdown: SHUTDOWN, the vCPUs stop, plugvm stays */
	ACTION_RESET, /* reset: the guest boots again (RESET) */
};

struct vm_config {
	unsigned nr_cpus; /* vCPUs present at boot */
	unsigned max_cpus; /* possible vCPUs (hot-add up to this) */
	unsigned spare_vcpus; /* --spare-vcpus: vCPUs created ahead of hot-adds (cpus.c) */
	struct smp_topology topo;
	char *qmp_path; /* control socket; NULL: the default path */
	bool qmp_disabled; /* --qmp none */
	bool start_paused; /* -S: vCPUs start at QMP `cont` */
	bool virtio_disabled; /* --virtio off: no virtio-mmio devices */
	bool mem_thp; /* --mem-thp on: guest RAM may use transparent huge pages (mem.h) */
	bool sandbox_disabled; /* --sandbox off: no seccomp filters (debugging only) */
	char *runas; /* --runas USER: drop to that user after setup; NULL: stay */
	char *jail_dir; /* --jail DIR: the VMM's root once the VM is built (jail.h); NULL: none */
	uint64_t mem_bytes;
	char *kernel_path; /* NULL: guest.elf beside the plugvm binary */
	char *cmdline; /* guest command line, never NULL after a successful parse */
	int verbosity; /* 0 = warnings, 1 = info, 2 = debug, -1 = errors only */
	struct chaos_config chaos; /* all zero (off) without --chaos */
	struct autoscale_params autoscale; /* --autoscale, <plugvm:autoscale>; all zero: off */
	/* --domain FILE.xml (domain_xml.c): the document, applied under the flags */
	char *domain_path;
	char *name; /* <name>, NULL without --domain */
	char *uuid; /* <uuid>, NULL if none */
	unsigned nr_start_hotplug; /* vCPUs hot-added at start (<vcpus>: enabled hotpluggable) */
	unsigned *start_hotplug; /* their slots, in <vcpus>' order= */
	struct rt_config rt; /* <cputune>, <memoryBacking> (rt_tune.c); all zero: none */
	char *acpi_dump_dir; /* --dump-acpi DIR: write the ACPI tables there (debugging) */
	char *console_path; /* --domain's <serial type='file'>: guest console output there */

	/* The QEMU command line (plugvm-qemu, qemu_cli.c) and --qmp fd=N */
	int qmp_fd; /* an inherited listening socket for QMP; -1: none (listen on qmp_path) */
	char *pidfile; /* -pidfile: our pid written there once QMP listens */
	bool daemonize; /* -daemonize: the parent exits once QMP listens */
	bool machine_none; /* -machine none (libvirt's probe): no guest, only QMP */
	enum config_machine machine; /* default MACHINE_PC */
	enum config_action on_poweroff; /* ACTION_EXIT or ACTION_PAUSE (-no-shutdown) */
	enum config_action on_reset; /* ACTION_EXIT (plugvm, -no-reboot) or ACTION_RESET */
	enum config_console console; /* default CONSOLE_STDIO */
	int console_fd; /* CONSOLE_FD: the descriptor; else -1 until console_io_open() puts
			   the output's there, whatever the kind */
	int console_in_fd; /* console input, set by console_io_open(); -1: none */
	unsigned nr_chardevs;
	struct config_chardev chardevs[CONFIG_MAX_CHARDEVS];
	bool console_truncate; /* CONSOLE_FILE: start the file empty (QEMU's file chardev
				  without append=on); else append */
	bool cpu_no_arch_caps; /* -cpu host,arch-capabilities=off: CPUID.7.0:EDX[29] clear */
	bool log_timestamps; /* -msg timestamp=on: log lines start with the UTC time */
	unsigned nr_keep_fds; /* inherited descriptors the command line names (kept open) */
	int keep_fds[16];
};

enum config_status {
	CONFIG_RUN, /* parsed; run the VM */
	CONFIG_HELP, /* --help */
	CONFIG_VERSION, /* --version */
	CONFIG_ERROR, /* err holds a one-line message */
};

/* Reset cfg to the defaults (no strings held: call it only on a fresh or freed cfg). */
void config_defaults(struct vm_config *cfg);

/*
 * Apply argv's flags over cfg as it is (config_parse() without the reset and without
 * config_validate()): how the flags override a --domain document. Same returns and
 * ownership as config_parse().
 */
enum config_status config_apply_args(struct vm_config *cfg, int argc, char *const argv[], char *err,
				     size_t errlen);

/*
 * Parse argv into cfg (which is reset to defaults first), then config_validate() it.
 * Returns the status; on
 * CONFIG_ERROR `err` holds a message naming the offending flag and value. The caller owns
 * cfg's strings and frees them with config_free() whatever the status.
 */
enum config_status config_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				size_t errlen);
void config_free(struct vm_config *cfg);

/*
 * The rules between fields of a whole configuration, once every reader has filled it
 * (config_validate.c): -S needs a control socket; <vcpus>' start hot-adds lie in
 * nr_cpus..max_cpus-1 (a --smp over the document may move them). Returns 0 or -EINVAL with
 * err set. Guarded by test_config.c: test_validate.
 */
int config_validate(const struct vm_config *cfg, char *err, size_t errlen);

/*
 * "64M", "1G", "65536K", "512" (MiB, as QEMU's -m): bytes in *out. Returns 0 or -EINVAL
 * (garbage, zero, overflow).
 */
int config_parse_mem(const char *s, uint64_t *out);

/*
 * QEMU's -smp: "N", "N,maxcpus=M", "cpus=N,maxcpus=M", with optional sockets=, cores=,
 * threads=, dies= whose product must equal maxcpus. Returns 0 or -EINVAL with err set.
 */
int config_parse_smp(const char *s, unsigned *nr_cpus, unsigned *max_cpus, char *err,
		     size_t errlen);

/* config_parse_smp() that also returns the topology (defaults filled in). */
int config_parse_smp_topo(const char *s, unsigned *nr_cpus, unsigned *max_cpus,
			  struct smp_topology *topology, char *err, size_t errlen);

/*
 * --qmp: "unix:PATH", "PATH" (QEMU's ",server,nowait" / ",server=on,wait=off" accepted),
 * "fd=N" (an inherited listening socket: qmp_fd, kept open through keep_fds) or "none".
 * Returns 0 or -EINVAL/-ENOMEM with err set.
 */
int config_parse_qmp(struct vm_config *cfg, const char *val, char *err, size_t errlen);

/*
 * A QEMU machine type name: "pc" and "pc-i440fx-X.Y" (i440FX/PIIX4) into MACHINE_PC, "q35"
 * and "pc-q35-X.Y" (ICH9) into MACHINE_Q35, X and Y decimal numbers (any version: plugvm
 * presents the one layout QEMU 7.2 has for each). Names only: no options, and not "none".
 * Pure. Returns 0 with *out set, or -EINVAL (*out untouched). Shared by --machine and
 * plugvm-qemu's -machine (test_config.c: test_machine_type_names).
 */
int config_parse_machine_type(const char *name, enum config_machine *out);

/*
 * --chaos's SPEC: comma-separated KEY=VALUE items, each overriding one default
 * (CONFIG_CHAOS_DEFAULT_*): seed=N (decimal, 64 bits), and stall=, irq=, start= each taking
 * "off", "0", "TIME" (= 100%:TIME) or "P%:TIME", with P a percentage (0-100, up to four
 * decimals) and TIME a whole number of us, ms or s (at most 1 s). A NULL or absent spec
 * gives the defaults. Fills *c (enabled set) and returns 0, or -EINVAL with err naming the
 * bad item; *c is then unspecified.
 */
int config_parse_chaos(struct chaos_config *c, const char *spec, char *err, size_t errlen);

/*
 * Write *c as "seed=N stall=... irq=... start=..." (each item valid in a spec: "off",
 * "TIME" at 100%, else "P%:TIME", TIME in us) into buf. Returns what snprintf() returns.
 */
int config_format_chaos(const struct chaos_config *c, char *buf, size_t len);

/*
 * --autoscale's SPEC: "on" (the defaults), "off", or comma-separated KEY=VALUE items over the
 * defaults: min=N, max=N, period=TIME, pressure=P%, pressure-time=TIME, idle=P%,
 * idle-time=TIME, cooldown=TIME; TIME a whole number of ms or s (period at least 10 ms, every
 * time at most 600 s), P 1-100 (pressure) or 0-99 (idle); a key given twice is refused.
 * min and max are checked against maxcpus later (config_validate()). Fills *p (enabled set
 * unless "off") and returns 0, or -EINVAL with err naming the bad item (*p unspecified).
 */
int config_parse_autoscale(struct autoscale_params *p, const char *spec, char *err, size_t errlen);
/* Write *p as a spec config_parse_autoscale() reads back ("off" when not enabled). */
int config_format_autoscale(const struct autoscale_params *p, char *buf, size_t len);

/* The usage text printed by --help. */
extern const char config_usage[];

/* ---- shared by the parsers (config.c, config_smp.c, config_chaos.c, qemu_cli*.c) ---- */

/* *dst becomes a copy of src (the old string freed). Returns 0, or -ENOMEM (*dst kept). */
int config_replace_str(char **dst, const char *src);

/* A message into err (NULL or errlen 0: none), as snprintf. */
void config_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The `len` decimal digits at s, at most `max`, into *out. Returns 0 or -EINVAL. */
int config_parse_uint(const char *s, size_t len, unsigned long long max, unsigned long long *out);

#endif
