/* SPDX-License-Identifier: MIT */
/*
 * The guest command line: space-separated words, each `name` or `name=value`. Values may
 * be double-quoted to hold spaces. Every word a subsystem reads is declared once with
 * CMDLINE_PARAM() (name, kind, allowed values); at boot cmdline_check() warns about each
 * word that cannot be parsed, is unknown or has a bad value; a bad value stops the boot
 * (every declared word changes behaviour, and a silent fallback would hide a typo). Words other kernels' tools add (console=, ...) are
 * declared CMDLINE_IGNORED.
 */
#ifndef PLUGVM_KERNEL_CMDLINE_H
#define PLUGVM_KERNEL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CMDLINE_MAX 4096

/* Keep a copy of `s` (truncated to CMDLINE_MAX - 1 bytes). */
void cmdline_init(const char *s);
const char *cmdline_get(void);

/* True if the word `name` appears bare or as name=<anything but 0/off/no>. */
bool cmdline_flag(const char *name);

/*
 * The value of the last `name=value` word: a pointer into the stored line and its length
 * (quotes stripped), or NULL if absent.
 */
const char *cmdline_value(const char *name, size_t *len);

/* The value parsed as an unsigned integer (decimal or 0x hex); `def` if absent or bad. */
uint64_t cmdline_uint(const char *name, uint64_t def);

/*
 * Every `name=value` word in order (a key may repeat, e.g. virtio_mmio.device=). Start
 * with *cursor = NULL; each call that returns true sets *value / *len to the next value
 * (quotes stripped, pointing into the stored line) and advances *cursor. False at the end.
 */
bool cmdline_next_value(const char *name, const char **cursor, const char **value, size_t *len);

/*
 * Linux's virtio_mmio.device= format, `<size>@<base>:<irq>[:<id>]`: size and base are
 * decimal or 0x hex, size may end in K, M or G (binary). The optional `:<id>` is accepted
 * and ignored. Returns false if anything is malformed, the size is 0 or base + size wraps.
 */
bool cmdline_parse_mmio_device(const char *v, size_t len, uint64_t *size, uint64_t *base,
			       unsigned *irq);

/* True if `value` (length len) is a comma-separated list that contains `item`. */
bool cmdline_list_has(const char *value, size_t len, const char *item);

/* ---- declared words and the boot-time check ------------------------------------------ */

enum cmdline_kind {
	CMDLINE_FLAG, /* bare, or =0/1/on/off/yes/no */
	CMDLINE_UINT, /* decimal or 0x hex in [min, max] */
	CMDLINE_ENUM, /* one of `choices`, "a|b|c" */
	CMDLINE_STRING, /* any non-empty value; its reader checks it further */
	CMDLINE_IGNORED, /* accepted and ignored (added by libvirt, QEMU or habit) */
};

struct cmdline_param {
	const char *name;
	enum cmdline_kind kind;
	uint64_t min, max; /* CMDLINE_UINT */
	const char *choices; /* CMDLINE_ENUM */
	bool repeat; /* may appear more than once (each occurrence counts) */
};

/* Declare a word in the `cmdline_params` section: CMDLINE_PARAM(hz, .name = "hz", ...). */
#define CMDLINE_PARAM(id, ...)                                 \
	static const struct cmdline_param __cmdline_param_##id \
	    __attribute__((used, section("cmdline_params"), aligned(8))) = { __VA_ARGS__ }

/* A problem cmdline_check() found: the whole word and a sentence saying what is wrong. */
typedef void (*cmdline_report_fn)(void *ctx, bool fatal, const char *word, size_t len,
				  const char *why);

/*
 * Check every word of the stored line against params[0..n): a word that cannot be parsed
 * (a quote or an odd character in its name, an unterminated quoted value, no name), an
 * unknown word, a missing or bad value, a word given twice that may not repeat. Calls
 * report() once per problem, in line order, with fatal set for a missing or bad value.
 * Returns the number of problems.
 */
unsigned cmdline_check(const struct cmdline_param *params, size_t n, cmdline_report_fn report,
		       void *ctx);

#endif
