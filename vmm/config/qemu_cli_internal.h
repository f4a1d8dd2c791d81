/* SPDX-License-Identifier: MIT */
/*
 * The QEMU front end's state while it reads one command line (qemu_cli.c, qemu_cli_dev.c):
 * what later options refer to by id (chardevs, fd sets, memory backends) is kept here and
 * resolved once the whole line is read (qemu_cli_finish()).
 */
#ifndef PLUGVM_VMM_QEMU_CLI_INTERNAL_H
#define PLUGVM_VMM_QEMU_CLI_INTERNAL_H

#include "qemu_cli.h"

#define QCLI_MAX_CHARDEVS 8
#define QCLI_MAX_FDSETS	  8
#define QCLI_MAX_FD	  (1 << 20)

enum qchardev_kind { QCHR_SOCKET, QCHR_FILE, QCHR_PTY, QCHR_STDIO, QCHR_NULL };

struct qchardev {
	char *id;
	enum qchardev_kind kind;
	char *path; /* socket path=, file path= (may be /dev/fdset/N) */
	int fd; /* socket fd=; else -1 */
	bool append; /* file append=on */
};

struct qcli {
	struct vm_config *cfg;
	char *err;
	size_t errlen;
	unsigned nr_fdsets;
	struct {
		unsigned set;
		int fd;
	} fdsets[QCLI_MAX_FDSETS];
	unsigned nr_chardevs;
	struct qchardev chardevs[QCLI_MAX_CHARDEVS];
	char *mon_chardev; /* -mon chardev=ID */
	char *serial_chardev; /* -device isa-serial chardev=ID or -serial's */
	bool have_serial;
	bool have_qmp; /* -qmp */
	bool nodefaults;
	bool have_m; /* -m given */
	bool have_kernel;
	char *backend_id; /* -object memory-backend-ram id= */
	uint64_t backend_bytes;
	char *machine_backend; /* -machine memory-backend= */
	/* -pidfile, -name, -uuid, -kernel, -append: into cfg at the end (the last one given) */
	char *pidfile, *name, *uuid, *kernel_path, *cmdline;
};

/* A message into q->err; returns CONFIG_ERROR. */
enum config_status qcli_fail(struct qcli *q, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* "on"/"off" (also yes/no, true/false as QEMU) into *out; -EINVAL otherwise. */
int qcli_bool(const char *val, bool *out);

/*
 * An fd number from the command line (fd=N, 3 or more) into *fd and cfg->keep_fds: kept open
 * at start (main.c checks it is open). CONFIG_RUN or CONFIG_ERROR naming opt.
 */
enum config_status qcli_keep_fd(struct qcli *q, const char *opt, const char *val, int *fd);

/* Split val into o (qopts_parse()); CONFIG_RUN or CONFIG_ERROR. */
enum config_status qcli_opts(struct qcli *q, struct qopts *o, const char *val, const char *implied,
			     const char *opt);

/* Every key of o taken: CONFIG_RUN; else CONFIG_ERROR naming the first one. o is freed. */
enum config_status qcli_done(struct qcli *q, struct qopts *o, const char *opt, const char *hint);

/* -device, -object, -chardev, -machine, -cpu (qemu_cli_dev.c). */
enum config_status qcli_device(struct qcli *q, const char *val);
enum config_status qcli_object(struct qcli *q, const char *val);
enum config_status qcli_chardev(struct qcli *q, const char *val);
enum config_status qcli_machine(struct qcli *q, const char *val);
enum config_status qcli_cpu(struct qcli *q, const char *val);
/* -serial's shorthand: a chardev "serial0" and the serial port on it. */
enum config_status qcli_serial(struct qcli *q, const char *val);

/* Why plugvm refuses option -name (and the domain XML element to remove), or NULL. */
const char *qcli_refusal(const char *name);

/* The chardev named id, or NULL. */
struct qchardev *qcli_find_chardev(struct qcli *q, const char *id);

/* Resolve what the options named by id (qemu_cli_dev.c). CONFIG_RUN or CONFIG_ERROR. */
enum config_status qcli_finish(struct qcli *q);

void qcli_free(struct qcli *q);

#endif
