// SPDX-License-Identifier: MIT
/*
 * -daemonize and -pidfile (daemon.h). The parent waits on a pipe for one byte: the child
 * writes it only after QMP listens and the pidfile is written, so a parent exiting 0 means
 * both hold; a child that fails closes the pipe unwritten and the parent exits with its
 * status.
 */
#include "daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcode.h"
#include "log.h"

static int ready_fd = -1; /* the child's end of the pipe, until daemon_ready() */
static int pid_dir_fd = -1; /* the pidfile's directory, once written */
static char *pid_name; /* its name there */

int daemon_fork(const struct vm_config *cfg, int *parent_status)
{
	int p[2], st;
	pid_t pid;
	char b;
	ssize_t n;

	if (!cfg->daemonize)
		return 0;
	if (pipe2(p, O_CLOEXEC) < 0) {
		log_error("-daemonize: pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		log_error("-daemonize: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[0]);
		ready_fd = p[1];
		setsid();
		return 0;
	}
	close(p[1]);
	do
		n = read(p[0], &b, 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == 1) {
		*parent_status = PLUGVM_EXIT_OK;
		return 1;
	}
	/* The child failed before it was ready: its status is ours. */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	*parent_status = WIFEXITED(st) && WEXITSTATUS(st) ? WEXITSTATUS(st) : PLUGVM_EXIT_SETUP;
	return 1;
}

static int write_pidfile(const char *path)
{
	char buf[32], *copy = strdup(path), *copy2 = strdup(path);
	int fd, len, ret = 0;

	if (!copy || !copy2) {
		free(copy);
		free(copy2);
		log_error("-pidfile: out of memory");
		return -ENOMEM;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (fd < 0 || write(fd, buf, (size_t)len) != len) {
		ret = -errno;
		log_error("-pidfile %s: %s", path, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	if (!ret) {
		pid_dir_fd = open(dirname(copy), O_PATH | O_DIRECTORY | O_CLOEXEC);
		pid_name = strdup(basename(copy2));
		if (pid_dir_fd < 0 || !pid_name) {
			ret = pid_dir_fd < 0 ? -errno : -ENOMEM;
			log_error("-pidfile %s: %s", path, strerror(-ret));
			unlink(path);
		}
	}
	free(copy);
	free(copy2);
	return ret;
}

int daemon_ready(const struct vm_config *cfg)
{
	int null, ret;

	if (cfg->pidfile && (ret = write_pidfile(cfg->pidfile)))
		return ret;
	if (ready_fd < 0)
		return 0;
	/*
	 * As QEMU: nothing of the caller's terminal or pipes stays open in the survivor, and it
	 * holds no directory busy (every path it uses was opened by now).
	 */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || chdir("/") < 0 || dup2(null, STDIN_FILENO) < 0 ||
	    dup2(null, STDOUT_FILENO) < 0 || dup2(null, STDERR_FILENO) < 0) {
		ret = -errno;
		log_error("-daemonize: /dev/null, chdir /: %s", strerror(-ret));
		return ret;
	}
	close(null);
	if (write(ready_fd, "", 1) != 1) {
		ret = -errno;
		return ret;
	}
	close(ready_fd);
	ready_fd = -1;
	return 0;
}

int daemon_pidfile_dir_fd(void)
{
	return pid_dir_fd;
}

void daemon_exit(void)
{
	if (pid_dir_fd < 0)
		return;
	unlinkat(pid_dir_fd, pid_name, 0);
	close(pid_dir_fd);
	pid_dir_fd = -1;
	free(pid_name);
	pid_name = NULL;
}
