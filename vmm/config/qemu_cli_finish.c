// SPDX-License-Identifier: MIT
/*
 * plugvm-qemu, once the whole line is read (qemu_cli_internal.h): what options named by id
 * (the monitor's chardev, the serial port's, the RAM backend, /dev/fdset/N) is resolved into
 * struct vm_config, and the rules between options are checked. Pure.
 */
#include "qemu_cli_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * gcc 12's -fanalyzer loses heap pointers stored through the vm_config reached from the
 * parser's state and reports them as leaked; test_qemu_cli under ASan (make check-san)
 * checks these paths for real leaks.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif

/* A cfg->chardevs entry (query-chardev's label and filename). */
static enum config_status add_cfg_chardev(struct qcli *q, const char *label, const char *filename)
{
	struct config_chardev *c;
	char *l, *f;

	if (q->cfg->nr_chardevs == CONFIG_MAX_CHARDEVS)
		return qcli_fail(q, "too many character devices");
	l = strdup(label);
	f = strdup(filename);
	if (!l || !f) {
		free(l);
		free(f);
		return qcli_fail(q, "out of memory");
	}
	c = &q->cfg->chardevs[q->cfg->nr_chardevs++];
	c->label = l;
	c->filename = f;
	return CONFIG_RUN;
}

/* The fd -add-fd put in the set a "/dev/fdset/N" path names; -1 with err set if none. */
static int fdset_fd(struct qcli *q, const char *path)
{
	unsigned long long n;
	unsigned i;

	if (config_parse_uint(path + 11, strlen(path + 11), 1u << 20, &n)) {
		qcli_fail(q, "%s: not /dev/fdset/N", path);
		return -1;
	}
	for (i = 0; i < q->nr_fdsets; i++)
		if (q->fdsets[i].set == n)
			return q->fdsets[i].fd;
	qcli_fail(q, "%s: no -add-fd set=%llu before", path, n);
	return -1;
}

/* The QMP monitor: -mon's chardev (a listening socket) or -qmp's path; none without either. */
static enum config_status finish_monitor(struct qcli *q)
{
	struct qchardev *c;
	char fn[CONFIG_MAX_QMP_PATH + 32];

	if (q->have_qmp)
		return CONFIG_RUN;
	if (!q->mon_chardev) {
		q->cfg->qmp_disabled = true; /* QEMU has no monitor either */
		return CONFIG_RUN;
	}
	c = qcli_find_chardev(q, q->mon_chardev);
	if (!c || c->kind != QCHR_SOCKET)
		return qcli_fail(q,
				 "-mon chardev=%s: needs a -chardev socket,id=%s,server=on,"
				 "wait=off",
				 q->mon_chardev, q->mon_chardev);
	if (c->fd >= 0) {
		/* main.c names the socket by its address once it checked the fd (getsockname). */
		q->cfg->qmp_fd = c->fd;
		snprintf(fn, sizeof(fn), "unix:,server=on");
	} else {
		char *path = strdup(c->path);

		if (!path)
			return qcli_fail(q, "out of memory");
		q->cfg->qmp_path = path;
		snprintf(fn, sizeof(fn), "unix:%s,server=on", c->path);
	}
	return add_cfg_chardev(q, c->id, fn);
}

/* The guest console: the serial port's chardev, or nothing (-nodefaults, -serial none). */
static enum config_status finish_serial(struct qcli *q)
{
	struct qchardev *c;

	if (!q->have_serial) {
		if (q->nodefaults)
			q->cfg->console = CONSOLE_NONE;
		return CONFIG_RUN;
	}
	if (!q->serial_chardev) {
		q->cfg->console = CONSOLE_NONE;
		return CONFIG_RUN;
	}
	c = qcli_find_chardev(q, q->serial_chardev);
	if (!c)
		return qcli_fail(q, "-device isa-serial: chardev '%s' is not defined",
				 q->serial_chardev);
	switch (c->kind) {
	case QCHR_SOCKET:
		return qcli_fail(q,
				 "-device isa-serial,chardev=%s: plugvm's serial port takes "
				 "file, pty, stdio or null: change <serial type='unix'>",
				 c->id);
	case QCHR_FILE:
		if (!strncmp(c->path, "/dev/fdset/", 11)) {
			q->cfg->console = CONSOLE_FD;
			q->cfg->console_fd = fdset_fd(q, c->path);
			if (q->cfg->console_fd < 0)
				return CONFIG_ERROR;
		} else {
			q->cfg->console = CONSOLE_FILE;
			q->cfg->console_truncate = !c->append;
			char *path = strdup(c->path);

			if (!path)
				return qcli_fail(q, "out of memory");
			q->cfg->console_path = path;
		}
		return add_cfg_chardev(q, c->id, "file");
	case QCHR_PTY:
		q->cfg->console = CONSOLE_PTY; /* the machine names it pty:/dev/pts/N */
		return add_cfg_chardev(q, c->id, "pty");
	case QCHR_STDIO:
		q->cfg->console = CONSOLE_STDIO;
		return add_cfg_chardev(q, c->id, "stdio");
	case QCHR_NULL:
		q->cfg->console = CONSOLE_NONE;
		return add_cfg_chardev(q, c->id, "null");
	}
	return CONFIG_ERROR;
}

/* -machine memory-backend=ID: the -object memory-backend-ram of that id, as big as -m. */
static enum config_status finish_memory(struct qcli *q)
{
	if (q->backend_id && (!q->machine_backend || strcmp(q->backend_id, q->machine_backend)))
		return qcli_fail(q,
				 "-object memory-backend-ram,id=%s: not the -machine "
				 "memory-backend (plugvm has one RAM backend)",
				 q->backend_id);
	if (!q->machine_backend)
		return CONFIG_RUN;
	if (!q->backend_id)
		return qcli_fail(q,
				 "-machine memory-backend=%s: no -object memory-backend-ram "
				 "with that id",
				 q->machine_backend);
	if (q->have_m && q->backend_bytes != q->cfg->mem_bytes)
		return qcli_fail(q,
				 "-object memory-backend-ram,id=%s: size %llu differs from -m "
				 "(%llu bytes)",
				 q->backend_id, (unsigned long long)q->backend_bytes,
				 (unsigned long long)q->cfg->mem_bytes);
	if (q->backend_bytes < CONFIG_MIN_MEM_BYTES || q->backend_bytes > CONFIG_MAX_MEM_BYTES)
		return qcli_fail(q,
				 "-object memory-backend-ram: size %llu is outside "
				 "%lluM..%lluG (<memory>)",
				 (unsigned long long)q->backend_bytes, CONFIG_MIN_MEM_BYTES >> 20,
				 CONFIG_MAX_MEM_BYTES >> 30);
	q->cfg->mem_bytes = q->backend_bytes;
	return CONFIG_RUN;
}

enum config_status qcli_finish(struct qcli *q)
{
	/* libvirt's probe: -machine none reads no kernel. */
	if (!q->cfg->machine_none && !q->have_kernel)
		return qcli_fail(q, "-kernel is required: plugvm boots a kernel directly (<os> "
				    "<kernel>), it has no firmware to boot disks");
	if (finish_monitor(q) || finish_serial(q) || finish_memory(q))
		return CONFIG_ERROR;
	q->cfg->pidfile = q->pidfile;
	q->cfg->name = q->name;
	q->cfg->uuid = q->uuid;
	q->cfg->kernel_path = q->kernel_path;
	q->cfg->cmdline = q->cmdline;
	q->pidfile = q->name = q->uuid = q->kernel_path = q->cmdline = NULL;
	return CONFIG_RUN;
}

void qcli_free(struct qcli *q)
{
	unsigned i;

	for (i = 0; i < q->nr_chardevs; i++) {
		free(q->chardevs[i].id);
		free(q->chardevs[i].path);
	}
	q->nr_chardevs = 0;
	free(q->mon_chardev);
	free(q->serial_chardev);
	free(q->backend_id);
	free(q->machine_backend);
	free(q->pidfile);
	free(q->name);
	free(q->uuid);
	free(q->kernel_path);
	free(q->cmdline);
	q->pidfile = q->name = q->uuid = q->kernel_path = q->cmdline = NULL;
	q->mon_chardev = q->serial_chardev = q->backend_id = q->machine_backend = NULL;
}
