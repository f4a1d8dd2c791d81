// SPDX-License-Identifier: MIT
/*
 * --chaos's SPEC (docs/reliability.md, "Host-side chaos"): seed=N and, per component, off,
 * TIME or P%:TIME; and the spec printed back, so that the seed line replays the run. Pure.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* "N" followed by us, ms or s: microseconds in *us, at most CONFIG_CHAOS_MAX_US. */
static int parse_chaos_time(const char *s, size_t len, uint32_t *us)
{
	/* "us" and "ms" before "s", which ends both. */
	static const struct {
		const char *suffix;
		uint32_t us;
	} units[] = { { "us", 1 }, { "ms", 1000 }, { "s", 1000000 } };
	unsigned long long v;
	size_t i, slen;
	int ret;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		slen = strlen(units[i].suffix);
		if (len > slen && !strncmp(s + len - slen, units[i].suffix, slen))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return -EINVAL;
	/* Garbage is garbage however large the number before it ("9999999ns"). */
	ret = config_parse_uint(s, len - slen, ULLONG_MAX, &v);
	if (ret == -EINVAL)
		return ret;
	ret = config_parse_uint(s, len - slen, CONFIG_CHAOS_MAX_US / units[i].us, &v);
	if (ret)
		return ret;
	*us = (uint32_t)v * units[i].us;
	return 0;
}

/* "P%" with P in 0..100 and at most four decimals: parts per million in *ppm. */
static int parse_chaos_percent(const char *s, size_t len, uint32_t *ppm)
{
	const char *dot = memchr(s, '.', len);
	size_t ilen = dot ? (size_t)(dot - s) : len - 1, flen = 0;
	unsigned long long whole, frac = 0;
	int ret;

	if (!len || s[len - 1] != '%')
		return -EINVAL;
	ret = config_parse_uint(s, ilen, 100, &whole);
	if (ret)
		return ret;
	if (dot) {
		flen = len - 1 - ilen - 1;
		if (!flen || flen > 4 || config_parse_uint(dot + 1, flen, 9999, &frac))
			return -EINVAL;
		for (; flen < 4; flen++)
			frac *= 10;
	}
	if (whole * 10000 + frac > CONFIG_CHAOS_PPM)
		return -ERANGE;
	*ppm = (uint32_t)(whole * 10000 + frac);
	return 0;
}

/* One component's value: off, 0, TIME or P%:TIME. Names the item in err. */
static int parse_chaos_knob(const char *key, const char *val, size_t len, struct chaos_knob *k,
			    char *err, size_t errlen)
{
	const char *colon = memchr(val, ':', len), *time = val;
	size_t tlen = len;
	int ret = 0;

	if ((len == 3 && !strncmp(val, "off", 3)) || (len == 1 && val[0] == '0')) {
		*k = (struct chaos_knob){ 0, 0 };
		return 0;
	}
	k->ppm = CONFIG_CHAOS_PPM;
	if (colon) {
		ret = parse_chaos_percent(val, (size_t)(colon - val), &k->ppm);
		if (ret == -ERANGE) {
			config_set_err(err, errlen, "--chaos: %s probability '%.*s' exceeds 100%%",
				       key, (int)(colon - val), val);
			return -EINVAL;
		}
		time = colon + 1;
		tlen = len - (size_t)(time - val);
	}
	if (!ret)
		ret = parse_chaos_time(time, tlen, &k->max_us);
	if (ret == -ERANGE) {
		config_set_err(err, errlen, "--chaos: %s time '%.*s' exceeds 1s", key, (int)tlen,
			       time);
		return -EINVAL;
	}
	if (ret) {
		config_set_err(
		    err, errlen,
		    "--chaos: bad %s value '%.*s' (off, TIME or P%%:TIME; TIME a whole number "
		    "of us, ms or s; P 0-100)",
		    key, (int)len, val);
		return -EINVAL;
	}
	return 0;
}

int config_parse_chaos(struct chaos_config *c, const char *spec, char *err, size_t errlen)
{
	static const char *const keys[] = { "seed", "stall", "irq", "start" };
	bool seen[4] = { false };
	const char *p = spec;

	*c = (struct chaos_config){
		.enabled = true,
		.stall = CONFIG_CHAOS_DEFAULT_STALL,
		.irq = CONFIG_CHAOS_DEFAULT_IRQ,
		.start = CONFIG_CHAOS_DEFAULT_START,
	};
	if (!spec)
		return 0;
	if (!*spec) {
		config_set_err(err, errlen, "--chaos: empty spec (plain --chaos for the defaults)");
		return -EINVAL;
	}
	while (p) {
		const char *end = strchr(p, ','), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p), klen, vlen, i;
		struct chaos_knob *knobs[] = { NULL, &c->stall, &c->irq, &c->start };

		if (!len) {
			config_set_err(err, errlen, "--chaos: empty item in '%s'", spec);
			return -EINVAL;
		}
		eq = memchr(p, '=', len);
		if (!eq) {
			config_set_err(err, errlen, "--chaos: '%.*s' is not KEY=VALUE in '%s'",
				       (int)len, p, spec);
			return -EINVAL;
		}
		klen = (size_t)(eq - p);
		vlen = len - klen - 1;
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (klen == strlen(keys[i]) && !strncmp(p, keys[i], klen))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			config_set_err(
			    err, errlen,
			    "--chaos: unknown key '%.*s' in '%s' (seed, stall, irq, start)",
			    (int)klen, p, spec);
			return -EINVAL;
		}
		if (seen[i]) {
			config_set_err(err, errlen, "--chaos: '%s' given twice in '%s'", keys[i],
				       spec);
			return -EINVAL;
		}
		seen[i] = true;
		if (knobs[i]) {
			if (parse_chaos_knob(keys[i], eq + 1, vlen, knobs[i], err, errlen))
				return -EINVAL;
		} else {
			unsigned long long seed;

			if (config_parse_uint(eq + 1, vlen, UINT64_MAX, &seed)) {
				config_set_err(
				    err, errlen,
				    "--chaos: bad seed '%.*s' (a decimal number below 2^64)",
				    (int)vlen, eq + 1);
				return -EINVAL;
			}
			c->seed = seed;
			c->seed_given = true;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int format_knob(char *buf, size_t len, const char *key, const struct chaos_knob *k)
{
	char frac[8] = "";
	int n;

	if (!k->ppm || !k->max_us)
		return snprintf(buf, len, " %s=off", key);
	if (k->ppm == CONFIG_CHAOS_PPM)
		return snprintf(buf, len, " %s=%uus", key, k->max_us);
	if (k->ppm % 10000) {
		n = snprintf(frac, sizeof(frac), ".%04u", k->ppm % 10000);
		while (n > 1 && frac[n - 1] == '0')
			frac[--n] = '\0';
	}
	return snprintf(buf, len, " %s=%u%s%%:%uus", key, k->ppm / 10000, frac, k->max_us);
}

int config_format_chaos(const struct chaos_config *c, char *buf, size_t len)
{
	const char *const keys[] = { "stall", "irq", "start" };
	const struct chaos_knob *knobs[] = { &c->stall, &c->irq, &c->start };
	int n = snprintf(buf, len, "seed=%llu", (unsigned long long)c->seed), i;

	for (i = 0; i < 3; i++) {
		size_t used = (size_t)n < len ? (size_t)n : len;

		n += format_knob(buf + used, len - used, keys[i], knobs[i]);
	}
	return n;
}
