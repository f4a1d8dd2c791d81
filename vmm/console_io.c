// SPDX-License-Identifier: MIT
/* The guest console's descriptors (console_io.h): one per kind of cfg->console. */
#include "console_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "log.h"

static int pty_slave = -1; /* held open: the master never sees a hang-up */
static bool own_out; /* console_fd is ours to close */

/* The "pty" chardev entry becomes "pty:NAME" (query-chardev's filename). */
static int name_pty(struct vm_config *cfg, const char *name)
{
	unsigned i;

	for (i = 0; i < cfg->nr_chardevs; i++) {
		char *fn;

		if (strcmp(cfg->chardevs[i].filename, "pty"))
			continue;
		if (asprintf(&fn, "pty:%s", name) < 0)
			return -ENOMEM;
		free(cfg->chardevs[i].filename);
		cfg->chardevs[i].filename = fn;
		log_error("char device redirected to %s (label %s)", name, cfg->chardevs[i].label);
		return 0;
	}
	log_error("char device redirected to %s", name);
	return 0;
}

static int open_pty(struct vm_config *cfg)
{
	char name[64];
	struct termios t;
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC), ret;

	if (m < 0 || grantpt(m) || unlockpt(m) || ptsname_r(m, name, sizeof(name)))
		goto fail;
	pty_slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (pty_slave < 0 || tcgetattr(pty_slave, &t))
		goto fail;
	cfmakeraw(&t); /* bytes as the guest wrote them, as QEMU's pty chardev */
	if (tcsetattr(pty_slave, TCSANOW, &t) || fcntl(m, F_SETFL, O_NONBLOCK))
		goto fail;
	ret = name_pty(cfg, name);
	if (ret) {
		log_error("pty: out of memory");
		close(m);
		return ret;
	}
	cfg->console_fd = m;
	cfg->console_in_fd = m;
	own_out = true;
	return 0;
fail:
	ret = -errno;
	log_error("pty console: %s", strerror(errno));
	if (m >= 0)
		close(m);
	if (pty_slave >= 0)
		close(pty_slave);
	pty_slave = -1;
	return ret;
}

int console_io_open(struct vm_config *cfg)
{
	int fd, flags = O_WRONLY | O_CREAT | O_CLOEXEC;

	cfg->console_in_fd = -1;
	switch (cfg->console) {
	case CONSOLE_STDIO:
		cfg->console_fd = STDOUT_FILENO;
		cfg->console_in_fd = STDIN_FILENO;
		return 0;
	case CONSOLE_FD: /* the inherited descriptor (main.c checked it is open) */
		return 0;
	case CONSOLE_PTY:
		return open_pty(cfg);
	case CONSOLE_FILE:
		flags |= cfg->console_truncate ? O_TRUNC : O_APPEND;
		fd = open(cfg->console_path, flags, 0644);
		break;
	case CONSOLE_NONE:
	default:
		fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
		break;
	}
	if (fd < 0) {
		log_error("serial console %s: %s",
			  cfg->console == CONSOLE_FILE ? cfg->console_path : "/dev/null",
			  strerror(errno));
		return -errno;
	}
	cfg->console_fd = fd;
	own_out = true;
	return 0;
}

void console_io_close(struct vm_config *cfg)
{
	if (own_out && cfg->console_fd >= 0)
		close(cfg->console_fd);
	own_out = false;
	if (pty_slave >= 0)
		close(pty_slave);
	pty_slave = -1;
}
