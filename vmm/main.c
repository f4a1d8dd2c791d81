// SPDX-License-Identifier: MIT
/*
 * plugvm: flags -> config -> machine_run(). The only place that exits. Run as plugvm-qemu
 * (build/plugvm-qemu links here), the flags are QEMU's (config/qemu_cli.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config/config.h"
#include "config/domain_xml.h"
#include "config/qemu_cli.h"
#include "console_io.h"
#include "daemon.h"
#include "exitcode.h"
#include "fds.h"
#include "jail.h"
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

/*
 * The descriptors the command line named are open (fd=N, -add-fd); an inherited QMP socket
 * is named by its address for query-chardev. 0, or an exit status (logged).
 */
static int check_kept_fds(struct vm_config *cfg)
{
	struct sockaddr_un addr;
	socklen_t len = sizeof(addr);
	unsigned i;

	for (i = 0; i < cfg->nr_keep_fds; i++)
		if (fcntl(cfg->keep_fds[i], F_GETFD) < 0) {
			log_error("fd=%d: not an open descriptor (the command line names it, the "
				  "caller did not pass it)",
				  cfg->keep_fds[i]);
			return PLUGVM_EXIT_USAGE;
		}
	if (cfg->qmp_fd < 0 || getsockname(cfg->qmp_fd, (struct sockaddr *)&addr, &len) < 0 ||
	    len <= offsetof(struct sockaddr_un, sun_path) || addr.sun_family != AF_UNIX)
		return 0;
	for (i = 0; i < cfg->nr_chardevs; i++) {
		char *fn;

		if (strcmp(cfg->chardevs[i].filename, "unix:,server=on"))
			continue;
		if (asprintf(&fn, "unix:%.*s,server=on",
			     (int)(len - offsetof(struct sockaddr_un, sun_path)),
			     addr.sun_path) < 0)
			return PLUGVM_EXIT_SETUP;
		free(cfg->chardevs[i].filename);
		cfg->chardevs[i].filename = fn;
	}
	return 0;
}

/*
 * --domain: the document first, then every flag again over it (the flags win), into *cfg.
 * 0, or an exit status (logged).
 */
static int apply_domain(struct vm_config *cfg, int argc, char **argv)
{
	struct vm_config doc;
	char err[512];
	int ret;

	config_defaults(&doc);
	ret = domain_xml_load(&doc, cfg->domain_path, err, sizeof(err));
	domain_xml_done(); /* the document is read: no libxml2 in the running VM */
	if (!ret && config_apply_args(&doc, argc, argv, err, sizeof(err)) != CONFIG_RUN)
		ret = -EINVAL;
	config_free(cfg);
	*cfg = doc;
	if (!ret && config_validate(cfg, err, sizeof(err)))
		ret = -EINVAL;
	if (!ret)
		return 0;
	log_error("%s", err);
	return ret == -ENOMEM ? PLUGVM_EXIT_SETUP : PLUGVM_EXIT_USAGE;
}

/*
 * A --domain document's files: its <serial type='file'> as stdout, its <kernel> there. 0, or
 * an exit status (logged).
 */
static int domain_files(struct vm_config *cfg)
{
	/* <serial type='file'>: the guest console's output (plugvm's stdout) goes there. */
	if (cfg->console_path && cfg->console == CONSOLE_STDIO) {
		int fd = open(cfg->console_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			log_error("%s: <serial type='file'> %s: %s", cfg->domain_path,
				  cfg->console_path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return PLUGVM_EXIT_USAGE;
		}
		close(fd);
	}
	/* A document's <kernel> that is not there: say where it came from and what to do. */
	if (access(cfg->kernel_path, R_OK)) {
		log_error("%s: <kernel>%s</kernel>: %s (give --kernel FILE, or print a copy naming "
			  "this tree's build/guest.elf with scripts/libvirt-domain.sh)",
			  cfg->domain_path, cfg->kernel_path, strerror(errno));
		return PLUGVM_EXIT_USAGE;
	}
	return 0;
}

/*
 * A start that failed: if the command line named a manager's listening monitor socket, the
 * manager's first connection is accepted and closed before plugvm exits (fds.h,
 * fds_hand_off_failure). Returns status.
 */
static int failed_start(int status, int argc, char **argv)
{
	fds_hand_off_failure(fds_manager_listener(argc, argv), FDS_MANAGER_WAIT_MS);
	return status;
}

int main(int argc, char **argv)
{
	static const enum log_level levels[] = { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
	bool as_qemu = qemu_cli_invoked(argv[0]);
	struct vm_config cfg;
	struct vm vm;
	char err[512];
	int status, ret;

	/* Pure: nothing is opened before the inherited descriptors are closed below. */
	switch (as_qemu ? qemu_cli_parse(&cfg, argc, argv, err, sizeof(err))
			: config_parse(&cfg, argc, argv, err, sizeof(err))) {
	case CONFIG_HELP:
		fputs(as_qemu ? qemu_cli_usage : config_usage, stdout);
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
		return failed_start(PLUGVM_EXIT_USAGE, argc, argv);
	case CONFIG_RUN:
		break;
	}
	/* Only stdio and the descriptors the command line names survive from the parent. */
	status = fds_close_inherited(cfg.keep_fds, cfg.nr_keep_fds);
	if (status)
		log_error("closing inherited descriptors: %s", strerror(-status));
	status = status ? PLUGVM_EXIT_SETUP : check_kept_fds(&cfg);
	log_set_timestamps(cfg.log_timestamps);
	log_set_level(levels[cfg.verbosity + 1]); /* -q quiets the document's warnings too */
	if (!status && cfg.domain_path)
		status = apply_domain(&cfg, argc, argv);
	if (status) {
		config_free(&cfg);
		return failed_start(status, argc, argv);
	}
	log_set_level(levels[cfg.verbosity + 1]);
	if (!cfg.machine_none && !cfg.kernel_path && !(cfg.kernel_path = default_kernel())) {
		log_error("out of memory");
		config_free(&cfg);
		return failed_start(PLUGVM_EXIT_SETUP, argc, argv);
	}

	status = cfg.domain_path ? domain_files(&cfg) : 0;
	if (status) {
		config_free(&cfg);
		return failed_start(status, argc, argv);
	}
	/*
	 * -daemonize: fork while this is the only thread, and before mlockall() (not inherited
	 * by a child); the parent exits once QMP listens.
	 */
	ret = daemon_fork(&cfg, &status);
	if (ret) {
		config_free(&cfg);
		return ret < 0 ? PLUGVM_EXIT_SETUP : status;
	}
	/*
	 * --jail: a new PID namespace is entered by forking before the VM exists (a KVM VM works
	 * only in the process that made it); this process then waits for the one that runs it.
	 */
	ret = cfg.jail_dir ? jail_fork(&cfg, &status) : 0;
	if (ret) {
		config_free(&cfg);
		return status;
	}
	/* <cputune>/<memoryBacking>: checked, then the main thread pinned before any other. */
	if (rt_tune_check(&cfg.rt, err, sizeof(err))) {
		log_error("%s: %s", cfg.domain_path ? cfg.domain_path : "-overcommit", err);
		config_free(&cfg);
		return failed_start(PLUGVM_EXIT_USAGE, argc, argv);
	}
	if (rt_tune_emulator(&cfg.rt)) {
		config_free(&cfg);
		return failed_start(PLUGVM_EXIT_SETUP, argc, argv);
	}
	if (!cfg.machine_none && console_io_open(&cfg)) {
		config_free(&cfg);
		return failed_start(PLUGVM_EXIT_SETUP, argc, argv);
	}
	status = machine_create(&vm, &cfg);
	if (status == 0)
		status = machine_run(&vm);
	else
		failed_start(status, argc, argv);
	machine_destroy(&vm);
	console_io_close(&cfg);
	daemon_exit();
	config_free(&cfg);
	return status;
}
