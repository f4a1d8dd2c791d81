// SPDX-License-Identifier: MIT
/*
 * libFuzzer target: plugvm-qemu's command line (vmm/config/qemu_cli*.c, qemu_opts.c). The
 * input, split on NUL bytes, is argv[1..]; each piece also goes to qopts_parse() as a value
 * with and without an implied key. An accepted line must respect the documented limits and
 * name only descriptors it keeps; every refusal must carry a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plugvm_abi.h"
#include "vmm/config/qemu_cli.h"

#define MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_opts(const char *s, const char *implied)
{
	struct qopts q;
	char err[256] = "";
	unsigned i;

	if (qopts_parse(&q, s, implied, "-x", err, sizeof(err))) {
		if (!err[0] || q.n)
			abort();
		return;
	}
	if (q.n > QOPTS_MAX)
		abort();
	for (i = 0; i < q.n; i++)
		if (!q.o[i].key[0] || !q.o[i].val)
			abort();
	qopts_free(&q);
}

static bool kept(const struct vm_config *cfg, int fd)
{
	unsigned i;

	for (i = 0; i < cfg->nr_keep_fds; i++)
		if (cfg->keep_fds[i] == fd)
			return true;
	return false;
}

static void check_cfg(const struct vm_config *cfg)
{
	unsigned i;

	if (cfg->nr_cpus < 1 || cfg->nr_cpus > cfg->max_cpus || cfg->max_cpus > PLUGVM_MAX_CPUS ||
	    cfg->mem_bytes < CONFIG_MIN_MEM_BYTES || cfg->mem_bytes > CONFIG_MAX_MEM_BYTES ||
	    !cfg->cmdline || strlen(cfg->cmdline) > CONFIG_MAX_CMDLINE)
		abort();
	if (!cfg->machine_none && !cfg->kernel_path)
		abort();
	if (cfg->nr_keep_fds > sizeof(cfg->keep_fds) / sizeof(cfg->keep_fds[0]))
		abort();
	for (i = 0; i < cfg->nr_keep_fds; i++)
		if (cfg->keep_fds[i] < 3)
			abort();
	if (cfg->qmp_fd >= 0 && (!kept(cfg, cfg->qmp_fd) || cfg->qmp_path))
		abort();
	if ((cfg->console == CONSOLE_FD) != (cfg->console_fd >= 0))
		abort();
	if (cfg->console == CONSOLE_FD && !kept(cfg, cfg->console_fd))
		abort();
	if (cfg->console == CONSOLE_FILE && (!cfg->console_path || !cfg->console_path[0]))
		abort();
	if (cfg->nr_chardevs > CONFIG_MAX_CHARDEVS)
		abort();
	for (i = 0; i < cfg->nr_chardevs; i++)
		if (!cfg->chardevs[i].label || !cfg->chardevs[i].filename)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[MAX_ARGS + 2], err[512];
	struct vm_config cfg;
	enum config_status st;
	size_t i, start = 0;
	int argc = 0;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[argc++] = "plugvm-qemu";
	for (i = 0; i <= size && argc <= MAX_ARGS; i++) {
		if (buf[i] == '\0') {
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	for (i = 1; i < (size_t)argc; i++) {
		check_opts(argv[i], NULL);
		check_opts(argv[i], "driver");
	}
	err[0] = '\0';
	st = qemu_cli_parse(&cfg, argc, argv, err, sizeof(err));
	if (st == CONFIG_RUN)
		check_cfg(&cfg);
	else if (st == CONFIG_ERROR && !err[0])
		abort();
	config_free(&cfg);
	free(buf);
	return 0;
}
