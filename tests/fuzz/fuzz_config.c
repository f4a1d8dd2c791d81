// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: vmm/config.c. The input, split on NUL bytes, is argv[1..]; each piece
 * also goes to config_parse_mem() and config_parse_smp() directly. A successful parse must
 * respect the documented limits, and every refusal must carry a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_abi.h"
#include "vmm/config.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
