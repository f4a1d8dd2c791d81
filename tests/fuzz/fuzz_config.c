// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/config/config.c. The input, split on NUL bytes, is argv[1..]; each piece
 * also goes to config_parse_mem(), config_parse_smp() and config_parse_chaos() directly. A
 * successful parse must respect the documented limits, and every refusal must carry a
 * message; a chaos spec's printed form must parse back to itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_abi.h"
#include "vmm/config/config.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The printed form (spaces for commas) of an accepted spec is a spec giving the same. */
static void check_chaos(const char *spec)
{
	const struct chaos_knob *k[3];
	struct chaos_config c, again;
	char err[256] = "", text[160], text2[160], *p;
	int i;

	if (config_parse_chaos(&c, spec, err, sizeof(err))) {
		if (!err[0])
			abort();
		return;
	}
	k[0] = &c.stall;
	k[1] = &c.irq;
	k[2] = &c.start;
	for (i = 0; i < 3; i++)
		if (k[i]->ppm > CONFIG_CHAOS_PPM || k[i]->max_us > CONFIG_CHAOS_MAX_US)
			abort();
	if ((size_t)config_format_chaos(&c, text, sizeof(text)) >= sizeof(text))
		abort();
	for (p = text; (p = strchr(p, ' ')); p++)
		*p = ',';
	if (config_parse_chaos(&again, text, err, sizeof(err)))
		abort();
	config_format_chaos(&again, text2, sizeof(text2));
	for (p = text2; (p = strchr(p, ' ')); p++)
		*p = ',';
	if (strcmp(text, text2) || again.seed != c.seed)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2], err[256];
	struct vm_config cfg;
	enum config_status st;
	size_t i, start = 0;
	int argc = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "plugvm";
	for (i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;

	for (i = 1; i < (size_t)argc; i++) {
		uint64_t mem;
		unsigned nr = 0, max = 0;

		check_chaos(argv[i]);

		if (config_parse_mem(argv[i], &mem) == 0 && mem == 0)
			abort();
		err[0] = '\0';
		if (config_parse_smp(argv[i], &nr, &max, err, sizeof(err)) == 0) {
			if (nr < 1 || nr > max || max > PLUGVM_MAX_CPUS)
				abort();
		} else if (!err[0]) {
			abort();
		}
	}

	err[0] = '\0';
	st = config_parse(&cfg, argc, argv, err, sizeof(err));
	if (st == CONFIG_RUN) {
		if (cfg.nr_cpus < 1 || cfg.nr_cpus > cfg.max_cpus ||
		    cfg.max_cpus > PLUGVM_MAX_CPUS || cfg.mem_bytes < CONFIG_MIN_MEM_BYTES ||
		    cfg.mem_bytes > CONFIG_MAX_MEM_BYTES || !cfg.cmdline ||
		    strlen(cfg.cmdline) > CONFIG_MAX_CMDLINE ||
		    (cfg.kernel_path && !cfg.kernel_path[0]) || cfg.verbosity < -1 ||
		    cfg.verbosity > 2)
			abort();
	} else if (st == CONFIG_ERROR && !err[0]) {
		abort();
	}
	config_free(&cfg);
	free(buf);
	return 0;
}
