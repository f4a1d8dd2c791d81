/* SPDX-License-Identifier: MIT */
/*
 * A console for host tests of guest code (kernel/printk.h): it keeps what the code under
 * test printed, NUL-terminated, and drops what does not fit. console_register(&c.con);
 * read c.buf; unit_console_clear() between cases.
 */
#ifndef PLUGVM_TESTS_GUEST_CONSOLE_H
#define PLUGVM_TESTS_GUEST_CONSOLE_H

#include <stddef.h>
#include <string.h>

#include "kernel/compiler.h"
#include "kernel/printk.h"

struct unit_console {
	struct console con;
	size_t len;
	char buf[65536];
};

static inline void unit_console_write(struct console *con, const char *s, size_t n)
{
	struct unit_console *c = container_of(con, struct unit_console, con);

	if (n > sizeof(c->buf) - 1 - c->len)
		n = sizeof(c->buf) - 1 - c->len;
	memcpy(c->buf + c->len, s, n);
	c->len += n;
	c->buf[c->len] = '\0';
}

#define UNIT_CONSOLE_INIT                                             \
	{                                                             \
		.con = {.name = "test", .write = unit_console_write } \
	}

static inline void unit_console_clear(struct unit_console *c)
{
	c->len = 0;
	c->buf[0] = '\0';
}

#endif
