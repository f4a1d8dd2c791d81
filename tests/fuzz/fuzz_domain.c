// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/config/domain_xml*.c, the libvirt domain document reader (plugvm --domain).
 * The input is the document, read through a memfd's /proc path as plugvm reads a file. An
 * accepted document must give a configuration inside the documented limits (CPUs, memory,
 * the vCPUs hot-added at start, the strings' bounds); a refused one must say why.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plugvm_abi.h"
#include "vmm/config/config.h"
#include "vmm/config/domain_xml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vm_config cfg;
	char path[64], err[512] = "";
	unsigned i;
	int fd = memfd_create("domain.xml", MFD_CLOEXEC), ret;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	config_defaults(&cfg);
	ret = domain_xml_load(&cfg, path, err, sizeof(err));
	if (ret) {
		if (!err[0])
			abort(); /* a refusal names its reason */
	} else {
		if (cfg.nr_cpus < 1 || cfg.nr_cpus > cfg.max_cpus || cfg.max_cpus > PLUGVM_MAX_CPUS)
			abort();
		if (!cfg.mem_bytes)
			abort();
		/* Every string kept is within its bound (domain_xml.h). */
		if ((cfg.name &&
		     (strlen(cfg.name) > DOMAIN_XML_MAX_NAME || strchr(cfg.name, '\n'))) ||
		    (cfg.uuid && strlen(cfg.uuid) > DOMAIN_XML_MAX_UUID) ||
		    (cfg.cmdline && strlen(cfg.cmdline) > CONFIG_MAX_CMDLINE) ||
		    (cfg.kernel_path && strlen(cfg.kernel_path) >= PATH_MAX))
			abort();
		for (i = 0; i < cfg.nr_start_hotplug; i++)
			if (cfg.start_hotplug[i] >= cfg.max_cpus)
				abort();
	}
	config_free(&cfg);
	close(fd);
	return 0;
}
