/* SPDX-License-Identifier: MIT */
/*
 * plugvm-qemu: QEMU's command-line grammar, as libvirt's QEMU driver writes it, read into
 * struct vm_config. Pure (no I/O, no exit): descriptors the line names (fd=N, -add-fd) are
 * recorded in cfg->keep_fds, checked and used by main.c. Everything plugvm cannot do is
 * refused with a message naming the option and the domain XML element that asks for it.
 * docs: README, "plugvm-qemu"; tests: test_qemu_cli.c, test_qemu_cli.py.
 */
#ifndef PLUGVM_VMM_QEMU_CLI_H
#define PLUGVM_VMM_QEMU_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* The name plugvm answers to as QEMU (argv[0]'s last component). */
#define QEMU_CLI_NAME "plugvm-qemu"

/* The text -help prints. */
extern const char qemu_cli_usage[];

/* argv0's last path component is QEMU_CLI_NAME. */
bool qemu_cli_invoked(const char *argv0);

/*
 * Parse QEMU's argv into cfg (reset to QEMU's defaults first: on_reset ACTION_RESET, no
 * monitor unless -qmp/-mon), then config_validate() it. Returns CONFIG_RUN, CONFIG_HELP
 * (-h, -help), CONFIG_VERSION (-version) or CONFIG_ERROR with a one-line message in err.
 * The caller frees cfg with config_free() whatever the status.
 */
enum config_status qemu_cli_parse(struct vm_config *cfg, int argc, char *const argv[], char *err,
				  size_t errlen);

/* ---- QEMU's option values (qemu_opts.c) ---- */

#define QOPTS_MAX 32

/* One "key=value" of an option's value. used: a handler took it. */
struct qopt {
	char *key, *val;
	bool used;
};

/* An option's value split into its keys, in order. */
struct qopts {
	unsigned n;
	struct qopt o[QOPTS_MAX];
};

/*
 * Split s into q: QEMU's "first,key=value,..." (",," is a literal comma; the first item
 * without '=' is `implied`'s value when implied is not NULL; a bare key means "on") or, when
 * s starts with '{', a JSON object of strings, numbers and booleans (true/false as on/off).
 * `opt` names the option in errors. Returns 0, or -EINVAL/-ENOMEM with err set; q is then
 * empty. Free q with qopts_free() either way.
 */
int qopts_parse(struct qopts *q, const char *s, const char *implied, const char *opt, char *err,
		size_t errlen);

/* The last value of key (marking every key of that name used), or NULL. */
const char *qopts_take(struct qopts *q, const char *key);

/*
 * -EINVAL with err naming the first key no handler took ("-opt: unsupported key 'k'"), or 0.
 * `hint` ends the message when not NULL.
 */
int qopts_check_used(const struct qopts *q, const char *opt, const char *hint, char *err,
		     size_t errlen);

void qopts_free(struct qopts *q);

#endif
