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

/* Each factor may be up to PLUGVM_MAX_CPUS * 1000: four of them can wrap. */
static bool product(const unsigned long long t[4], unsigned long long *out)
{
	unsigned long long p = 1;
	int k;

	for (k = 0; k < 4; k++)
		if (__builtin_mul_overflow(p, t[k], &p))
			return false;
	*out = p;
	return true;
}

int config_parse_smp_topo(const char *s, unsigned *nr_cpus, unsigned *max_cpus,
			  struct smp_topology *topology, char *err, size_t errlen)
{
	/* 0: not given. topo[] is sockets, dies, cores, threads. */
	unsigned long long cpus = 0, maxcpus = 0, topo[4] = { 0, 0, 0, 0 }, prod = 1;
	static const char *const topo_keys[4] = { "sockets", "dies", "cores", "threads" };
	const char *p = s;
	int k;

	if (!*s) {
		config_set_err(err, errlen, "--smp: empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		unsigned long long v, *slot = NULL;
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
			slot = &cpus;
		} else if (klen == 7 && !strncmp(p, "maxcpus", 7)) {
			slot = &maxcpus;
		} else {
			for (i = 0; i < 4; i++)
				if (klen == strlen(topo_keys[i]) && !strncmp(p, topo_keys[i], klen))
					slot = &topo[i];
			if (!slot) {
				config_set_err(err, errlen, "--smp: unknown key '%.*s' in '%s'",
					       (int)klen, p, s);
				return -EINVAL;
			}
		}
		if (*slot) {
			if (slot == &cpus)
				config_set_err(err, errlen, "--smp: CPU count given twice in '%s'",
					       s);
			else
				config_set_err(err, errlen, "--smp: '%.*s' given twice in '%s'",
					       (int)klen, p, s);
			return -EINVAL;
		}
		*slot = v;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				config_set_err(err, errlen, "--smp: trailing comma in '%s'", s);
				return -EINVAL;
			}
		}
	}
	/*
	 * The missing counts, as QEMU 7.2's smp_parse() (machine-smp.c) infers them for a
	 * machine of 6.2 or later: cores before sockets, threads last; dies default to 1.
	 * Without any topology, maxcpus are the cores of one socket. One extension: a whole
	 * topology without maxcpus makes maxcpus (QEMU refuses it).
	 */
	if (!topo[1])
		topo[1] = 1;
	if (topo[0] && topo[2] && topo[3] && !maxcpus) {
		/* A whole topology without maxcpus makes maxcpus (QEMU wants it given). */
		if (!product(topo, &maxcpus))
			goto overflow;
	} else if (!cpus && !maxcpus) {
		for (k = 0; k < 4; k++)
			topo[k] = topo[k] ? topo[k] : 1;
	} else {
		maxcpus = maxcpus ? maxcpus : cpus;
		if (!topo[2]) {
			topo[0] = topo[0] ? topo[0] : 1;
			topo[3] = topo[3] ? topo[3] : 1;
			topo[2] = maxcpus / (topo[0] * topo[1] * topo[3]);
		} else if (!topo[0]) {
			topo[3] = topo[3] ? topo[3] : 1;
			topo[0] = maxcpus / (topo[1] * topo[2] * topo[3]);
		}
		if (!topo[3])
			topo[3] = maxcpus / (topo[0] * topo[1] * topo[2]);
	}
	if (!product(topo, &prod))
		goto overflow;
	if (!maxcpus)
		maxcpus = prod;
	if (!cpus)
		cpus = maxcpus;
	if (prod != maxcpus || !prod) {
		config_set_err(
		    err, errlen,
		    "--smp: sockets (%llu) * dies (%llu) * cores (%llu) * threads (%llu) "
		    "= %llu differs from maxcpus %llu",
		    topo[0], topo[1], topo[2], topo[3], prod, maxcpus);
		return -EINVAL;
	}
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
		topology->sockets = (unsigned)topo[0];
		topology->dies = (unsigned)topo[1];
		topology->cores = (unsigned)topo[2];
		topology->threads = (unsigned)topo[3];
	}
	return 0;
overflow:
	config_set_err(err, errlen, "--smp: sockets*dies*cores*threads overflows in '%s'", s);
	return -EINVAL;
}
