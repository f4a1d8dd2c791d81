// SPDX-License-Identifier: MIT
/*
 * The one check of a whole configuration, after every reader has filled it (the flags, and
 * under them a --domain document): the rules between fields that no single reader sees.
 * Each reader checks its own values (ranges, syntax) as it reads them. Pure: no I/O.
 */
#include "config.h"

#include <errno.h>

int config_validate(const struct vm_config *cfg, char *err, size_t errlen)
{
	unsigned i;

	if (cfg->start_paused && cfg->qmp_disabled) {
		config_set_err(err, errlen,
			       "-S with --qmp none: nothing could ever send `cont` to start the "
			       "vCPUs");
		return -EINVAL;
	}
	/* A --smp over the document must still leave room for <vcpus>' hot-adds. */
	for (i = 0; i < cfg->nr_start_hotplug; i++)
		if (cfg->start_hotplug[i] < cfg->nr_cpus ||
		    cfg->start_hotplug[i] >= cfg->max_cpus) {
			config_set_err(err, errlen,
				       "%s: <vcpus> hot-adds vCPU %u at start, which --smp "
				       "%u,maxcpus=%u makes a boot CPU or takes away",
				       cfg->domain_path, cfg->start_hotplug[i], cfg->nr_cpus,
				       cfg->max_cpus);
			return -EINVAL;
		}
	return 0;
}
