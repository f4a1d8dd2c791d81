/* SPDX-License-Identifier: MIT */
/*
 * Formatted output and the console list. printk() formats into a small buffer, then
 * writes the line to every registered console under one lock, so lines from different
 * CPUs never interleave. Callable from any context, including interrupts and panic.
 */
#ifndef PLUGVM_KERNEL_PRINTK_H
#define PLUGVM_KERNEL_PRINTK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "kernel/compiler.h"

struct console {
	const char *name;
	/* Write `n` bytes; called with the console lock held and interrupts off. */
	void (*write)(struct console *con, const char *s, size_t n);
	/*
	 * Optional (NULL: none): write `n` bytes with no lock and no interrupt, polling the
	 * device, from any context, NMIs included; the caller serializes. Used muted or not.
	 */
	void (*write_atomic)(struct console *con, const char *s, size_t n);
	bool enabled;
	struct console *next;
};

void console_register(struct console *con);

/*
 * CONSOLE_INITCALL(fn) in a console driver: fn (program the device, console_register())
 * runs in console_init(), which the arch's boot calls as soon as printk may print, before
 * anything can panic (Linux's console_initcall). The arch never names the driver.
 */
typedef void (*console_initcall_t)(void);
#define CONSOLE_INITCALL(fn)                                    \
	static const console_initcall_t __console_initcall_##fn \
	    __attribute__((used, section("console_initcalls"), aligned(8))) = fn
/* Run every CONSOLE_INITCALL, in link order. Boot CPU, once. */
void console_init(void);
/* Write raw bytes to the consoles (no formatting). */
void console_write(const char *s, size_t n);
/*
 * Write raw bytes to every console that has a write_atomic (the 16550), muted or not,
 * without the console lock: the NMI report's path (kernel/nmi.h). Any context, NMIs
 * included; the caller serializes, and a line printk() writes at the same moment to the
 * same device may be split by it.
 */
void console_write_atomic(const char *s, size_t n);
/*
 * console_write_atomic() between other CPUs' printk() lines: waits (100 ms at most) for the
 * console lock, so a report is not split by, nor splits, a line being printed elsewhere.
 * NMI context; the caller serializes NMI reports among themselves.
 */
void console_write_nmi(const char *s, size_t n);
/* Panic: let this CPU write even if another one holds the console lock forever. */
void console_force_unlock(void);
/*
 * A terminal's line ends, as Linux's serial and hvc consoles write them: copy s[0..n) into
 * dst[0..cap) with each '\n' written as "\r\n" and every other byte as it is, until s or dst
 * is used up. A "\r\n" is never split: it waits for the next call when one byte of dst is
 * left. Stores in *used how many bytes of s it took and returns the bytes written; with cap >= 2
 * and n > 0 both are non-zero. Any context (no lock, no state).
 */
size_t console_crlf(char *dst, size_t cap, const char *s, size_t n, size_t *used);

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
void printk(const char *fmt, ...) __printf(1, 2);
void vprintk(const char *fmt, va_list ap);

/* Quiet boot: only messages with verbose=1 on the command line. */
extern bool printk_verbose;
#define pr_debug(...)                        \
	do {                                 \
		if (printk_verbose)          \
			printk(__VA_ARGS__); \
	} while (0)
#define pr_warn(fmt, ...) printk("warning: " fmt, ##__VA_ARGS__)

__noreturn void panic(const char *fmt, ...) __printf(1, 2);

#endif
