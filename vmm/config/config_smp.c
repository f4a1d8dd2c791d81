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

/* The counts as given; 0: not given. topo[] is sockets, dies, cores, threads. */
struct smp_counts {
	unsigned long long cpus, maxcpus, topo[4];
};

/*
 * The count an item's key names: none or "cpus" the CPU count, "maxcpus", or a topology
 * key. NULL with err set for an unknown key.
 */
static unsigned long long *smp_slot(struct smp_counts *c, const char *key, size_t klen,
				    const char *s, char *err, size_t errlen)
{
	static const char *const topo_keys[4] = { "sockets", "dies", "cores", "threads" };
	int i;

	if (!key || (klen == 4 && !strncmp(key, "cpus", 4)))
		return &c->cpus;
	if (klen == 7 && !strncmp(key, "maxcpus", 7))
		return &c->maxcpus;
	for (i = 0; i < 4; i++)
		if (klen == strlen(topo_keys[i]) && !strncmp(key, topo_keys[i], klen))
			return &c->topo[i];
	config_set_err(err, errlen, "--smp: unknown key '%.*s' in '%s'", (int)klen, key, s);
	return NULL;
}

/* One "[KEY=]N" item of s, `len` bytes at p, into c. 0 or -EINVAL with err set. */
static int smp_item(struct smp_counts *c, const char *p, size_t len, const char *s, char *err,
		    size_t errlen)
{
	const char *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : 0;
	const char *val = eq ? eq + 1 : p;
	size_t vlen = eq ? len - klen - 1 : len;
	unsigned long long v, *slot;

	if (config_parse_uint(val, vlen, PLUGVM_MAX_CPUS * 1000ull, &v) || v == 0) {
		config_set_err(err, errlen, "--smp: bad value '%.*s' in '%s'", (int)len, p, s);
		return -EINVAL;
	}
	slot = smp_slot(c, eq ? p : NULL, klen, s, err, errlen);
	if (!slot)
		return -EINVAL;
	if (*slot) {
		if (slot == &c->cpus)
			config_set_err(err, errlen, "--smp: CPU count given twice in '%s'", s);
		else
			config_set_err(err, errlen, "--smp: '%.*s' given twice in '%s'", (int)klen,
				       p, s);
		return -EINVAL;
	}
	*slot = v;
	return 0;
}

/* s's comma-separated items into c. 0 or -EINVAL with err set. */
static int smp_items(struct smp_counts *c, const char *s, char *err, size_t errlen)
{
	const char *p = s;

	if (!*s) {
		config_set_err(err, errlen, "--smp: empty value");
		return -EINVAL;
	}
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (smp_item(c, p, len, s, err, errlen))
			return -EINVAL;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				config_set_err(err, errlen, "--smp: trailing comma in '%s'", s);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/*
 * The missing counts, as QEMU 7.2's smp_parse() (machine-smp.c) infers them for a machine
 * of 6.2 or later: cores before sockets, threads last; dies default to 1. Without any
 * topology, maxcpus are the cores of one socket. One extension: a whole topology without
 * maxcpus makes maxcpus (QEMU refuses it). Fills every count of c and *prod, the topology's
 * product; false if that overflows.
 */
static bool smp_infer(struct smp_counts *c, unsigned long long *prod)
{
	unsigned long long *topo = c->topo;
	int k;

	if (!topo[1])
		topo[1] = 1;
	if (topo[0] && topo[2] && topo[3] && !c->maxcpus) {
		if (!product(topo, &c->maxcpus))
			return false;
	} else if (!c->cpus && !c->maxcpus) {
		for (k = 0; k < 4; k++)
			topo[k] = topo[k] ? topo[k] : 1;
	} else {
		c->maxcpus = c->maxcpus ? c->maxcpus : c->cpus;
		if (!topo[2]) {
			topo[0] = topo[0] ? topo[0] : 1;
			topo[3] = topo[3] ? topo[3] : 1;
			topo[2] = c->maxcpus / (topo[0] * topo[1] * topo[3]);
		} else if (!topo[0]) {
			topo[3] = topo[3] ? topo[3] : 1;
			topo[0] = c->maxcpus / (topo[1] * topo[2] * topo[3]);
		}
		if (!topo[3])
			topo[3] = c->maxcpus / (topo[0] * topo[1] * topo[2]);
	}
	if (!product(topo, prod))
		return false;
	if (!c->maxcpus)
		c->maxcpus = *prod;
	if (!c->cpus)
		c->cpus = c->maxcpus;
	return true;
}

/* The inferred counts agree and fit plugvm. 0 or -EINVAL with err set. */
static int smp_check(const struct smp_counts *c, unsigned long long prod, char *err, size_t errlen)
{
	const unsigned long long *topo = c->topo;

	if (prod != c->maxcpus || !prod) {
		config_set_err(err, errlen,
			       "--smp: sockets (%llu) * dies (%llu) * cores (%llu) * threads "
			       "(%llu) = %llu differs from maxcpus %llu",
			       topo[0], topo[1], topo[2], topo[3], prod, c->maxcpus);
		return -EINVAL;
	}
	if (c->cpus > c->maxcpus) {
		config_set_err(err, errlen, "--smp: %llu CPUs exceed maxcpus=%llu", c->cpus,
			       c->maxcpus);
		return -EINVAL;
	}
	if (c->maxcpus > PLUGVM_MAX_CPUS) {
		config_set_err(err, errlen, "--smp: %llu CPUs exceed plugvm's limit of %d",
			       c->maxcpus, PLUGVM_MAX_CPUS);
		return -EINVAL;
	}
	return 0;
}

int config_parse_smp_topo(const char *s, unsigned *nr_cpus, unsigned *max_cpus,
			  struct smp_topology *topology, char *err, size_t errlen)
{
	struct smp_counts c = { 0 };
	unsigned long long prod = 1;

	if (smp_items(&c, s, err, errlen))
		return -EINVAL;
	if (!smp_infer(&c, &prod)) {
		config_set_err(err, errlen, "--smp: sockets*dies*cores*threads overflows in '%s'",
			       s);
		return -EINVAL;
	}
	if (smp_check(&c, prod, err, errlen))
		return -EINVAL;
	*nr_cpus = (unsigned)c.cpus;
	*max_cpus = (unsigned)c.maxcpus;
	if (topology) {
		topology->sockets = (unsigned)c.topo[0];
		topology->dies = (unsigned)c.topo[1];
		topology->cores = (unsigned)c.topo[2];
		topology->threads = (unsigned)c.topo[3];
	}
	return 0;
}
