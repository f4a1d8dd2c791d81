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

#define CONFIG_DEFAULT_MEM_BYTES (64ull << 20)
#define CONFIG_MIN_MEM_BYTES	 (4ull << 20)
#define CONFIG_MAX_MEM_BYTES	 (256ull << 30)
#define CONFIG_MAX_CMDLINE	 4095

#define CONFIG_MAX_QMP_PATH 107 /* sockaddr_un */

/* QEMU's -smp topology; sockets * dies * cores * threads == max_cpus. */
struct smp_topology {
	unsigned sockets, dies, cores, threads;
};

struct vm_config {
	unsigned nr_cpus; /* vCPUs present at boot */
	unsigned max_cpus; /* possible vCPUs (hot-add up to this) */
	struct smp_topology topo;
	char *qmp_path; /* control socket; NULL: the default path */
	bool qmp_disabled; /* --qmp none */
	bool start_paused; /* -S: vCPUs start at QMP `cont` */
	bool virtio_disabled; /* --virtio off: no virtio-mmio devices */
	uint64_t mem_bytes;
	char *kernel_path; /* NULL: guest.elf beside the plugvm binary */
	char *cmdline; /* guest command line, never NULL after a successful parse */
	int verbosity; /* 0 = warnings, 1 = info, 2 = debug, -1 = errors only */
};

enum config_status {
	CONFIG_RUN, /* parsed; run the VM */
	CONFIG_HELP, /* --help */
	CONFIG_VERSION, /* --version */
	CONFIG_ERROR, /* err holds a one-line message */
};

/*
 * Parse argv into cfg (which is reset to defaults first). Returns the status; on
 * CONFIG_ERROR `err` holds a message naming the offending flag and value. The caller owns
 * cfg's strings and frees them with config_free() whatever the status.
 */
enum config_status config_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				size_t errlen);
void config_free(struct vm_config *cfg);

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
 * --qmp: "unix:PATH", "PATH" (QEMU's ",server,nowait" / ",server=on,wait=off" accepted)
 * or "none". Returns 0 or -EINVAL/-ENOMEM with err set.
 */
int config_parse_qmp(struct vm_config *cfg, const char *val, char *err, size_t errlen);

/* The usage text printed by --help. */
extern const char config_usage[];

#endif
