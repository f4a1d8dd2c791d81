// SPDX-License-Identifier: MIT
/* plugvm: flags -> config -> machine_run(). The only place that exits. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config/config.h"
#include "config/domain_xml.h"
#include "exitcode.h"
#include "fds.h"
#include "log.h"
#include "machine.h"
#include "plugvm_abi.h"
#include "rt_tune.h"
#include "version.h"
#include "vm.h"

/*
 * The guest plugvm boots without --kernel: guest.elf beside the running binary (build/plugvm
 * finds build/guest.elf), else the installed one, ../lib/plugvm/guest.elf from it (`make
 * install`'s layout); neither there: the first, for the error to name.
 * tests/integration/test_install.py guards both.
 */
static char *default_kernel(void)
{
	char exe[PATH_MAX], *dir, *beside, *installed;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return strdup("guest.elf");
	exe[n] = '\0';
	dir = dirname(exe);
	if (asprintf(&beside, "%s/guest.elf", dir) < 0)
		return NULL;
	if (!access(beside, R_OK))
		return beside;
	if (asprintf(&installed, "%s/../lib/plugvm/guest.elf", dir) < 0)
		return beside;
	if (!access(installed, R_OK)) {
		free(beside);
		return installed;
	}
	free(installed);
	return beside;
}

int main(int argc, char **argv)
{
	static const enum log_level levels[] = { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
	struct vm_config cfg;
	struct vm vm;
	char err[512];
	int status;

	/*
	 * Before anything opens a descriptor: only stdio survives from the parent. No option
	 * names a descriptor yet; one that does (QEMU's fd=N, -add-fd) adds it to this list.
	 */
	status = fds_close_inherited(NULL, 0);
	if (status) {
		log_error("closing inherited descriptors: %s", strerror(-status));
		return PLUGVM_EXIT_SETUP;
	}
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
	log_set_level(levels[cfg.verbosity + 1]); /* -q quiets the document's warnings too */
	if (cfg.domain_path) {
		/* The document first, then every flag again over it: the flags win. */
		struct vm_config doc;
		int ret;

		config_defaults(&doc);
		ret = domain_xml_load(&doc, cfg.domain_path, err, sizeof(err));
		if (!ret && config_apply_args(&doc, argc, argv, err, sizeof(err)) != CONFIG_RUN)
			ret = -EINVAL;
		config_free(&cfg);
		cfg = doc;
		if (!ret && config_validate(&cfg, err, sizeof(err)))
			ret = -EINVAL;
		if (ret) {
			log_error("%s", err);
			config_free(&cfg);
			return ret == -ENOMEM ? PLUGVM_EXIT_SETUP : PLUGVM_EXIT_USAGE;
		}
	}
	log_set_level(levels[cfg.verbosity + 1]);
	if (!cfg.kernel_path && !(cfg.kernel_path = default_kernel())) {
		log_error("out of memory");
		config_free(&cfg);
		return PLUGVM_EXIT_SETUP;
	}

	/* <serial type='file'>: the guest console's output (plugvm's stdout) goes there. */
	if (cfg.console_path) {
		int fd = open(cfg.console_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			log_error("%s: <serial type='file'> %s: %s", cfg.domain_path,
				  cfg.console_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			config_free(&cfg);
			return PLUGVM_EXIT_USAGE;
		}
		close(fd);
	}
	/* A document's <kernel> that is not there: say where it came from and what to do. */
	if (cfg.domain_path && access(cfg.kernel_path, R_OK)) {
		log_error("%s: <kernel>%s</kernel>: %s (give --kernel FILE, or print a copy naming "
			  "this tree's build/guest.elf with scripts/libvirt-domain.sh)",
			  cfg.domain_path, cfg.kernel_path, strerror(errno));
		config_free(&cfg);
		return PLUGVM_EXIT_USAGE;
	}
	/* <cputune>/<memoryBacking>: checked, then the main thread pinned before any other. */
	if (rt_tune_check(&cfg.rt, err, sizeof(err))) {
		log_error("%s: %s", cfg.domain_path, err);
		config_free(&cfg);
		return PLUGVM_EXIT_USAGE;
	}
	if (rt_tune_emulator(&cfg.rt)) {
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
