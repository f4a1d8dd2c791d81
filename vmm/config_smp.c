// SPDX-License-Identifier: MIT
/* QEMU's -smp: the CPU counts and the topology whose product is maxcpus. Pure. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "plugvm_abi.h"

int config_parse_smp(const char *s, unsigned *nr_cpus, unsigned *max_cpus, char *err, size_t errlen)
{
	return config_parse_smp_topo(s, nr_cpus, max_cpus, NULL, err, errlen);
}

int config_parse_smp_topo(const char *s, unsigned *nr_cpus, unsigned *max_cpus,
			  struct smp_topology *topology, char *err, size_t errlen)
{
	unsigned long long cpus = 0, maxcpus = 0, topo[4] = { 1, 1, 1, 1 };
	static const char *const topo_keys[4] = { "sockets", "dies", "cores", "threads" };
	bool have_cpus = false, have_topo = false;
	const char *p = s;

	if (!*s) {
		config_set_err(err, errlen, "--smp: empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		unsigned long long v;
		size_t klen = eq ? (size_t)(eq - p) : 0;
		const char *val = eq ? eq + 1 : p;
		size_t vlen = eq ? len - klen - 1 : len;
		int i;

		if (config_parse_uint(val, vlen, PLUGVM_MAX_CPUS * 1000ull, &v) || v == 0) {
			config_set_err(err, errlen, "--smp: bad value '%.*s' in '%s'", (int)len, p,
				       s);
			return -EINVAL;
		}
		if (!eq || (klen == 4 && !strncmp(p, "cpus", 4))) {
			if (have_cpus) {
				config_set_err(err, errlen, "--smp: CPU count given twice in '%s'",
					       s);
				return -EINVAL;
			}
			cpus = v;
			have_cpus = true;
		} else if (klen == 7 && !strncmp(p, "maxcpus", 7)) {
			maxcpus = v;
		} else {
			for (i = 0; i < 4; i++)
				if (klen == strlen(topo_keys[i]) && !strncmp(p, topo_keys[i], klen))
					break;
			if (i == 4) {
				config_set_err(err, errlen, "--smp: unknown key '%.*s' in '%s'",
					       (int)klen, p, s);
				return -EINVAL;
			}
			topo[i] = v;
			have_topo = true;
		}
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				config_set_err(err, errlen, "--smp: trailing comma in '%s'", s);
				return -EINVAL;
			}
		}
	}
	if (have_topo) {
		unsigned long long prod = 1;
		int k;

		/* Each factor may be up to PLUGVM_MAX_CPUS * 1000: four of them can wrap. */
		for (k = 0; k < 4; k++) {
			if (__builtin_mul_overflow(prod, topo[k], &prod)) {
				config_set_err(
				    err, errlen,
				    "--smp: sockets*dies*cores*threads overflows in '%s'", s);
				return -EINVAL;
			}
		}
		if (!maxcpus)
			maxcpus = prod;
		if (prod != maxcpus) {
			config_set_err(
			    err, errlen,
			    "--smp: sockets*dies*cores*threads = %llu differs from maxcpus %llu",
			    prod, maxcpus);
			return -EINVAL;
		}
	}
	if (!have_cpus)
		cpus = maxcpus ? maxcpus : 1;
	if (!maxcpus)
		maxcpus = cpus;
	if (cpus > maxcpus) {
		config_set_err(err, errlen, "--smp: %llu CPUs exceed maxcpus=%llu", cpus, maxcpus);
		return -EINVAL;
	}
	if (maxcpus > PLUGVM_MAX_CPUS) {
		config_set_err(err, errlen, "--smp: %llu CPUs exceed plugvm's limit of %d", maxcpus,
			       PLUGVM_MAX_CPUS);
		return -EINVAL;
	}
	*nr_cpus = (unsigned)cpus;
	*max_cpus = (unsigned)maxcpus;
	if (topology) {
		/* Without a topology, QEMU 6.2+ splits maxcpus into cores of one socket. */
		topology->sockets = have_topo ? (unsigned)topo[0] : 1;
		topology->dies = have_topo ? (unsigned)topo[1] : 1;
		topology->cores = have_topo ? (unsigned)topo[2] : (unsigned)maxcpus;
		topology->threads = have_topo ? (unsigned)topo[3] : 1;
	}
	return 0;
}
