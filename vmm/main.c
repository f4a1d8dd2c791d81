// SPDX-License-Identifier: MIT
/* plugvm: flags -> config -> machine_run(). The only place that exits. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "exitcode.h"
#include "log.h"
#include "machine.h"
#include "plugvm_abi.h"
#include "version.h"
#include "vm.h"

/* guest.elf beside the running binary, so build/plugvm finds build/guest.elf. */
static char *default_kernel(void)
{
	char exe[PATH_MAX], *dir, *path;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return strdup("guest.elf");
	exe[n] = '\0';
	dir = dirname(exe);
	if (asprintf(&path, "%s/guest.elf", dir) < 0)
		return NULL;
	return path;
}

int main(int argc, char **argv)
{
	static const enum log_level levels[] = { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
	struct vm_config cfg;
	struct vm vm;
	char err[512];
	int status;

	switch (config_parse(&cfg, argc, argv, err, sizeof(err))) {
	case CONFIG_HELP:
		fputs(config_usage, stdout);
		config_free(&cfg);
		return PLUGVM_EXIT_OK;
	case CONFIG_VERSION:
		printf("plugvm %s (guest ABI %d.%d)\n", PLUGVM_VERSION, PLUGVM_ABI_MAJOR,
		       PLUGVM_ABI_MINOR);
		config_free(&cfg);
		return PLUGVM_EXIT_OK;
	case CONFIG_ERROR:
		log_error("%s", err);
		config_free(&cfg);
		return PLUGVM_EXIT_USAGE;
	case CONFIG_RUN:
		break;
	}
	log_set_level(levels[cfg.verbosity + 1]);
	if (!cfg.kernel_path && !(cfg.kernel_path = default_kernel())) {
		log_error("out of memory");
		config_free(&cfg);
		return PLUGVM_EXIT_SETUP;
	}

	status = machine_create(&vm, &cfg);
	if (status == 0)
		status = machine_run(&vm);
	machine_destroy(&vm);
	config_free(&cfg);
	return status;
}
