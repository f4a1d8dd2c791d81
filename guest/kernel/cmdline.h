/* SPDX-License-Identifier: MIT */
/*
 * The guest command line: space-separated words, each `name` or `name=value`. Values may
 * be double-quoted to hold spaces. Unknown words are ignored (libvirt adds console=...).
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

#endif
