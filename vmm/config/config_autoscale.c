// SPDX-License-Identifier: MIT
/* --autoscale's SPEC (docs/autoscale.md) and the spec printed back. Pure. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void autoscale_defaults(struct autoscale_params *p)
{
	*p = (struct autoscale_params){
		.enabled = true,
		.period_ms = AUTOSCALE_DEFAULT_PERIOD_MS,
		.pressure_pct = AUTOSCALE_DEFAULT_PRESSURE,
		.pressure_ms = AUTOSCALE_DEFAULT_PRESSURE_MS,
		.idle_pct = AUTOSCALE_DEFAULT_IDLE,
		.idle_ms = AUTOSCALE_DEFAULT_IDLE_MS,
		.cooldown_ms = AUTOSCALE_DEFAULT_COOLDOWN_MS,
	};
}

/* "N" followed by ms or s: milliseconds in *ms, at most AUTOSCALE_TIME_MAX_MS. */
static int parse_time(const char *s, size_t len, unsigned *ms)
{
	unsigned long long v;
	unsigned mul;
	size_t n;

	if (len > 2 && !strncmp(s + len - 2, "ms", 2)) {
		n = len - 2;
		mul = 1;
	} else if (len > 1 && s[len - 1] == 's') {
		n = len - 1;
		mul = 1000;
	} else {
		return -EINVAL;
	}
	if (config_parse_uint(s, n, AUTOSCALE_TIME_MAX_MS / mul, &v))
		return -EINVAL;
	*ms = (unsigned)v * mul;
	return 0;
}

/* "P%" (whole percent, lo..hi) into *pct. */
static int parse_pct(const char *s, size_t len, unsigned lo, unsigned hi, unsigned *pct)
{
	unsigned long long v;

	if (len < 2 || s[len - 1] != '%' || config_parse_uint(s, len - 1, hi, &v) || v < lo)
		return -EINVAL;
	*pct = (unsigned)v;
	return 0;
}

enum key { K_MIN, K_MAX, K_PERIOD, K_PRESSURE, K_PRESSURE_TIME, K_IDLE, K_IDLE_TIME, K_COOLDOWN };

static const char *const keys[] = { "min",	     "max",  "period",	  "pressure",
				    "pressure-time", "idle", "idle-time", "cooldown" };

static int parse_item(struct autoscale_params *p, enum key k, const char *v, size_t len)
{
	unsigned long long n;

	switch (k) {
	case K_MIN:
	case K_MAX:
		if (config_parse_uint(v, len, 1024, &n) || !n)
			return -EINVAL;
		*(k == K_MIN ? &p->min : &p->max) = (unsigned)n;
		return 0;
	case K_PERIOD:
		if (parse_time(v, len, &p->period_ms) || p->period_ms < AUTOSCALE_PERIOD_MIN_MS)
			return -EINVAL;
		return 0;
	case K_PRESSURE:
		return parse_pct(v, len, 1, 100, &p->pressure_pct);
	case K_IDLE:
		return parse_pct(v, len, 0, 99, &p->idle_pct);
	case K_PRESSURE_TIME:
		return parse_time(v, len, &p->pressure_ms);
	case K_IDLE_TIME:
		return parse_time(v, len, &p->idle_ms);
	case K_COOLDOWN:
		return parse_time(v, len, &p->cooldown_ms);
	}
	return -EINVAL;
}

int config_parse_autoscale(struct autoscale_params *p, const char *spec, char *err, size_t errlen)
{
	bool seen[sizeof(keys) / sizeof(keys[0])] = { false };
	const char *s = spec;

	autoscale_defaults(p);
	if (!spec || !*spec) {
		config_set_err(err, errlen, "--autoscale: empty spec (on, off or KEY=VALUE,...)");
		return -EINVAL;
	}
	if (!strcmp(spec, "on"))
		return 0;
	if (!strcmp(spec, "off")) {
		*p = (struct autoscale_params){ 0 };
		return 0;
	}
	while (s) {
		const char *end = strchr(s, ','), *eq;
		size_t len = end ? (size_t)(end - s) : strlen(s), klen, i;

		eq = memchr(s, '=', len);
		if (!len || !eq) {
			config_set_err(err, errlen, "--autoscale: '%.*s' is not KEY=VALUE in '%s'",
				       (int)len, s, spec);
			return -EINVAL;
		}
		klen = (size_t)(eq - s);
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strlen(keys[i]) == klen && !strncmp(s, keys[i], klen))
				break;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			config_set_err(
			    err, errlen,
			    "--autoscale: unknown key '%.*s' (min, max, period, pressure, "
			    "pressure-time, idle, idle-time, cooldown)",
			    (int)klen, s);
			return -EINVAL;
		}
		if (seen[i]) {
			config_set_err(err, errlen, "--autoscale: '%s' given twice", keys[i]);
			return -EINVAL;
		}
		seen[i] = true;
		if (parse_item(p, (enum key)i, eq + 1, len - klen - 1)) {
			config_set_err(
			    err, errlen,
			    "--autoscale: bad %s value '%.*s' (min, max: 1-1024; times: a "
			    "whole number of ms or s, period >= 10ms, <= 600s; pressure "
			    "1-100%%, idle 0-99%%)",
			    keys[i], (int)(len - klen - 1), eq + 1);
			return -EINVAL;
		}
		s = end ? end + 1 : NULL;
	}
	if (p->min && p->max && p->min > p->max) {
		config_set_err(err, errlen, "--autoscale: min=%u exceeds max=%u", p->min, p->max);
		return -EINVAL;
	}
	return 0;
}

int config_format_autoscale(const struct autoscale_params *p, char *buf, size_t len)
{
	if (!p->enabled)
		return snprintf(buf, len, "off");
	return snprintf(buf, len,
			"min=%u,max=%u,period=%ums,pressure=%u%%,pressure-time=%ums,idle=%u%%,"
			"idle-time=%ums,cooldown=%ums",
			p->min, p->max, p->period_ms, p->pressure_pct, p->pressure_ms, p->idle_pct,
			p->idle_ms, p->cooldown_ms);
}
