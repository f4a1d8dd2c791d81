// SPDX-License-Identifier: MIT
/*
 * The one check of a whole configuration, after every reader has filled it (the flags, and
 * under them a --domain document): the rules between fields that no single reader sees.
 * Each reader checks its own values (ranges, syntax) as it reads them. Pure: no I/O.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

/*
 * --jail DIR: the QMP socket lies directly in DIR (DIR/NAME, DIR spelled as given, trailing
 * slashes aside), the only place the jailed VMM can bind it; without --qmp it is
 * DIR/plugvm.qmp (jail.h), which must fit a socket address. 0 or -EINVAL.
 */
static int validate_jail(const struct vm_config *cfg, char *err, size_t errlen)
{
	size_t dlen = strlen(cfg->jail_dir);
	const char *p = cfg->qmp_path;

	while (dlen > 1 && cfg->jail_dir[dlen - 1] == '/')
		dlen--;
	if (cfg->qmp_disabled || cfg->qmp_fd >= 0)
		return 0;
	if (!p) {
		if (dlen + sizeof("/plugvm.qmp") - 1 <= CONFIG_MAX_QMP_PATH)
			return 0;
		config_set_err(err, errlen,
			       "--jail: '%s' is too long a path for its QMP socket "
			       "DIR/plugvm.qmp (at most %d bytes)",
			       cfg->jail_dir, CONFIG_MAX_QMP_PATH);
		return -EINVAL;
	}
	if (!strncmp(p, cfg->jail_dir, dlen) && p[dlen] == '/' && p[dlen + 1] &&
	    !strchr(p + dlen + 1, '/') && strcmp(p + dlen + 1, ".") && strcmp(p + dlen + 1, ".."))
		return 0;
	config_set_err(
	    err, errlen,
	    "--qmp: with --jail %s the socket must be a name directly in it (%.*s/NAME), "
	    "not '%s'",
	    cfg->jail_dir, (int)dlen, cfg->jail_dir, p);
	return -EINVAL;
}

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
	if (cfg->autoscale.enabled &&
	    (cfg->autoscale.min > cfg->max_cpus || cfg->autoscale.max > cfg->max_cpus)) {
		config_set_err(err, errlen,
			       "--autoscale: min=%u, max=%u: at most maxcpus (%u, from --smp)",
			       cfg->autoscale.min, cfg->autoscale.max, cfg->max_cpus);
		return -EINVAL;
	}
	if (cfg->autoscale.enabled && cfg->machine_none) {
		config_set_err(err, errlen, "--autoscale: -machine none has no vCPU to scale");
		return -EINVAL;
	}
	return cfg->jail_dir ? validate_jail(cfg, err, errlen) : 0;
}
